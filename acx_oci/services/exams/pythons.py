"""Which Python an exam's tests run on: the ones Debian gives us, narrowed by the repository's ``requires-python``,
its classifiers and the fix's date."""

from __future__ import annotations

import re

from acx_oci.envimage import DEFAULT_PYTHON, PYTHONS, RELEASED


def version_key(v: str) -> tuple[int, ...]:
    """A version string as numbers to compare (3.10 after 3.9)."""
    # at most 9 digits a part: int() of a repository's 5000-digit "3.999..." raises (Python's digit limit)
    return tuple(int(p[:9]) for p in re.findall(r"\d+", v)[:3]) or (0,)


def satisfies(python: str, requires: str | None) -> bool:
    """Whether Python ``X.Y`` (as X.Y.0 .. X.Y.99) meets a ``python_requires`` specifier set (unknown: yes)."""
    if not requires:
        return True
    for clause in (c.strip() for c in requires.split(",") if c.strip()):
        m = re.match(r"^(~=|===|==|!=|>=|<=|>|<)\s*([0-9][0-9.*]*)$", clause)
        if not m:
            continue
        op, ver = m.groups()
        lo, hi = (*version_key(python), 0), (*version_key(python), 99)
        want = version_key(ver.rstrip(".*"))
        if op in ("==", "===") and ver.endswith("*"):
            ok = version_key(python)[:len(want)] == want
        elif op in ("==", "==="):
            ok = lo[:len(want)] <= want <= hi[:len(want)]
        elif op == "!=":
            ok = not (ver.endswith("*") and version_key(python)[:len(want)] == want)
        elif op == ">=":
            ok = hi >= want
        elif op == ">":
            ok = hi > want
        elif op == "<=":
            ok = lo <= want
        elif op == "<":
            ok = lo < want
        else:  # ~=
            ok = hi >= want and version_key(python)[:len(want) - 1] == want[:len(want) - 1]
        if not ok:
            return False
    return True


def choose_python(requires: str | None, classifiers: list[str], date: str | None = None) -> str:
    """The Python to test with: one we can provide that ``requires`` allows, the classifiers do not exceed and
    that was released by the fix's ``date`` (a 2021 fix never ran on 3.13; bookworm's 3.11 first: the most
    shared image); when the classifiers stop below every one we have, the oldest ``requires`` allows (a 2016
    project naming 3.5 at most still imports ``collections.Mapping`` on 3.9, not on 3.11); else the default."""
    top = max((version_key(c) for c in classifiers), default=None)
    allowed = [p for p in PYTHONS if satisfies(p, requires)]
    if date is not None and (then := [p for p in allowed if RELEASED[p] <= date]) != allowed:
        allowed = then or [min(allowed or list(PYTHONS), key=version_key)]
    fits = [p for p in allowed if top is None or version_key(p) <= top]
    if DEFAULT_PYTHON in fits:
        return DEFAULT_PYTHON
    if fits:
        return max(fits, key=version_key)
    return min(allowed, key=version_key) if allowed and top is not None else DEFAULT_PYTHON
