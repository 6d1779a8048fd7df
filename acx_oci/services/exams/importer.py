"""``exam import``: an exam made from a repository's own fix (or a SWE-bench instance), in exam form.

What the model gets is the base commit's tree without the hidden tests; the reference is the fix's source
change (the changed source files as the fix leaves them, an overlay on the base); the hidden tests are the
test files the fix touches (or ``--tests``), each given a canary marker and a two-line prologue that puts
the submission first on ``sys.path`` (a repository's tests import its package). Controls: given patches,
else derived — the ``incomplete`` fix is the fix without its last source hunk when it has two or more, and
unless a human gave both, up to eight mutants of the fix's added lines are written as ``controls/mutant-NN/``;
certification takes the derived probes among those the tests kill (:mod:`controls`). ``source.json`` records
where the exam came from (``parentCommit`` = the fix's parent, ``handControls``: the probes a human gave).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci import safetree
from acx_oci.crypto import sha256_digest
from acx_oci.errors import AcxError, UsageError
from acx_oci.files import load_yaml_or_json_inside, read_text_tree
from acx_oci.model import ENV_FILE, SOURCE_FILE
from acx_oci.sandbox import GRADER_CONFIG, tree_digest
from acx_oci.services.exams import envspec, gitrepo, pytestconf
from acx_oci.services.exams.mutants import hunks, mutants
from acx_oci.services.exams.testimports import imported_tests

FAMILY = "imported"
MAX_PATCH_BYTES = 8 * 1024 * 1024
_ID = re.compile(r"[^A-Za-z0-9._-]+")
_ID_SEP = re.compile(r",\s*(?=[\w./-]+\.py(?:::|$))")  # a comma before the next PATH.py[::TEST], not in a case
_DIST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+!-]{0,63}$")
TEST_DIRS = {"tests", "test", "testing"}
#: The most test-support files (beside the hidden tests) that join the grader.
MAX_SUPPORT = 400
#: The submission goes *first* on sys.path, before the test imports its package: a copy of the package in the
#: grader's environment (site-packages, a stale module beside the tests) must not be what is graded (issue 37).
PROLOGUE = ('import os as _acx_os, sys as _acx_sys  # acx: the submission, first on sys.path\n'
            '_acx_sys.path[:0] = [_acx_os.path.join(_acx_os.environ.get("ACX_SUBMISSION", "/workspace"), _d) '
            'for _d in ("src", "")]\n')


@dataclass(frozen=True)
class ExamParts:
    """Everything an imported exam is written from; built by the repo and SWE-bench readers."""

    exam_id: str
    base: dict[str, str]  # the whole base tree
    parent: dict[str, str]  # the changed source files before the fix ("" where the fix adds one)
    fixed: dict[str, str]  # the changed source files after it
    hidden: dict[str, str]  # the hidden tests, as the fix leaves them
    prompt: str
    published_at: str
    source: dict[str, Any]
    lookalike: dict[str, str] | None = None  # a whole tree (base with a human's patch applied)
    incomplete: dict[str, str] | None = None
    difficulty: float = 20.0
    notes: list[str] = field(default_factory=list)
    support: dict[str, str] = field(default_factory=dict)  # the tests' conftest.py files and helper modules
    test_ids: list[str] | None = None  # exactly the tests graded (FAIL_TO_PASS + PASS_TO_PASS, or --tests ids)
    environment: dict[str, Any] | None = None  # the environment spec (env.json): Python and test dependencies


def is_test_path(path: str) -> bool:
    """A test file by the usual conventions: ``test_*.py``, ``*_test.py``, or under a tests directory."""
    parts = path.split("/")
    name = parts[-1]
    return (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py") or bool(
        TEST_DIRS & set(parts[:-1]))


def support_paths(names: Iterable[str], hidden: Iterable[str]) -> list[str]:
    """What the hidden tests need from their repository (of the tree's ``names``) to run as upstream runs them:
    the ``conftest.py`` of each directory above them, and every file beside them in their test directory or
    below it that is not a test module (helper modules, requests' ``tests/testserver/``, test applications,
    ``static/``, ``templates/``, data), at most :data:`MAX_SUPPORT` of them. They join the grader as the
    repository lays them out; the workspace keeps its own copies (the agent's are never read)."""
    names, hidden = set(names), set(hidden)
    dirs: set[str] = set()
    out: set[str] = set()
    for path in hidden:
        parts = path.split("/")[:-1]
        out.update(c for n in range(len(parts) + 1) if (c := "/".join([*parts[:n], "conftest.py"])) in names)
        if TEST_DIRS & set(parts):
            dirs.add("/".join(parts))
    beside = sorted(p for p in names if p not in hidden and not is_test_name(p.rsplit("/", 1)[-1])
                    and any(p.startswith(d + "/") for d in dirs))
    # nearest first: the files of the tests' own folders before those of deeper ones
    out.update(sorted(beside, key=lambda p: (p.count("/"), p))[:MAX_SUPPORT])
    return sorted(out - hidden)


def is_test_name(name: str) -> bool:
    """A pytest test module by name: ``test_*.py`` or ``*_test.py``."""
    return (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py")


def packages_of(source_paths: Iterable[str]) -> list[str]:
    """The top-level modules the fix changes (``src/`` layouts too): the grader checks they are the submission's."""
    out: set[str] = set()
    for path in source_paths:
        parts = path.split("/")
        if parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        if not path.endswith(".py") or parts[0] in ("setup.py", "conftest.py", "noxfile.py", "docs"):
            continue
        name = parts[0][:-3] if len(parts) == 1 else parts[0]
        if name.isidentifier():
            out.add(name)
    return sorted(out)


def grader_config(parts: ExamParts) -> dict[str, Any]:
    """The hidden ``acx-grader.json``: the packages under test, the graded test ids, and whether conftests load."""
    conf: dict[str, Any] = {"packages": packages_of(parts.fixed),
                            "conftest": any(p.rsplit("/", 1)[-1] == "conftest.py"  # one the fix changes is hidden
                                            for p in (*parts.support, *parts.hidden))}
    if parts.test_ids:
        conf["tests"] = sorted(parts.test_ids)
    dist = (parts.environment or {}).get("distribution")
    # metadata only, so that importlib.metadata.version(the project) answers in the grader (never installed)
    if isinstance(dist, dict) and all(_DIST.match(str(dist.get(k))) for k in ("name", "version")):
        conf["distributions"] = {str(dist["name"]): str(dist["version"])}
    ini, _ = pytestconf.settings(parts.base)
    if ini:  # the repository's own pytest settings (configuration only), passed as -o KEY=VALUE
        conf["ini"] = ini
    data = sorted(p for p in {**parts.support, **parts.hidden} if not p.endswith(".py"))
    if data:  # test data (templates, static files) the tests read while they run: it outlives collection
        conf["data"] = data
    helpers = sorted(p for p in parts.support if is_test_name(p.rsplit("/", 1)[-1]))
    if helpers:  # test modules the hidden tests import (testimports): support, never collected themselves
        conf["notCollected"] = helpers
    return conf


def exam_id_for(text: str) -> str:
    """A contract-valid id from free text (a directory name and a commit, an instance id)."""
    clean = _ID.sub("-", text).strip("-._")[:128] or "exam"
    return clean if clean[0].isalnum() else f"x{clean}"[:128]


def without_last_hunk(parent: dict[str, str], fixed: dict[str, str]) -> dict[str, str] | None:
    """The fix with its last source hunk reverted (Python files in path order: a changelog or docs hunk is no
    control), or None with fewer than two."""
    per_file = [(p, hunks(parent.get(p, ""), fixed[p])) for p in sorted(fixed) if p.endswith(".py")]
    if sum(len(h) for _, h in per_file) < 2:
        return None
    path, last = next((p, h[-1]) for p, h in reversed(per_file) if h)
    i1, i2, j1, j2 = last
    a, b = parent.get(path, "").splitlines(keepends=True), fixed[path].splitlines(keepends=True)
    return {**fixed, path: "".join(b[:j1] + a[i1:i2] + b[j2:])}


def apply_patch(tree: dict[str, str], patch: bytes, what: str) -> dict[str, str]:
    """``tree`` with a unified diff applied (``git apply`` outside any repository: no name may leave the tree,
    no link is followed, no binary or link is made); the result read back under a repository tree's refusals."""
    gitrepo.check_patch(patch, what, MAX_PATCH_BYTES)
    work = Path(tempfile.mkdtemp(prefix="acx-import-"))
    try:
        root = work / "t"
        root.mkdir()
        for rel, text in tree.items():
            safetree.write_inside(root, rel, text.encode("utf-8"))
        try:  # the ceiling keeps git from finding a repository around the scratch tree
            gitrepo.run_git(root, "apply", "--whitespace=nowarn", "-", stdin=patch,
                            env_extra={"GIT_CEILING_DIRECTORIES": str(work)})
        except UsageError as exc:
            raise UsageError(f"{what}: does not apply to the base ({str(exc).rsplit(': ', 1)[-1]})") from None
        try:
            return read_text_tree(work, "t", what)
        except AcxError as exc:
            raise UsageError(f"{what}: {exc}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def overlay(base: dict[str, str], after: dict[str, str], what: str) -> dict[str, str]:
    """The files ``after`` changes or adds relative to ``base``; a deletion cannot be an overlay: refused."""
    gone = sorted(set(base) - set(after))
    if gone:
        raise UsageError(f"{what}: deletes {gone[0]}; exam overlays can add and change files, not delete them")
    return {p: t for p, t in after.items() if base.get(p) != t}


def _marked(path: str, text: str, marker: str) -> str:
    """A hidden test with its canary marker (first line) and the prologue (after any __future__ import)."""
    lines = text.splitlines(keepends=True)
    future = [i for i, line in enumerate(lines) if line.startswith("from __future__ import")]
    at = future[-1] + 1 if future else 0
    body = "".join(lines[:at]) + PROLOGUE + "".join(lines[at:]) if path.endswith(".py") else text
    return f"# {marker} (hidden test marker: exam import)\n{body}" if path.endswith(".py") else body


def _canary(exam_id: str, path: str, source: dict[str, Any]) -> str:
    seed = json.dumps([exam_id, path, source.get("fixCommit") or source.get("baseCommit")], sort_keys=True)
    return "acx-canary-" + sha256_digest(seed.encode("utf-8")).split(":", 1)[1][:24]


def _write_tree(root: Path, rel: str, files: dict[str, str]) -> None:
    for path, text in sorted(files.items()):
        safetree.write_inside(root, f"{rel}/{path}", text.encode("utf-8"))


def replace_file(out: Path, name: str, data: bytes) -> None:
    """Write a suite file anew (a link there is replaced, never followed)."""
    tmp = f".{name}.tmp{os.getpid()}"
    safetree.write_inside(out, tmp, data)
    os.replace(out / tmp, out / name)


def _suite(out: Path) -> dict[str, Any]:
    """The suite ``out`` (made when absent): its ``benchmark.json``, with ``families.yaml`` and ``seal.key``."""
    out.mkdir(parents=True, exist_ok=True)
    doc = load_yaml_or_json_inside(out, "benchmark.json", "benchmark suite")
    if doc is None:
        doc = {"schema": "acx.benchmark/1", "id": exam_id_for(f"imported.{out.resolve().name}"), "version": "1",
               "name": f"Exams imported into {out.name}", "description": "Exams made by acx-oci exam import.",
               "capability": {"taskType": "implement-feature", "stack": ["pkg:generic/python"],
                              "domain": "software-engineering"},
               "heldOutFraction": 0.6, "tasks": []}
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise UsageError(f"{out / 'benchmark.json'}: not a benchmark suite with a tasks list")
    fam = load_yaml_or_json_inside(out, "families.yaml", "exam family registry") or {"families": {}}
    if not isinstance(fam, dict) or not isinstance(fam.get("families"), dict):
        raise UsageError(f"{out / 'families.yaml'}: expected {{families: {{name: active|retired}}}}")
    if fam["families"].get(FAMILY) is None:
        fam["families"][FAMILY] = "active"
        replace_file(out, "families.yaml", json.dumps(fam, indent=2).encode("utf-8") + b"\n")
    if not (out / "seal.key").exists():
        safetree.write_inside(out, "seal.key", os.urandom(32).hex().encode("ascii") + b"\n", 0o600)
    return doc


def grader_entry(parts: ExamParts) -> str:
    """The contract's grader: the first hidden ``test_*.py`` (the grader collects those; each gets a canary)."""
    entry = next((p for p in sorted(parts.hidden) if p.rsplit("/", 1)[-1].startswith("test_") and p.endswith(".py")),
                 None)
    if entry is None:
        raise UsageError(f"exam {parts.exam_id}: no hidden test is named test_*.py (the grader collects those, "
                         "and each carries a canary marker)")
    return entry


def parse_classification(value: str | None) -> dict[str, Any]:
    """``--classification``: ``public``, ``private`` or ``customer:NAME`` as the contract's object; none given is
    refused (the handling rules are stated up front: the import never chooses them for the author)."""
    if value is None:
        raise UsageError("exam import: state the exams' classification with --classification public, private or "
                         "customer:NAME (stated up front; private and customer exams are always held out)")
    if value == "public":
        return {"publiclyListable": True, "customerOwned": False}
    if value == "private":
        return {"publiclyListable": False, "customerOwned": False}
    if value.startswith("customer:") and 0 < len(value) - len("customer:") <= 200:
        return {"publiclyListable": False, "customerOwned": True, "customer": value[len("customer:"):]}
    raise UsageError(f"--classification {value[:60]!r}: expected public, private or customer:NAME")


def write_exam(parts: ExamParts, out: Path, classification: dict[str, Any]) -> Path:
    """Write the exam into the suite ``out`` as ``tasks/<id>/`` and list it in ``benchmark.json``, with the
    classification its author stated (always stated: the import refuses without one)."""
    doc = _suite(out)
    rel = f"tasks/{parts.exam_id}"
    if (out / rel).exists() or any(isinstance(t, dict) and t.get("id") == parts.exam_id for t in doc["tasks"]):
        raise UsageError(f"{out / rel}: exam {parts.exam_id} exists already; refusing to overwrite it")
    hidden = {p: _marked(p, t, _canary(parts.exam_id, p, parts.source))
              for p, t in {**parts.support, **parts.hidden}.items()}
    hidden[GRADER_CONFIG] = json.dumps(grader_config(parts), indent=2, sort_keys=True) + "\n"
    entry = grader_entry(parts)
    built = envspec.build_files(parts.environment, parts.base)
    workspace = {p: t for p, t in {**parts.base, **built}.items() if p not in parts.hidden}
    contract = {"id": parts.exam_id, "version": "1", "family": FAMILY, "grader": f"hidden/{entry}",
                "licence": str(parts.source.get("licence") or "unspecified (see the source repository)"),
                "classification": classification,
                "publishedAt": parts.published_at}
    root = out / rel
    _write_tree(out, f"{rel}/workspace", workspace)
    _write_tree(out, f"{rel}/hidden", hidden)
    _write_tree(out, f"{rel}/reference", parts.fixed)
    if parts.incomplete is not None:
        _write_tree(out, f"{rel}/controls/incomplete", parts.incomplete)
    if parts.lookalike is not None:
        _write_tree(out, f"{rel}/controls/lookalike", parts.lookalike)
    for name, tree in derived_mutants(parts).items():
        _write_tree(out, f"{rel}/controls/{name}", tree)
    safetree.write_inside(out, f"{rel}/prompt.md", parts.prompt.encode("utf-8"))
    if parts.environment is not None:
        safetree.write_inside(out, f"{rel}/{ENV_FILE}",
                              json.dumps(parts.environment, indent=2, sort_keys=True).encode("utf-8") + b"\n")
    safetree.write_inside(out, f"{rel}/exam.yaml", json.dumps(contract, indent=2).encode("utf-8") + b"\n")
    # The workspace as imported is upstream's own base: what it holds is context to the leak check (issue 37).
    source = {**parts.source, "baseTreeDigest": tree_digest(root / "workspace"),
              **({"buildWritten": sorted(built)} if built else {})}
    safetree.write_inside(out, f"{rel}/{SOURCE_FILE}",
                          json.dumps(source, indent=2, sort_keys=True).encode("utf-8") + b"\n")
    doc["tasks"].append({"id": parts.exam_id, "difficulty": parts.difficulty, "dir": rel})
    replace_file(out, "benchmark.json", json.dumps(doc, indent=2).encode("utf-8") + b"\n")
    return root


def controls(parts_base: dict[str, str], parent: dict[str, str], fixed: dict[str, str], *,
             incomplete_patch: bytes | None, lookalike_patch: bytes | None,
             what: str) -> tuple[dict[str, str] | None, dict[str, str] | None, list[str]]:
    """(incomplete, lookalike, notes): from the given patches, else derived — the fix without its last hunk
    (two or more hunks) for ``incomplete``; without a human's lookalike, mutants of the fix's added lines
    (:func:`derived_mutants`) stand in, and certification picks the controls among those the tests kill."""
    notes: list[str] = []
    if incomplete_patch is not None:
        incomplete: dict[str, str] | None = overlay(
            parts_base, apply_patch(parts_base, incomplete_patch, f"{what}: --incomplete"), f"{what}: --incomplete")
    else:
        incomplete = without_last_hunk(parent, fixed)
        if incomplete is not None:
            notes.append("incomplete: the fix without its last source hunk")
        elif not mutants(parent, fixed, 1):  # a mutant the tests kill stands in at certification
            raise UsageError(f"{what}: the fix has one source hunk and no mutable Python line, so no incomplete "
                             "fix can be derived; give one (--incomplete PATCH, against the base)")
    lookalike = None
    if lookalike_patch is not None:
        lookalike = overlay(parts_base, apply_patch(parts_base, lookalike_patch, f"{what}: --lookalike"),
                            f"{what}: --lookalike")
    return incomplete, lookalike, notes


def hand_controls(incomplete: bytes | None, lookalike: bytes | None) -> list[str]:
    """The probes a human gave (``source.json`` ``handControls``): certification never replaces those."""
    return [r for r, p in (("incomplete", incomplete), ("lookalike", lookalike)) if p is not None]


def derived_mutants(parts: ExamParts) -> dict[str, dict[str, str]]:
    """``{mutant-NN: overlay}`` unless a human gave both probes: certification takes a derived probe among them
    (and one in place of a derived probe the hidden tests pass)."""
    if {"incomplete", "lookalike"} <= set(parts.source.get("handControls") or ()):
        return {}
    return {f"mutant-{i:02d}": m.overlay for i, m in enumerate(mutants(parts.parent, parts.fixed), 1)}


def binary_note(binary: list[str]) -> list[str]:
    """The note naming base files left out of the model-facing tree because they are not text."""
    if not binary:
        return []
    more = f" and {len(binary) - 3} more" if len(binary) > 3 else ""
    return [f"left out of the workspace (not UTF-8 text, a link or over 1 MiB): {', '.join(sorted(binary)[:3])}{more}"]


def _blob(entries: dict[str, gitrepo.TreeBlob], path: str) -> str | None:
    return entries[path].sha if path in entries else None


def environment(base: dict[str, str], fixed: dict[str, str], *, requirements: str | None = None,
                python: str | None = None, swebench: dict[str, str] | None = None, date: str = "") -> dict[str, Any]:
    """The exam's environment spec: the base tree's and the fix's additions as of its ``date``, then overrides."""
    spec = envspec.derive_with_fix(base, fixed, own=packages_of(fixed), swebench=swebench, date=date or None)
    return envspec.override(spec, requirements=requirements, python=python, what="--requirements")


def from_repo(repo: Path, base: str, fix: str, *, tests: list[str] | None = None, prompt: str | None = None,
              incomplete_patch: bytes | None = None, lookalike_patch: bytes | None = None,
              exam_id: str | None = None, difficulty: float = 20.0, requirements: str | None = None,
              python: str | None = None) -> ExamParts:
    """The exam parts from ``repo``: base tree, the fix's source change and tests, parent = ``FIX^``."""
    git = gitrepo.open_repo(repo)
    base_sha, fix_sha = gitrepo.resolve(git, base), gitrepo.resolve(git, fix)
    parent_sha = gitrepo.resolve(git, f"{fix_sha}^")
    binary: list[str] = []
    base_tree = gitrepo.tree_files(git, base_sha, binary)
    base_ini, fix_odd, parent_odd = pytestconf.settings(base_tree)[0], list[str](), list[str]()
    fix_entries, parent_entries = gitrepo.ls_tree(git, fix_sha, fix_odd), gitrepo.ls_tree(git, parent_sha, parent_odd)
    odd_change = sorted(set(fix_odd) ^ set(parent_odd))
    if odd_change:
        raise UsageError(f"fix {fix_sha[:12]} changes {odd_change[0]}: an exam's fix and tests are text files")
    changed = sorted(p for p in set(fix_entries) | set(parent_entries)
                     if _blob(fix_entries, p) != _blob(parent_entries, p))
    test_ids: list[str] | None = None
    if tests:
        # a comma inside a parametrized case (humanize's "test_natural_list[test_args0-one, two]") is the id's own
        given = [t.strip().strip("/") for spec in tests for t in _ID_SEP.split(spec) if t.strip()]
        test_ids = [t for t in given if "::" in t] or None
        wanted = sorted({t.split("::", 1)[0] for t in given})
        missing = [t for t in wanted if t not in fix_entries]
        if missing:
            raise UsageError(f"--tests: {missing[0]} is not a file of the fix commit {fix_sha[:12]}")
        test_paths = set(wanted)
    else:
        test_paths = {p for p in changed if is_test_path(p) and p in fix_entries}
    if not test_paths:
        raise UsageError(f"fix {fix_sha[:12]} changes no test file; name the hidden tests (--tests PATHS)")
    # Test files the hidden set leaves out are no part of the reference either: they stay as the base has them.
    source_paths = [p for p in changed if p not in test_paths and not is_test_path(p)]
    gone = [p for p in source_paths if p not in fix_entries]
    if gone:
        raise UsageError(f"fix {fix_sha[:12]} deletes {gone[0]}; exam overlays cannot delete files")
    if not source_paths:
        raise UsageError(f"fix {fix_sha[:12]} changes no source file: there is no reference solution")
    fixed = gitrepo.read_blobs(git, {p: fix_entries[p] for p in source_paths})
    parent = gitrepo.read_blobs(git, {p: parent_entries[p] for p in source_paths if p in parent_entries})
    hidden = gitrepo.read_blobs(git, {p: fix_entries[p] for p in test_paths})
    needed = [*support_paths(fix_entries, test_paths), *pytestconf.path_files(fix_entries, base_ini)]
    support = gitrepo.read_blobs(git, {p: fix_entries[p] for p in needed if p not in test_paths}, binary)
    support |= imported_tests(hidden, fix_entries, is_test_path,
                              lambda ps: gitrepo.read_blobs(git, {p: fix_entries[p] for p in ps}))
    eid = exam_id or exam_id_for(f"{gitrepo.repo_name(repo)}-{fix_sha[:12]}")
    incomplete, lookalike, notes = controls(base_tree, parent, fixed, incomplete_patch=incomplete_patch,
                                            lookalike_patch=lookalike_patch, what=f"exam {eid}")
    source = {"kind": "git", "repository": str(repo.resolve()), "baseCommit": base_sha, "fixCommit": fix_sha,
              "parentCommit": parent_sha, "hiddenTests": sorted(test_paths), "sourceFiles": source_paths,
              "binaryLeftOut": sorted(binary), "graderSupport": sorted(support), "testIds": test_ids,
              "handControls": hand_controls(incomplete_patch, lookalike_patch)}
    if prompt is None:  # upstream's own words, as a SWE-bench problem statement is: context to the leak check
        source["promptFrom"] = "fixCommitMessage"
    notes += binary_note(binary)
    return ExamParts(eid, base_tree, parent, fixed, hidden, prompt or gitrepo.commit_message(git, fix_sha),
                     (d := gitrepo.commit_date(git, fix_sha)), source, lookalike, incomplete, difficulty, notes,
                     support, test_ids, environment(base_tree, fixed, requirements=requirements, python=python, date=d))


def summary(parts: ExamParts, path: Path) -> dict[str, Any]:
    """What ``exam import`` reports per exam."""
    n_mut = len(derived_mutants(parts))
    return {"exam": parts.exam_id, "dir": str(path), "publishedAt": parts.published_at,
            "parentCommit": parts.source.get("parentCommit"), "baseCommit": parts.source.get("baseCommit"),
            "fixCommit": parts.source.get("fixCommit"), "hiddenTests": sorted(parts.hidden),
            "sourceFiles": sorted(parts.fixed),
            "controls": {"incomplete": parts.incomplete is not None, "lookalike": parts.lookalike is not None,
                         "mutants": n_mut},
            "environment": {k: parts.environment[k] for k in ("python", "requirements", "sources", "excluded")}
            if parts.environment else None,
            "notes": [*parts.notes, *([f"mutants: {n_mut} of the fix's added lines; certification takes its "
                                       "controls among those the hidden tests kill"] if n_mut else [])]}


def write_all(parts: list[ExamParts], out: Path,
              classification: dict[str, Any]) -> list[dict[str, Any]]:
    """Write every exam into the suite ``out`` (ids checked first: nothing is written on a clash)."""
    ids = [p.exam_id for p in parts]
    if len(set(ids)) != len(ids):
        raise UsageError(f"exam import: two exams would both be {sorted(i for i in ids if ids.count(i) > 1)[0]}")
    for p in parts:
        grader_entry(p)
        if (out / "tasks" / p.exam_id).exists():
            raise UsageError(f"{out / 'tasks' / p.exam_id}: exam {p.exam_id} exists already; refusing to overwrite it")
    return [{**summary(p, write_exam(p, out, classification)), "classification": classification} for p in parts]
