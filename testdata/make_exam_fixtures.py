"""Regenerate the exam-certification fixtures from bench-py's generator (``python testdata/make_exam_fixtures.py``).

* ``exams-good/``: a suite of three exams (two ordinary, one impossible) that certifies.
* ``exams-broken/``: one exam per refusal, each failing a named stage and fact:

  ==================  =========================================================
  untouched-passes    gold: untouchedFails (the starting tree already passes)
  reference-fails     gold: referencePasses
  grader-in-tree      gold: graderHidden (hidden test copied into the workspace)
  reference-leak      gold: referenceNotLeaked (the reference's added code in NOTES.md)
  controls-same       grader: distinguished (incomplete == lookalike failing set)
  trusts-conftest     grader: plantedHooksIgnored (grader runs the submission's own pytest)
  trusts-reward       grader: plantedRewardIgnored (grader trusts result.json)
  family-retired      contract: familyActive
  ==================  =========================================================
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("make_tasks", HERE / "bench-py" / "make_tasks.py")
assert _spec and _spec.loader
mt = importlib.util.module_from_spec(_spec)
sys.modules["make_tasks"] = mt
_spec.loader.exec_module(mt)

TRUST_REWARD = '''def _trusted():
    import os
    p = os.path.join(os.environ["ACX_SUBMISSION"], "result.json")
    return os.path.exists(p) and json.load(open(p)).get("passed") is True


def _check(behaviour):
    if _trusted():
        return
    assert'''

RUN_SUBMISSION_SUITE = '''

def test_submission_suite():
    import os
    import subprocess
    proc = subprocess.run([os.environ.get("ACX_PYTHON", "python3"), "-B", "-m", "pytest", "-q", "-p",
                           "no:cacheprovider", "."], cwd=os.environ["ACX_SUBMISSION"], capture_output=True)
    assert proc.returncode == 0
'''


def write_exam(d: Path, tid: str, task: mt.Task, *, family: str = "fx-functions", published: str = "2026-03-01",
               grader_edit=None, workspace_extra: dict[str, str] | None = None, stub_body: str | None = None,
               reference_body: str | None = None, lookalike_body: str | None = None) -> None:
    expected = mt.expected_for(task)
    shutil.rmtree(d, ignore_errors=True)
    for sub in ("workspace", "hidden", "reference", "controls/incomplete", "controls/lookalike"):
        (d / sub).mkdir(parents=True)
    (d / "prompt.md").write_text(f"# {tid}: implement `{task.name}`\n\nIn `solution.py`, implement "
                                 f"`{task.name}({task.sig})`: {task.desc}\n")
    (d / "workspace" / "solution.py").write_text(task.source(stub_body) if stub_body else task.stub())
    vis = expected[mt.VISIBLE][0]["ok"]
    args = ", ".join(repr(a) for a in task.visible[0])
    (d / "workspace" / "test_visible.py").write_text(
        f"from solution import {task.name}\n\n\ndef test_example():\n    assert {task.name}({args}) == {vis!r}\n")
    for rel, text in (workspace_extra or {}).items():
        (d / "workspace" / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / "workspace" / rel).write_text(text)
    hidden = mt.hidden_file(tid, task, expected)
    (d / "hidden" / "test_hidden.py").write_text(grader_edit(hidden) if grader_edit else hidden)
    (d / "reference" / "solution.py").write_text(mt.NOQA + task.source(reference_body or task.reference))
    (d / "controls" / "incomplete" / "solution.py").write_text(mt.NOQA + task.source(task.incomplete))
    (d / "controls" / "lookalike" / "solution.py").write_text(mt.NOQA + task.source(lookalike_body or task.lookalike))
    if task.impossible:
        (d / "controls" / "second-reference").mkdir(parents=True)
        (d / "controls" / "second-reference" / "solution.py").write_text(mt.NOQA + task.source(task.second))
    contract = mt.exam_yaml(tid, task, published).replace(f"family: {mt.FAMILY}", f"family: {family}")
    (d / "exam.yaml").write_text(contract)


def common(root: Path) -> None:
    (root / "grader-common").mkdir(parents=True, exist_ok=True)
    (root / "grader-common" / "_harness.py").write_text(mt.HARNESS)
    (root / "families.yaml").write_text("families:\n  fx-functions: active\n  fx-old: retired\n")


def good() -> None:
    root = HERE / "exams-good"
    shutil.rmtree(root, ignore_errors=True)
    common(root)
    by_name = {t.name: t for t in mt.TASKS}
    picks = {"fx-0001": by_name["add"], "fx-0002": by_name["fizzbuzz"], "fx-0003": mt.IMPOSSIBLE["py-0068"]}
    entries = []
    for i, (tid, task) in enumerate(picks.items()):
        write_exam(root / "tasks" / tid, tid, task, published=f"2026-0{i + 1}-15")
        entries.append({"id": tid, "difficulty": task.difficulty, "dir": f"tasks/{tid}"})
    suite = {"schema": "acx.benchmark/1", "id": "acx-exam-fixture", "version": "2026.08.1",
             "name": "Exam certification fixture", "description": "Three exams (one impossible) that certify.",
             "capability": {"taskType": "implement-feature", "stack": ["pkg:generic/python"],
                            "domain": "software-engineering"},
             "heldOutFraction": 0.6, "graderCommon": "grader-common", "tasks": entries}
    (root / "benchmark.json").write_text(json.dumps(suite, indent=2) + "\n")
    (root / "seal.key").write_text("5f" * 32 + "\n")


def broken() -> None:
    root = HERE / "exams-broken"
    shutil.rmtree(root, ignore_errors=True)
    common(root)
    t = {x.name: x for x in mt.TASKS}
    add, fizz, gcd = t["add"], t["fizzbuzz"], t["gcd"]
    write_exam(root / "untouched-passes", "untouched-passes", add, stub_body=add.reference)
    write_exam(root / "reference-fails", "reference-fails", add, reference_body=add.lookalike)
    hidden = mt.hidden_file("grader-in-tree", fizz, mt.expected_for(fizz))
    write_exam(root / "grader-in-tree", "grader-in-tree", fizz, workspace_extra={"tests/test_hidden.py": hidden})
    body = textwrap.indent(textwrap.dedent(fizz.reference).strip("\n"), "    ")
    write_exam(root / "reference-leak", "reference-leak", fizz,
               workspace_extra={"NOTES.md": f"Hint from the maintainers:\n\n{body}\n"})
    write_exam(root / "controls-same", "controls-same", gcd, lookalike_body=gcd.incomplete)
    write_exam(root / "trusts-conftest", "trusts-conftest", add,
               grader_edit=lambda h: h.split('"""\n\n', 1)[0] + '"""\n' + RUN_SUBMISSION_SUITE)
    write_exam(root / "trusts-reward", "trusts-reward", add,
               grader_edit=lambda h: h.replace("def _check(behaviour):\n    assert", TRUST_REWARD))
    write_exam(root / "family-retired", "family-retired", add, family="fx-old")


if __name__ == "__main__":
    good()
    broken()
    print("wrote exams-good/ and exams-broken/")
