"""What an exam grades, derived as SWE-bench's validation derives it: the hidden tests run on the base and on the fix.

``FAIL_TO_PASS`` are the tests the fix turns from not passing to passing, ``PASS_TO_PASS`` those passing on
both. A test that fails on both, is skipped (another platform, another Python), xfails as upstream marks it,
or passes on the base but not with the fix is graded by neither, and named. An exam with no ``FAIL_TO_PASS``
test has nothing to solve (SWE-bench discards such instances). Explicit ids (``exam import --tests PATH::ID``,
a SWE-bench instance's own lists) win: nothing is derived for them. Pure: the runs are the caller's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from acx_oci.sandbox import GRADER_CONFIG, GradeResult

if TYPE_CHECKING:
    from acx_oci.services.exams.source import ExamSource

#: The most PASS_TO_PASS tests graded (the FAIL_TO_PASS tests' own classes first): a test file of thousands
#: (pyparsing's) graded some twenty times per certification would outrun the grade's deadline on a busy machine.
MAX_P2P = 200
#: The most ids a record names per kind of test graded by neither.
MAX_NAMED = 50
NOTHING_TO_SOLVE = ("nothing to solve: no hidden test fails on the base and passes with the fix "
                    "(SWE-bench's validation discards such a fix)")


def explicit_ids(hidden: Mapping[str, str]) -> list[str] | None:
    """The test ids the exam's grader config names (``--tests`` ids, a SWE-bench instance's lists), or None."""
    try:
        conf = json.loads(hidden.get(GRADER_CONFIG) or "{}")
    except ValueError:
        return None
    ids = conf.get("tests") if isinstance(conf, dict) else None
    return [str(t) for t in ids] if isinstance(ids, list) and ids else None


def with_ids(hidden: Mapping[str, str], ids: Iterable[str]) -> dict[str, str]:
    """The hidden tree with its grader config naming exactly ``ids`` (what certification then grades)."""
    conf = json.loads(hidden.get(GRADER_CONFIG) or "{}")
    conf["tests"] = sorted(ids)
    return {**hidden, GRADER_CONFIG: json.dumps(conf, indent=2, sort_keys=True) + "\n"}


def test_files(hidden: Mapping[str, str]) -> list[str]:
    """The hidden files pytest collects tests from (``test_*.py`` / ``*_test.py``; the config left out)."""
    return sorted(p for p in hidden if p.endswith(".py") and (
        (n := p.rsplit("/", 1)[-1]).startswith("test_") or n.endswith("_test.py")))


def hidden_id(nodeid: str, paths: Iterable[str]) -> str | None:
    """The hidden test id (``path::Class::name[params]``) of a junit node id (``tests.<path dotted>.Class::name``)."""
    head, _, name = nodeid.partition("::")
    dotted = head.removeprefix("tests.")
    for path in sorted(paths, key=len, reverse=True):
        mod = path.removesuffix(".py").replace("/", ".")
        if dotted == mod or dotted.startswith(mod + "."):
            return "::".join([path, *filter(None, dotted[len(mod) + 1:].split(".")), name])
    return None


def split_ids(before: dict[str, str], after: dict[str, str]) -> tuple[list[str], list[str]]:
    """(FAIL_TO_PASS, PASS_TO_PASS) from the outcomes of the base and the fix, by hidden test id. A parametrized
    test whose cases all pass on the fix is named by its function (the bare id names every case): its case ids
    may hold what no option parses or no second run repeats (humanize's "one, two"; marshmallow 78393d8's
    ``[16:53:22 2026-12-03]``, made from the clock at collection). It fails to pass when any case of the base
    did not pass; otherwise, each case is its own id, and one the base never had while it had the function's
    other cases (a case id that changed between the runs) is left out."""
    def fn(i: str) -> str:
        return i.split("[", 1)[0]

    cases: dict[str, list[str]] = {}
    for i in after:
        cases.setdefault(fn(i), []).append(i)
    had = {fn(i) for i in before}
    f2p: list[str] = []
    p2p: list[str] = []
    for f, ids in cases.items():
        base = [o for i, o in before.items() if fn(i) == f]
        if "[" in ids[0] and all(after[i] == "passed" for i in ids):
            (p2p if base and all(o == "passed" for o in base) else f2p).append(f)
            continue
        for i in ids:
            if after[i] != "passed" or re.search(r"[\r\n]", i) or (i not in before and f in had and "[" in i):
                continue
            (p2p if before.get(i) == "passed" else f2p).append(i)
    return sorted(f2p), sorted(p2p)


def _by_id(result: GradeResult, paths: list[str]) -> dict[str, str]:
    return {i: o for n, o in result.outcomes().items() if (i := hidden_id(n, paths))}


def derive(base: GradeResult, fix: GradeResult, paths: list[str]) -> dict[str, Any]:
    """The record's facts: ``failToPass``, ``passToPass`` (at most :data:`MAX_P2P`, the FAIL_TO_PASS tests'
    classes first) and ``notGraded`` (per kind: failing on both, skipped, xfail, passing only on the base)."""
    before, after = _by_id(base, paths), _by_id(fix, paths)
    f2p, p2p = split_ids(before, after)
    near = {i.rsplit("::", 1)[0] for i in f2p}
    kept = sorted(p2p, key=lambda i: (i.rsplit("::", 1)[0] not in near, i))[:MAX_P2P]
    graded = {i.split("[", 1)[0] for i in f2p + p2p} | set(f2p + p2p)
    left = {i: o for i, o in after.items() if i not in graded and i.split("[", 1)[0] not in graded}
    kinds: dict[str, list[str]] = {
        "failBoth": [i for i, o in left.items() if o in ("failed", "error") and before.get(i) != "passed"],
        "skipped": [i for i, o in left.items() if o == "skipped"],
        "xfail": [i for i, o in left.items() if o == "xfailed"],
        "passOnlyOnBase": [i for i, o in left.items() if o in ("failed", "error") and before.get(i) == "passed"]}
    facts: dict[str, Any] = {"derived": True, "failToPass": f2p, "passToPass": kept,
                             "notGraded": {k: sorted(v)[:MAX_NAMED] for k, v in kinds.items() if v}}
    if len(p2p) > len(kept):
        facts["passToPassLeftOut"] = len(p2p) - len(kept)
    return facts


def nothing_to_solve(facts: Mapping[str, Any]) -> str:
    """The refusal's words: nothing to solve, and what the tests did instead."""
    named = facts.get("notGraded") or {}
    said = ", ".join(f"{len(v)} {k}" for k, v in named.items())
    return NOTHING_TO_SOLVE + (f"; graded by neither: {said}" if said else "")


def selected(src: ExamSource, overlay: Callable[[dict[str, str], str], GradeResult], gold: Callable[[], GradeResult],
             select: Callable[[list[str]], ExamSource], note: Callable[[str, int, int], None],
             ) -> tuple[ExamSource, dict[str, Any] | None, tuple[GradeResult, GradeResult] | None]:
    """Certification's first step for an imported exam, unless it names its test ids: every hidden test on the base
    (``overlay({})``) and on the fix (``gold()``), then exactly FAIL_TO_PASS + PASS_TO_PASS graded from then on
    (``select``). Gives (the exam as graded, the facts or None, the two runs when nothing was selected: no
    FAIL_TO_PASS, and the gold stage refuses from them)."""
    if src.impossible or GRADER_CONFIG not in src.hidden or explicit_ids(src.hidden) is not None:
        return src, None, None  # a hand-made exam (no grader config) is graded on its hidden tests as written
    note("gold", 1, 1)
    base, fix = overlay({}, "the untouched tree"), gold()
    facts = derive(base, fix, test_files(src.hidden))
    if not facts["failToPass"]:
        return src, facts, (base, fix)
    return select(facts["failToPass"] + facts["passToPass"]), facts, None


def derived_ids(record: Mapping[str, Any] | None) -> list[str] | None:
    """The ids an exam's certification derived at its gold stage (FAIL_TO_PASS first), or None."""
    stages = (record or {}).get("stages")
    gold = stages.get("gold") if isinstance(stages, dict) else None
    tests = gold.get("tests") if isinstance(gold, dict) else None
    if not isinstance(tests, dict) or tests.get("derived") is not True:
        return None
    f2p, p2p = tests.get("failToPass"), tests.get("passToPass") or []
    if not isinstance(f2p, list) or not f2p or not isinstance(p2p, list):
        return None
    return [str(t) for t in (*f2p, *p2p)]


def nothing_to_grade(gold: Mapping[str, Any], *, impossible: bool) -> str | None:
    """Why the stages after gold need not run: the reference does not pass (or not every time), or no graded
    test fails without it. No control, probe or play can then say anything of the exam (attrs: a refused exam
    ran 550 s of mutants, probes and plays). A leak or a visible grader still runs them: the author learns
    the rest."""
    if impossible or gold["ok"]:
        return None
    if gold.get("referencePasses") is False or gold.get("referenceStable") is False:
        return "gold failed: the reference does not pass"
    if gold.get("nothingToSolve") or gold.get("untouchedFails") is False:
        return "gold failed: no graded test fails without the fix"
    return None


def fail_to_pass(source: Mapping[str, Any] | None) -> list[str]:
    """The graded ``FAIL_TO_PASS`` ids of an exam from a SWE-bench instance (its ``source.json``; none for
    other exams)."""
    src = source or {}
    graded = set(src.get("testIds") or ())
    return sorted(t for t in src.get("failToPass") or () if isinstance(t, str) and t in graded)
