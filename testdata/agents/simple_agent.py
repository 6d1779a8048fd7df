#!/usr/bin/env python3
"""A small real agent for the bench-py suite.

It reads the task prompt ($ACX_PROMPT_FILE) and the stub in solution.py,
works out which function is asked for, and writes an implementation from
its own (limited, sometimes wrong) repertoire. Unknown functions get a
best-effort guess that usually fails. No network, no access to graders:
it only sees what any agent would see.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

REPERTOIRE = {
    "add": "return a + b",
    "is_even": "return n % 2 == 0",
    "reverse_string": "return s[::-1]",
    "max_of_list": "return max(xs) if xs else None",
    "count_vowels": "return sum(1 for c in s.lower() if c in 'aeiou')",
    "fizzbuzz": ("if n % 15 == 0:\n        return 'FizzBuzz'\n    if n % 3 == 0:\n        return 'Fizz'\n"
                 "    if n % 5 == 0:\n        return 'Buzz'\n    return str(n)"),
    "factorial": "import math\n    return math.factorial(n)",
    "sum_digits": "return sum(int(c) for c in str(abs(n)))",
    "celsius_to_fahrenheit": "return c * 9 / 5 + 32",
    # a plausible near miss: forgets to ignore case and punctuation
    "is_palindrome": "return s == s[::-1]",
    "fibonacci": "a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",
    # another near miss: negative inputs give a negative gcd
    "gcd": "while b:\n        a, b = b, a % b\n    return a",
    "is_prime": ("if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n        if n % i == 0:\n"
                 "            return False\n        i += 1\n    return True"),
    "flatten": ("out = []\n    for v in nested:\n        out.extend(flatten(v) if isinstance(v, list) else [v])\n"
                "    return out"),
    "binary_search": "return xs.index(target) if target in xs else -1",
    "chunk": "return [xs[i:i + n] for i in range(0, len(xs), n)]",
    "dedupe": "return list(dict.fromkeys(xs))",
    "second_largest": "u = sorted(set(xs))\n    return u[-2] if len(u) > 1 else None",
    "transpose": "return [list(r) for r in zip(*m)]",
    "balanced": ("pairs = {')': '(', ']': '[', '}': '{'}\n    st = []\n    for c in s:\n        if c in '([{':\n"
                 "            st.append(c)\n        elif c in pairs:\n            if not st or st.pop() != pairs[c]:\n"
                 "                return False\n    return not st"),
    "lcp": ("import os.path\n    return os.path.commonprefix(strs) if strs else ''"),
    "lis": "return len(set(xs))",  # wrong: counts distinct values
    "clamp": "return min(max(x, lo), hi)",
    "mean": "return sum(xs) / len(xs) if xs else None",
    "count_words": "return len(s.split())",
    "is_leap_year": "return y % 4 == 0 and y % 100 != 0",  # near miss: forgets the 400-year rule
    "title_case": "return s.title()",  # near miss: "don't" -> "Don'T"
    "longest_word": "return max(s.split(), key=len, default='')",
    "hamming": ("if len(a) != len(b):\n        raise ValueError('lengths differ')\n"
                "    return sum(x != y for x, y in zip(a, b))"),
    "digital_root": "while n > 9:\n        n = sum(int(c) for c in str(n))\n    return n",
    "merge_sorted": "return sorted(a + b)",
    "rotate_list": "if not xs:\n        return []\n    k %= len(xs)\n    return xs[-k:] + xs[:-k]",
    "pascal_row": ("row = [1]\n    for k in range(n):\n        row.append(row[-1] * (n - k) // (k + 1))\n"
                   "    return row"),
    "ordinal": "return str(n) + {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')",  # near miss: 11st, 12nd
    "camel_to_snake": "return ''.join('_' + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(s))",
    # near miss: to_base(0, b) gives ''
    "to_base": ("digits = '0123456789abcdefghijklmnopqrstuvwxyz'\n    sign, n, out = '-' if n < 0 else '', abs(n), ''\n"
                "    while n:\n        n, r = divmod(n, b)\n        out = digits[r] + out\n    return sign + out"),
    "matrix_multiply": "return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]",
    # near miss: int() accepts ' 4', '+4' and '04'
    "valid_ipv4": ("parts = s.split('.')\n    try:\n        return len(parts) == 4 and all(0 <= int(p) <= 255 "
                   "for p in parts)\n    except ValueError:\n        return False"),
    "flatten_dict": ("out = {}\n    for k, v in d.items():\n        if isinstance(v, dict):\n"
                     "            out.update({f'{k}.{k2}': v2 for k2, v2 in flatten_dict(v).items()})\n"
                     "        else:\n            out[k] = v\n    return out"),
    "normalize_path": ("parts = []\n    for seg in p.split('/'):\n        if seg == '..':\n"
                       "            parts = parts[:-1]\n        elif seg not in ('', '.'):\n"
                       "            parts.append(seg)\n    return '/' + '/'.join(parts)"),
}


def main() -> int:
    ws = Path(os.environ.get("ACX_WORKSPACE", "."))
    prompt = Path(os.environ["ACX_PROMPT_FILE"]).read_text() if "ACX_PROMPT_FILE" in os.environ else ""
    stub = (ws / "solution.py").read_text()
    m = re.search(r"^def (\w+)\(([^)]*)\):", stub, re.M)
    if not m:
        print("no function stub found", file=sys.stderr)
        return 1
    name, sig = m.group(1), m.group(2)
    body = REPERTOIRE.get(name)
    print(f"task asks for {name}({sig}); prompt has {len(prompt)} chars; "
          f"{'known' if body else 'unknown'} function")
    if body is None:
        body = "return None  # not sure how to do this one"
    (ws / "solution.py").write_text(f"def {name}({sig}):\n    {body}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
