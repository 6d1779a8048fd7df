"""The incomplete and the lookalike probe: two wrong answers that fail for different reasons (grader controls).

A probe is a wrong answer the hidden tests must fail; two probes that fail the same way show only that the
tests tell a wrong answer from a right one. So the pair is chosen for the strongest reason the tests give:

1. ``failingTests`` — their failing test sets differ (the seed's reading);
2. ``failingAssertion`` — the same tests fail, but at a different line of a hidden test or with a different
   exception (:func:`acx_oci.sandbox.failures.failed_at`): the next-best reason, where the tests are one test;
3. none — the tests cannot tell any two candidates apart: the exam still certifies, under the relaxation
   :data:`NOT_DISTINGUISHED`, named in its record (``grader.relaxations``) and in every credential off it, so
   that a consumer can refuse it.

Candidates: a hand-made probe (``exam import --lookalike/--incomplete``) is always itself; a derived one is
the fix without its last hunk (``controls/incomplete`` when the import made it) or a mutant of the fix
(``controls/mutant-NN``), and only one the hidden tests *fail* is a probe — one they pass gives its place to
the next candidate before the exam is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from acx_oci.sandbox import GradeResult
from acx_oci.services.exams.harness import graded_all
from acx_oci.services.exams.source import ExamSource

BY_TESTS = "failingTests"
BY_ASSERTION = "failingAssertion"
#: The relaxation of an exam whose tests cannot tell its two probes apart (record and credential name it).
NOT_DISTINGUISHED = "controlsNotDistinguished"
ROLES = ("incomplete", "lookalike")
_RANK = {BY_TESTS: 2, BY_ASSERTION: 1, None: 0}
#: Grades a control's overlay of the workspace, naming it for the progress line: (overlay, name) -> grade.
Grade = Callable[[dict[str, str], str], GradeResult]


def places(r: GradeResult) -> dict[str, str]:
    """Each failing test's place (its hidden test line and exception)."""
    return {t.nodeid: t.where for t in r.tests if t.outcome in ("failed", "error")}


def distinction(a: GradeResult, b: GradeResult) -> str | None:
    """Why two failing grades differ: :data:`BY_TESTS`, :data:`BY_ASSERTION` or None (not told apart, or a
    grade that passed, has no failing test or an untrusted report)."""
    if a.passed or b.passed or not (a.report_ok and b.report_ok) or not a.failing() or not b.failing():
        return None
    if a.failing() != b.failing():
        return BY_TESTS
    return BY_ASSERTION if places(a) != places(b) else None


def hand_made(src: ExamSource) -> set[str]:
    """The roles whose probe a human gave (``source.json`` ``handControls``; an exam imported before it said:
    its lookalike when present, and both for an exam with no mutants)."""
    said = (src.source or {}).get("handControls")
    if isinstance(said, list):
        return {r for r in ROLES if r in said and r in src.controls}
    if not src.mutants:
        return {r for r in ROLES if r in src.controls}
    return {"lookalike"} & set(src.controls)


@dataclass(frozen=True)
class Pair:
    """The chosen probes (control names) and why the tests tell them apart (None: they do not)."""

    lookalike: str
    incomplete: str
    by: str | None


def best_pair(looks: list[str], incs: Iterator[str], grades: Callable[[str], GradeResult]) -> Pair | None:
    """The first pair (lookalike, incomplete), in candidate order, with the strongest reason; ``incs`` is read
    only as far as needed (its candidates are graded as they come). One candidate alone stands for both."""
    best: Pair | None = None
    seen: list[str] = []
    for inc in incs:
        seen.append(inc)
        for look in looks:
            if look == inc:
                continue
            by = distinction(grades(look), grades(inc))
            if best is None or _RANK[by] > _RANK[best.by]:
                best = Pair(look, inc, by)
            if by == BY_TESTS:
                return best
    if best is None and looks and seen:  # one candidate stands for both: nothing told apart
        return Pair(looks[0], seen[0], None)
    return best


def derive(src: ExamSource, grade: Grade, note: Callable[[str, int, int], None],
           lanes: int = 1) -> tuple[ExamSource, dict[str, Any]]:
    """The exam with its derived probes chosen (overlays put in place of ``controls/incomplete|lookalike``), and
    the facts: mutants made and killed (when the lookalike is derived: the test strength), what was chosen, and
    which derived probe the tests passed. An exam with no mutants, or both probes hand-made, is left as it is.
    ``lanes``: mutants graded at once when every one is graded."""
    muts, hand = src.mutants, hand_made(src)
    if not muts or hand >= set(ROLES):
        return src, {}
    grades: dict[str, GradeResult] = {}
    trees = {**muts, **{r: src.controls[r] for r in ROLES if r in src.controls}}

    def graded(name: str) -> GradeResult:
        if name not in grades:
            grades[name] = grade(trees[name], name)
        return grades[name]

    facts: dict[str, Any] = {}
    killed: list[str] = []
    if "lookalike" not in hand:  # every mutant graded: the mutation score stands in for a human's near miss
        grades.update(graded_all({name: functools.partial(grade, trees[name], name) for name in muts}, lanes,
                                 lambda k: note("mutants", k, len(muts))))
        killed = [m for m in muts if not grades[m].passed]
        facts.update(mutantsMade=len(muts), mutantsKilled=len(killed),
                     mutantsSurvived=[m for m in muts if m in grades and grades[m].passed])
    looks = ["lookalike"] if "lookalike" in hand else killed

    def incompletes() -> Iterator[str]:
        if "incomplete" in hand:
            yield "incomplete"
            return
        if "incomplete" in src.controls:
            if not graded("incomplete").passed:
                yield "incomplete"
            else:
                facts["incompleteReplaced"] = "the fix without its last hunk passes the hidden tests"
        for n, name in enumerate(muts, 1):
            if "lookalike" in hand:
                note("mutants", n, len(muts))
            if not graded(name).passed:
                yield name

    pair = best_pair(looks, incompletes(), graded)
    controls = {k: v for k, v in src.controls.items() if k not in ROLES or k in hand}
    if pair is None:  # no wrong answer the tests fail: the controls stage refuses the exam
        return replace(src, controls=controls), facts
    chosen = {role: name for role, name in (("lookalike", pair.lookalike), ("incomplete", pair.incomplete))
              if name in muts}
    facts["chosen"] = chosen
    controls.update({role: trees[name] for role, name in (("lookalike", pair.lookalike),
                                                           ("incomplete", pair.incomplete))})
    return replace(src, controls=controls), facts
