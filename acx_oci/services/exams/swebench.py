"""``exam import --swebench``: SWE-bench instances (JSON Lines) against local clones, as exams.

Each line is an instance in SWE-bench's format: ``instance_id``, ``repo`` (``owner/name``), ``base_commit``,
``patch`` (the fix's source change), ``test_patch`` (its tests), ``FAIL_TO_PASS`` and ``PASS_TO_PASS``
(lists, or JSON strings of lists, as the published datasets carry them), optionally ``problem_statement``
(the prompt) and ``created_at`` (the exam's date). Two fields are ours, both optional patches against the
base: ``incomplete_patch`` (needed when ``patch`` has a single hunk) and ``lookalike_patch`` (the human's
near miss; without one the exam is imported, and certification refuses its grader stage until it has one).
The clone of ``owner/name`` is looked for in ``--repos`` as ``owner__name``, ``owner/name`` or ``name``.
Every instance is read before any exam is written: one bad instance imports nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acx_oci.errors import UsageError
from acx_oci.files import read_bytes
from acx_oci.jsonio import check_depth
from acx_oci.services.exams import gitrepo, pytestconf
from acx_oci.services.exams.importer import (
    ExamParts,
    apply_patch,
    binary_note,
    controls,
    environment,
    exam_id_for,
    hand_controls,
    is_test_path,
    overlay,
    support_paths,
)
from acx_oci.services.exams.testimports import imported_tests

MAX_INSTANCES_BYTES = 256 * 1024 * 1024
REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}/[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def read_instances(path: Path) -> list[dict[str, Any]]:
    """The instances of a JSON Lines file, each with SWE-bench's required fields; one line names a bad one."""
    instances: list[dict[str, Any]] = []
    seen: set[str] = set()
    text = read_bytes(path, "SWE-bench instances", MAX_INSTANCES_BYTES).decode("utf-8", "replace")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        check_depth(line, f"{path}:{n}")  # json.loads recurses: a line 100000 '[' deep was a RecursionError
        try:
            inst = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(inst, dict):
            raise UsageError(f"{path}:{n}: an instance is a JSON object")
        missing = [k for k in REQUIRED if k not in inst]
        if missing:
            raise UsageError(f"{path}:{n}: instance lacks {', '.join(missing)}")
        if not all(isinstance(inst[k], str) for k in REQUIRED[:5]):
            raise UsageError(f"{path}:{n}: instance_id, repo, base_commit, patch and test_patch are strings")
        if inst["instance_id"] in seen:
            raise UsageError(f"{path}:{n}: instance {inst['instance_id']} appears twice")
        seen.add(inst["instance_id"])
        instances.append(inst)
    if not instances:
        raise UsageError(f"{path}: no instances")
    return instances


def parse_test_ids(value: Any, what: str) -> list[str]:
    """``FAIL_TO_PASS``/``PASS_TO_PASS``: a list of test ids, or a JSON string holding one."""
    if isinstance(value, str):
        check_depth(value, what)
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise UsageError(f"{what}: not a list of test ids") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{what}: not a list of test ids")
    return list(value)


def clone_for(repos: Path, repo: str) -> Path:
    """The local clone of ``owner/name`` under ``repos``."""
    if not _REPO.match(repo) or ".." in repo:
        raise UsageError(f"repo {repo!r}: expected owner/name")
    owner, name = repo.split("/")
    for cand in (repos / f"{owner}__{name}", repos / owner / name, repos / name):
        if cand.is_dir() and not cand.is_symlink():
            return cand
    raise UsageError(f"repo {repo}: no clone in {repos} (looked for {owner}__{name}, {owner}/{name}, {name})")


def _patch(inst: dict[str, Any], key: str, what: str) -> bytes | None:
    value = inst.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{what}: {key} is a patch (a string)")
    return value.encode("utf-8")


def instance_parts(inst: dict[str, Any], repos: Path, *, requirements: str | None = None,
                   python: str | None = None) -> ExamParts:
    """One instance as exam parts: base tree, ``patch`` as the reference, ``test_patch``'s files hidden."""
    iid = str(inst["instance_id"])
    what = f"instance {iid}"
    clone = clone_for(repos, str(inst["repo"]))
    git = gitrepo.open_repo(clone)
    base_sha = gitrepo.resolve(git, str(inst["base_commit"]))
    binary: list[str] = []
    base = gitrepo.tree_files(git, base_sha, binary)
    fixed = overlay(base, apply_patch(base, inst["patch"].encode("utf-8"), f"{what}: patch"), f"{what}: patch")
    hidden = overlay(base, apply_patch(base, inst["test_patch"].encode("utf-8"), f"{what}: test_patch"),
                     f"{what}: test_patch")
    if not fixed:
        raise UsageError(f"{what}: patch changes nothing")
    if not hidden:
        raise UsageError(f"{what}: test_patch changes nothing: there are no hidden tests")
    both = sorted(set(fixed) & set(hidden))
    if both:
        raise UsageError(f"{what}: {both[0]} is changed by both patch and test_patch")
    f2p = parse_test_ids(inst["FAIL_TO_PASS"], f"{what}: FAIL_TO_PASS")
    p2p = parse_test_ids(inst["PASS_TO_PASS"], f"{what}: PASS_TO_PASS")
    outside = [t for t in f2p if "::" in t and t.split("::", 1)[0] not in hidden]
    if outside:
        raise UsageError(f"{what}: FAIL_TO_PASS test {outside[0]} is not in a file test_patch changes")
    # Graded: exactly the named tests of the hidden files (a PASS_TO_PASS test of a file the agent sees is
    # counted, not graded: a copy of it in the grader would be a grader file in the model-facing tree).
    graded = [t for t in f2p + p2p if t.split("::", 1)[0] in hidden]
    tested = {**base, **hidden}
    needed = [*support_paths(tested, hidden), *pytestconf.path_files(tested, pytestconf.settings(base)[0])]
    support = {p: tested[p] for p in needed if p not in hidden}
    support |= imported_tests(hidden, tested, is_test_path, lambda ps: {p: tested[p] for p in ps})
    parent = {p: base.get(p, "") for p in fixed}
    given_patches = {r: _patch(inst, f"{r}_patch", what) for r in ("incomplete", "lookalike")}
    incomplete, lookalike, notes = controls(base, parent, fixed, what=what,
                                            incomplete_patch=given_patches["incomplete"],
                                            lookalike_patch=given_patches["lookalike"])
    created = str(inst.get("created_at") or "")
    date = created[:10] if _DATE.match(created) else gitrepo.commit_date(git, base_sha)
    prompt = str(inst.get("problem_statement") or f"Resolve the issue in {inst['repo']} ({iid}).\n")
    # SWE-bench's fix is a patch on base_commit: the fix's parent is the base itself.
    source = {"kind": "swebench", "instanceId": iid, "repo": inst["repo"], "repository": str(clone.resolve()),
              "baseCommit": base_sha, "parentCommit": base_sha, "failToPass": f2p, "passToPass": p2p,
              "hiddenTests": sorted(hidden), "sourceFiles": sorted(fixed), "binaryLeftOut": sorted(binary),
              "graderSupport": sorted(support), "testIds": sorted(set(graded)) or None,
              "passToPassNotGraded": len(set(p2p) - set(graded)),
              "handControls": hand_controls(given_patches["incomplete"], given_patches["lookalike"]),
              **{k: str(inst[k]) for k in ("version", "environment_setup_commit") if inst.get(k) is not None}}
    notes += binary_note(binary)
    if source["passToPassNotGraded"]:
        notes.append(f"{source['passToPassNotGraded']} PASS_TO_PASS test(s) in files the agent sees are not graded")
    given = {k: str(inst[k]) for k in ("version", "environment_setup_commit") if inst.get(k) is not None}
    env = environment(base, fixed, requirements=requirements, python=python, swebench=given or None, date=date)
    return ExamParts(exam_id_for(iid), base, parent, fixed, hidden, prompt, date, source, lookalike, incomplete,
                     notes=notes, support=support, test_ids=sorted(set(graded)) or None, environment=env)


def swebench_parts(instances: Path, repos: Path, *, requirements: str | None = None,
                   python: str | None = None) -> list[ExamParts]:
    """Every instance of the file as exam parts (nothing written yet); the overrides apply to each."""
    return [instance_parts(inst, repos, requirements=requirements, python=python)
            for inst in read_instances(instances)]
