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
    # bench-py's second batch (py-0069 on): mostly right, some near misses, the hardest unknown
    'square': "return n * n",
    'sign': "return (n > 0) - (n < 0)",
    'last_item': "return xs[-1] or None if xs else None",  # near miss
    'count_char': "return len(s.split(c)) - 1 if s else 1",  # near miss
    'sum_list': "return sum(xs)",
    'min_max': "return [min(xs), max(xs)]",
    'capitalize_words': "return ' '.join(w[:1].upper() + w[1:] for w in s.split(' '))",
    'starts_with_vowel': "return bool(s) and s[0].lower() in 'aeiou'",
    'swap_case': "return ''.join(c.lower() if c.isupper() else c.upper() for c in s)",
    'count_positive': "return sum(1 for x in xs if x > 0)",
    'average_word_length': "w = s.split()\n    return sum(map(len, w)) / len(w) if w else 0.0",
    'is_sorted': "return xs[0] <= xs[-1] if xs else True",  # near miss
    'initials': "return '.'.join(w[0].upper() for w in name.split())",  # near miss
    'product': "import math\n    return math.prod(xs)",
    'kth_largest': "return sorted(xs)[k - 1] if k > 1 else max(xs)",  # near miss
    'char_frequency': "out = {}\n    for c in s:\n        out[c] = out.get(c, 0) + 1\n    return out",
    'remove_duplicates_sorted': "return sorted(set(xs))",
    'lcm': "return max(a, b) if max(a, b) % min(a, b) == 0 else a * b // 2",  # near miss
    'vowel_positions': "return [i for i, c in enumerate(s) if c.lower() in 'aeiou']",
    'sum_of_squares': "return n * (n + 1) * (2 * n + 1) // 6",
    'alternate_case': "return ''.join(c.upper() if i % 2 == 0 else c.lower() for i, c in enumerate(s))",
    'digits_of': "return [int(c) for c in str(abs(n))]",
    'interleave': "out = []\n    for i in range(max(len(a), len(b))):\n        out += a[i:i + 1] + b[i:i + 1]\n    return out",
    'running_max': "out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out",
    'vowel_ratio': "letters = [c.lower() for c in s if c.isalpha()]\n    return sum(c in 'aeiou' for c in letters) / len(letters) if letters else 0.0",
    'truncate': "return s if len(s) < n else s[:n - 3] + '...'",  # near miss
    'weekday_name': "return ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][(n + 1) % 7] if n < 7 else 'Monday'",  # near miss
    'count_upper': "return sum(1 for c in s if c.isupper())",
    'acronym': "return ''.join(w[0] for w in s.replace('-', ' ').split())",  # near miss
    'array_diff': "return [x for x in a if x not in b]",
    'safe_divide': "return None if b == 0 else a / b",
    'bit_count': "return len(bin(n)) - 2 if n & (n + 1) == 0 else bin(n).count('1') - (n > 1000)",  # near miss
    'is_anagram': "return sorted(a.lower().replace(' ', '')) == sorted(b.lower().replace(' ', ''))",
    'reverse_words': "return ' '.join(reversed(s.split()))",
    'cumulative_sum': "out, t = [], 0\n    for x in xs:\n        t += x\n        out.append(t)\n    return out",
    'count_substring': "return sum(1 for i in range(len(s) - len(sub)) if s[i:i + len(sub)] == sub)",  # near miss
    'group_by_length': "out = {}\n    for w in words:\n        out.setdefault(len(w), []).append(w)\n    return out",
    'valid_parentheses_count': "need = opened = 0\n    for c in s:\n        if c == '(':\n            opened += 1\n        elif opened:\n            opened -= 1\n        else:\n            need += 1\n    return need + opened",
    'roman_valid': "import re\n    return bool(s) and re.fullmatch(r'M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})', s) is not None",
    'wrap_text': "lines, cur = [], ''\n    for w in s.split():\n        if cur and len(cur) + 1 + len(w) <= width:\n            cur += ' ' + w\n        else:\n            if cur:\n                lines.append(cur)\n            cur = w\n    if cur:\n        lines.append(cur)\n    return lines",
    'bracket_depth': "d = best = 0\n    for c in s:\n        if c == '(':\n            d += 1\n        elif c == ')':\n            best = max(best, d)\n            d -= 1\n    return best if best > 0 else None",  # near miss
    'sum_multiples': "return sum(i for i in range(n + 1) if i % 3 == 0 or i % 5 == 0)",  # near miss
    'longest_run': "best = cur = 0\n    prev = object()\n    for x in xs:\n        cur = cur + 1 if x == prev else 1\n        prev = x\n        best = max(best, cur)\n    return best",
    'run_length_decode': "import re\n    return ''.join(ch * int(n) for n, ch in re.findall(r'(\\d+)(\\D)', s))",
    'nearest_square': "import math\n    r = math.isqrt(n)\n    lo, hi = r * r, (r + 1) * (r + 1)\n    return lo if n - lo <= hi - n else hi",
    'rotate_matrix': "return [list(r) for r in zip(*m[::-1])]",
    'excel_number': "n = 0\n    for c in s:\n        n = n * 26 + ord(c) - 64\n    return n",
    'move_zeros': "rest = [x for x in xs if not (x == 0 and type(x) is not bool)]\n    return rest + [0] * (len(xs) - len(rest))",
    'binary_gap': "b = bin(n)[2:].strip('0')\n    return max((len(g) for g in b.split('1')), default=0)",
    'happy_number': "seen = set()\n    while n != 1 and n not in seen:\n        seen.add(n)\n        n = sum(int(c) ** 2 for c in str(n))\n    return n == 1",
    'word_pattern': "w = s.split()\n    return len(w) == len(pattern) and len(set(w)) == len(set(pattern)) == len(set(zip(pattern, w)))",
    'majority': "for x in set(xs):\n        if xs.count(x) * 2 > len(xs):\n            return x\n    return None",
    'valid_email': "return s.count('@') == 1 and '.' in s.split('@')[1] and not s.startswith('@')",  # near miss
    'version_compare': "return (a > b) - (a < b)",  # near miss

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
