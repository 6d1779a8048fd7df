"""Regenerate the bench-py suite: 40 tiny Python tasks with hidden pytest graders.

Each task is a function to implement in ``solution.py``. The hidden tests'
expected values are computed here from gold implementations, so the graders
are right by construction. Run from anywhere: ``python testdata/bench-py/make_tasks.py``.
Writes ``benchmark.json``, ``tasks/py-NNNN/`` and ``grader-common/``; keeps an
existing ``seal.key``.
"""

from __future__ import annotations

import heapq
import json
import os
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def g_add(a, b): return a + b
def g_is_even(n): return n % 2 == 0
def g_reverse_string(s): return s[::-1]
def g_max_of_list(xs): return max(xs) if xs else None
def g_count_vowels(s): return sum(1 for c in s.lower() if c in "aeiou")
def g_fizzbuzz(n): return "FizzBuzz" if n % 15 == 0 else "Fizz" if n % 3 == 0 else "Buzz" if n % 5 == 0 else str(n)
def g_factorial(n):
    r = 1
    for i in range(2, n + 1):
        r *= i
    return r
def g_sum_digits(n): return sum(int(c) for c in str(abs(n)))
def g_celsius_to_fahrenheit(c): return c * 9 / 5 + 32
def g_is_palindrome(s):
    t = [c.lower() for c in s if c.isalnum()]
    return t == t[::-1]
def g_fibonacci(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
def g_gcd(a, b):
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a
def g_is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True
def g_flatten(x):
    out = []
    for v in x:
        out.extend(g_flatten(v) if isinstance(v, list) else [v])
    return out
def g_word_count(text):
    out = {}
    for w in text.lower().split():
        w = w.strip(".,!?;:")
        if w:
            out[w] = out.get(w, 0) + 1
    return out
def g_roman_to_int(s):
    vals = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, c in enumerate(s):
        v = vals[c]
        total += -v if i + 1 < len(s) and vals[s[i + 1]] > v else v
    return total
def g_int_to_roman(n):
    pairs = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
             (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for v, s in pairs:
        while n >= v:
            out += s
            n -= v
    return out
def g_binary_search(xs, target):
    lo, hi = 0, len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] == target:
            return mid
        if xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
def g_chunk(xs, n): return [xs[i:i + n] for i in range(0, len(xs), n)]
def g_dedupe(xs):
    seen, out = set(), []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
def g_caesar(s, k):
    out = []
    for c in s:
        if c.isalpha() and c.isascii():
            base = ord("A") if c.isupper() else ord("a")
            out.append(chr((ord(c) - base + k) % 26 + base))
        else:
            out.append(c)
    return "".join(out)
def g_rle(s):
    out, i = "", 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out += f"{j - i}{s[i]}"
        i = j
    return out
def g_anagrams(a, b):
    def key(s):
        return sorted(c for c in s.lower() if c.isalnum())
    return key(a) == key(b)
def g_second_largest(xs):
    u = sorted(set(xs))
    return u[-2] if len(u) >= 2 else None
def g_transpose(m): return [list(r) for r in zip(*m, strict=True)] if m else []
def g_balanced(s):
    pairs, stack = {")": "(", "]": "[", "}": "{"}, []
    for c in s:
        if c in "([{":
            stack.append(c)
        elif c in pairs and (not stack or stack.pop() != pairs[c]):
            return False
    return not stack
def g_merge_intervals(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
def g_lcp(strs):
    if not strs:
        return ""
    p = strs[0]
    for s in strs[1:]:
        while not s.startswith(p):
            p = p[:-1]
    return p
def g_edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
def g_lis(xs):
    import bisect
    tails = []
    for x in xs:
        i = bisect.bisect_left(tails, x)
        tails[i:i + 1] = [x]
    return len(tails)
def g_topo(graph):
    indeg = {n: 0 for n in graph}
    for outs in graph.values():
        for m in outs:
            indeg[m] = indeg.get(m, 0) + 1
    ready = sorted(n for n, d in indeg.items() if d == 0)
    heapq.heapify(ready)
    out = []
    while ready:
        n = heapq.heappop(ready)
        out.append(n)
        for m in graph.get(n, []):
            indeg[m] -= 1
            if indeg[m] == 0:
                heapq.heappush(ready, m)
    return out if len(out) == len(indeg) else None
def g_rpn(tokens):
    st = []
    for t in tokens:
        if t in "+-*/" and len(t) == 1:
            b, a = st.pop(), st.pop()
            st.append(a + b if t == "+" else a - b if t == "-" else a * b if t == "*" else int(a / b))
        else:
            st.append(int(t))
    return st[-1]
def g_spiral(m):
    out = []
    m = [list(r) for r in m]
    while m:
        out += m.pop(0)
        m = [list(r) for r in zip(*m, strict=True)][::-1]
    return out
def g_knapsack(w, v, cap):
    best = [0] * (cap + 1)
    for wi, vi in zip(w, v, strict=True):
        for c in range(cap, wi - 1, -1):
            best[c] = max(best[c], best[c - wi] + vi)
    return best[cap]
def g_word_break(s, words):
    ok = [True] + [False] * len(s)
    for i in range(1, len(s) + 1):
        ok[i] = any(ok[j] and s[j:i] in words for j in range(i))
    return ok[-1]
def g_min_coins(coins, amount):
    inf = float("inf")
    best = [0] + [inf] * amount
    for a in range(1, amount + 1):
        best[a] = min((best[a - c] + 1 for c in coins if c <= a), default=inf)
    return -1 if best[amount] == inf else best[amount]
def g_dijkstra(n, edges, src):
    adj = {i: [] for i in range(n)}
    for a, b, w in edges:
        adj[a].append((b, w))
    dist = [None] * n
    pq = [(0, src)]
    while pq:
        d, u = heapq.heappop(pq)
        if dist[u] is not None:
            continue
        dist[u] = d
        for v, w in adj[u]:
            if dist[v] is None:
                heapq.heappush(pq, (d + w, v))
    return [-1 if d is None else d for d in dist]
def g_parse_duration(s):
    import re
    units = {"h": 3600, "m": 60, "s": 1}
    return sum(int(num) * units[u] for num, u in re.findall(r"(\d+)([hms])", s))
def g_lru_misses(cap, accesses):
    cache, misses = [], 0
    for a in accesses:
        if a in cache:
            cache.remove(a)
        else:
            misses += 1
            if len(cache) == cap:
                cache.pop(0)
        cache.append(a)
    return misses
def g_next_permutation(xs):
    xs = list(xs)
    i = len(xs) - 2
    while i >= 0 and xs[i] >= xs[i + 1]:
        i -= 1
    if i < 0:
        return sorted(xs)
    j = len(xs) - 1
    while xs[j] <= xs[i]:
        j -= 1
    xs[i], xs[j] = xs[j], xs[i]
    xs[i + 1:] = reversed(xs[i + 1:])
    return xs


# name, difficulty, gold, signature, description, visible cases, hidden cases
TASKS: list[tuple[str, float, Any, str, str, list[list[Any]], list[list[Any]]]] = [
    ("add", 15, g_add, "a, b", "Return a + b.", [[1, 2]], [[0, 0], [-5, 3], [10**12, 1]]),
    ("is_even", 15.5, g_is_even, "n", "Return True when n is even.", [[2]], [[0], [7], [-4], [-3]]),
    ("reverse_string", 16, g_reverse_string, "s", "Return s reversed.", [["abc"]], [[""], ["a"], ["racecar!"]]),
    ("max_of_list", 17, g_max_of_list, "xs", "Return the largest element, or None for an empty list.", [[[1, 3, 2]]],
     [[[]], [[-5, -2, -9]], [[7]]]),
    ("count_vowels", 18, g_count_vowels, "s", "Count the vowels a, e, i, o, u in s, ignoring case.", [["hello"]],
     [[""], ["AEIOU xyz"], ["rhythm"]]),
    ("fizzbuzz", 19, g_fizzbuzz, "n", "Return 'Fizz' for multiples of 3, 'Buzz' for 5, 'FizzBuzz' for 15, else str(n).",
     [[3]], [[5], [15], [7], [30]]),
    ("factorial", 19.5, g_factorial, "n", "Return n! for n >= 0.", [[4]], [[0], [1], [20]]),
    ("sum_digits", 20, g_sum_digits, "n", "Return the sum of the decimal digits of |n|.", [[123]],
     [[0], [-907], [99999]]),
    ("celsius_to_fahrenheit", 21, g_celsius_to_fahrenheit, "c", "Convert Celsius to Fahrenheit.", [[100]],
     [[0], [-40], [37.5]]),
    ("is_palindrome", 22, g_is_palindrome, "s",
     "Return True when s reads the same backwards, considering only letters and digits, ignoring case.",
     [["abba"]], [["A man, a plan, a canal: Panama"], ["ab"], [""], ["No 'x' in Nixon"]]),
    ("fibonacci", 23, g_fibonacci, "n", "Return the n-th Fibonacci number (fibonacci(0) == 0, fibonacci(1) == 1).",
     [[10]], [[0], [1], [2], [90]]),
    ("gcd", 24, g_gcd, "a, b", "Greatest common divisor of |a| and |b| (gcd(0, 0) == 0).", [[12, 18]],
     [[0, 0], [-12, 8], [17, 5], [0, 9]]),
    ("is_prime", 25, g_is_prime, "n", "Return True when n is prime.", [[7]], [[1], [2], [0], [-7], [7919], [7917]]),
    ("flatten", 26, g_flatten, "nested", "Flatten arbitrarily nested lists into one list.", [[[1, [2, 3]]]],
     [[[]], [[[[[]]], 1, [2, [3, [4]]]]], [["a", ["b"]]]]),
    ("word_count", 27, g_word_count, "text",
     "Count words (split on whitespace, lower-cased, stripped of .,!?;:) into a dict.", [["a b a"]],
     [["The cat. the CAT!"], [""], ["one, two; two: three three three?"]]),
    ("roman_to_int", 28, g_roman_to_int, "s", "Convert a Roman numeral to an int.", [["XIV"]],
     [["MCMXCIV"], ["IV"], ["MMXXVI"], ["XLIX"]]),
    ("int_to_roman", 29, g_int_to_roman, "n", "Convert 1 <= n <= 3999 to a Roman numeral.", [[14]],
     [[1994], [4], [3999], [49]]),
    ("binary_search", 30, g_binary_search, "xs, target", "Index of target in sorted xs, or -1.", [[[1, 3, 5], 3]],
     [[[], 1], [[1, 3, 5, 7], 7], [[1, 3, 5, 7], 4], [[2], 2]]),
    ("chunk", 30.5, g_chunk, "xs, n", "Split xs into lists of n items (the last may be shorter).", [[[1, 2, 3], 2]],
     [[[], 3], [[1, 2, 3, 4], 2], [[1], 5]]),
    ("dedupe", 31, g_dedupe, "xs", "Remove duplicates, keeping the first occurrence's order.", [[[1, 1, 2]]],
     [[[]], [[3, 1, 3, 2, 1]], [["b", "a", "b"]]]),
    ("caesar", 32, g_caesar, "s, k",
     "Shift ASCII letters by k places (wrapping, keeping case); leave other characters.", [["abc", 1]],
     [["xyz", 3], ["Hello, World!", 13], ["abc", -1], ["Zz", 52]]),
    ("rle", 33, g_rle, "s", "Run-length encode: 'aaab' -> '3a1b'.", [["aaab"]], [[""], ["abc"], ["zzzzzzzzzzzz"]]),
    ("anagrams", 34, g_anagrams, "a, b", "True when a and b are anagrams, ignoring case and non-alphanumerics.",
     [["listen", "silent"]], [["Dormitory", "dirty room!"], ["ab", "abb"], ["", ""]]),
    ("second_largest", 35, g_second_largest, "xs", "The second largest distinct value, or None.", [[[1, 2, 3]]],
     [[[5, 5, 5]], [[]], [[4, 4, 3, 1]], [[-1, -2]]]),
    ("transpose", 36, g_transpose, "m", "Transpose a rectangular matrix (list of lists); [] -> [].", [[[[1, 2]]]],
     [[[]], [[[1, 2, 3], [4, 5, 6]]], [[[1], [2]]]]),
    ("balanced", 37, g_balanced, "s", "True when (), [] and {} in s are balanced; other characters are ignored.",
     [["([])"]], [["(]"], ["([{}])x"], ["(("], ["}{"], [""]]),
    ("merge_intervals", 38, g_merge_intervals, "intervals",
     "Merge overlapping [start, end] intervals (touching ones merge); return them sorted.", [[[[1, 3], [2, 4]]]],
     [[[]], [[[5, 6], [1, 2], [2, 3]]], [[[1, 10], [2, 3], [11, 12]]]]),
    ("lcp", 39, g_lcp, "strs", "Longest common prefix of a list of strings ('' for an empty list).",
     [[["flower", "flow"]]], [[[]], [["dog", "racecar"]], [["same", "same"]], [["a"]]]),
    ("edit_distance", 40, g_edit_distance, "a, b", "Levenshtein distance between a and b.", [["kitten", "sitting"]],
     [["", "abc"], ["flaw", "lawn"], ["same", "same"], ["intention", "execution"]]),
    ("lis", 41, g_lis, "xs", "Length of the longest strictly increasing subsequence.", [[[10, 9, 2, 5, 3, 7]]],
     [[[]], [[5, 5, 5]], [[0, 8, 4, 12, 2, 10, 6, 14, 1, 9]]]),
    ("topo", 42, g_topo, "graph",
     "Topological order of a dict node -> successors, smallest available node first; None if cyclic.",
     [[{"a": ["b"], "b": []}]], [[{"c": ["a"], "b": ["a"], "a": []}], [{"a": ["b"], "b": ["a"]}], [{}]]),
    ("rpn", 43, g_rpn, "tokens", "Evaluate integer reverse Polish notation (+ - * /, division truncates to zero).",
     [[["2", "3", "+"]]], [[["4", "13", "5", "/", "+"]], [["3", "-4", "/"]], [["7"]]]),
    ("spiral", 44, g_spiral, "m", "Elements of a matrix in clockwise spiral order.", [[[[1, 2], [3, 4]]]],
     [[[]], [[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[1], [2], [3]]]]),
    ("knapsack", 44.5, g_knapsack, "weights, values, capacity", "Best total value of a 0/1 knapsack.",
     [[[1, 2], [10, 15], 2]], [[[], [], 5], [[1, 3, 4, 5], [1, 4, 5, 7], 7], [[5], [10], 4]]),
    ("word_break", 45, g_word_break, "s, words", "True when s splits into a sequence of words from the list.",
     [["leetcode", ["leet", "code"]]], [["catsandog", ["cats", "dog", "sand", "and", "cat"]], ["", ["a"]],
                                        ["aaaaaaa", ["aaa", "aaaa"]]]),
    ("min_coins", 46, g_min_coins, "coins, amount", "Fewest coins summing to amount, or -1.", [[[1, 2, 5], 11]],
     [[[2], 3], [[1], 0], [[186, 419, 83, 408], 6249]]),
    ("dijkstra", 46.5, g_dijkstra, "n, edges, src",
     "Shortest distances from src over directed weighted edges [a, b, w]; -1 when unreachable.",
     [[2, [[0, 1, 4]], 0]],
     [[3, [[0, 1, 1], [1, 2, 2], [0, 2, 5]], 0], [3, [], 1], [4, [[0, 1, 1], [1, 0, 1]], 2]]),
    ("parse_duration", 47, g_parse_duration, "s", "Seconds in a duration like '1h30m' or '45s' (h, m, s units).",
     [["1h"]], [["1h30m"], ["45s"], ["2h0m5s"], [""]]),
    ("lru_misses", 47.5, g_lru_misses, "capacity, accesses", "Cache misses of an LRU cache of the given capacity.",
     [[2, [1, 2, 1]]], [[1, [1, 1, 2, 1]], [2, [1, 2, 3, 1, 2, 3]], [3, [1, 2, 3, 1, 4, 5, 2]]]),
    ("next_permutation", 48, g_next_permutation, "xs",
     "The next lexicographic permutation of xs (the first one after the last).", [[[1, 2, 3]]],
     [[[3, 2, 1]], [[1, 1, 5]], [[1, 3, 2]], [[]]]),
]

HARNESS = '''"""Grader helper: call the submission in a separate, isolated Python process.

The submission never runs inside the pytest process, so it cannot patch the
test runner; it runs with -I (no PYTHONPATH, no user site, no cwd on sys.path)
in a copy of the submitted workspace.
"""

import json
import os
import subprocess

DRIVER = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("solution", "solution.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
req = json.loads(sys.stdin.read())
out = []
for args in req["calls"]:
    try:
        out.append({"ok": getattr(mod, req["func"])(*args)})
    except Exception as exc:
        out.append({"raised": type(exc).__name__})
sys.stdout.write("\\n@@ACX-RESULT@@" + json.dumps(out))
"""


def call_many(func, calls, timeout=10):
    """[{"ok": value} | {"raised": name}] per call, or an AssertionError when the run breaks."""
    proc = subprocess.run([os.environ.get("ACX_PYTHON", "python3"), "-I", "-B", "-c", DRIVER],
                          cwd=os.environ["ACX_SUBMISSION"], input=json.dumps({"func": func, "calls": calls}),
                          capture_output=True, text=True, timeout=timeout)
    marker = proc.stdout.rfind("@@ACX-RESULT@@")
    assert proc.returncode == 0 and marker >= 0, f"submission failed: {proc.stderr[-500:]}"
    return json.loads(proc.stdout[marker + len("@@ACX-RESULT@@"):])
'''


def expected(gold: Any, cases: list[list[Any]]) -> list[dict[str, Any]]:
    return [{"ok": json.loads(json.dumps(gold(*[json.loads(json.dumps(a)) for a in c])))} for c in cases]


def main() -> None:
    tasks_dir = HERE / "tasks"
    shutil.rmtree(tasks_dir, ignore_errors=True)
    common = HERE / "grader-common"
    common.mkdir(exist_ok=True)
    (common / "_harness.py").write_text(HARNESS)
    entries = []
    for i, (name, difficulty, gold, sig, desc, visible, hidden) in enumerate(TASKS, 1):
        tid = f"py-{i:04d}"
        d = tasks_dir / tid
        (d / "workspace").mkdir(parents=True)
        (d / "hidden").mkdir()
        (d / "prompt.md").write_text(
            f"# {tid}: implement `{name}`\n\nIn `solution.py`, implement `{name}({sig})`: {desc}\n\n"
            f"`test_visible.py` shows one example. Hidden tests check more cases.\n")
        (d / "workspace" / "solution.py").write_text(
            f'def {name}({sig}):\n    """{desc}"""\n    raise NotImplementedError\n')
        vis = expected(gold, visible)[0]["ok"]
        args = ", ".join(repr(a) for a in visible[0])
        op = "is" if isinstance(vis, bool) else "=="
        (d / "workspace" / "test_visible.py").write_text(
            f"from solution import {name}\n\n\ndef test_example():\n    assert {name}({args}) {op} {vis!r}\n")
        canary = hashlib_hex(f"acx-canary/{tid}")
        (d / "hidden" / "test_hidden.py").write_text(
            f'# ruff: noqa\n"""Hidden grader for {tid} (canary acx-canary-{canary[:24]})."""\n\nimport json\n\n'
            f"from _harness import call_many\n\n"
            f"VISIBLE = json.loads({json.dumps(json.dumps(visible))})\n"
            f"VISIBLE_EXPECTED = json.loads({json.dumps(json.dumps(expected(gold, visible)))})\n"
            f"HIDDEN = json.loads({json.dumps(json.dumps(hidden))})\n"
            f"HIDDEN_EXPECTED = json.loads({json.dumps(json.dumps(expected(gold, hidden)))})\n\n\n"
            f"def test_visible_example():\n    assert call_many({name!r}, VISIBLE) == VISIBLE_EXPECTED\n\n\n"
            f"def test_hidden_cases():\n    assert call_many({name!r}, HIDDEN) == HIDDEN_EXPECTED\n")
        (d / "task.json").write_text(json.dumps({"title": name, "timeLimitSeconds": 30,
                                                 "grader": {"expectedTests": 2}}, indent=2) + "\n")
        entries.append({"id": tid, "difficulty": difficulty, "dir": f"tasks/{tid}"})
    suite = {
        "schema": "acx.benchmark/1",
        "id": "acx-bench-py",
        "version": "2026.07.1",
        "name": "Tiny Python functions with hidden pytest graders",
        "description": "Test suite for the command solver: each task is one function in solution.py.",
        "capability": {"taskType": "implement-feature", "stack": ["pkg:generic/python", "pkg:pypi/pytest"],
                       "domain": "software-engineering"},
        "heldOutFraction": 0.6,
        "graderCommon": "grader-common",
        "tasks": entries,
    }
    (HERE / "benchmark.json").write_text(json.dumps(suite, indent=2) + "\n")
    key = HERE / "seal.key"
    if not key.exists():
        key.write_text(os.urandom(32).hex() + "\n")


def hashlib_hex(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


if __name__ == "__main__":
    main()
