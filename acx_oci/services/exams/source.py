"""Exam directories on disk: discovery, the contract, the trees, and the freeze hash (no grading here).

An exam directory holds ``exam.yaml`` (the contract), ``prompt.md`` and ``workspace/`` (the model-facing
tree), the hidden grader (``hidden/``, plus the suite's ``graderCommon`` directory), ``reference/`` and
``controls/{incomplete,lookalike}/`` (overlays on the workspace; an impossible exam also has
``controls/second-reference/``) and, for an exam made from a repository (``exam import``), ``source.json``
(repository, base, fix and the fix's parent commit) and ``env.json`` (the environment spec: Python and
test dependencies, graded in by ``exam certify`` unless ``--no-environments``). The suite root is the nearest parent
with ``families.yaml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import AcxError, PathOutside, UsageError
from acx_oci.files import (
    load_yaml_or_json_file,
    load_yaml_or_json_inside,
    read_bytes_inside,
    read_text_tree,
)
from acx_oci.model import exam as mx
from acx_oci.safetree import parts_of
from acx_oci.sandbox import tree_digest

CONTROL_DIRS = ("incomplete", "lookalike", "second-reference")
#: Derived controls (``exam import`` without a human's lookalike): ``controls/mutant-01`` ... in order.
MUTANT_DIR = re.compile(r"^mutant-\d{2}$")
MAX_MUTANT_DIRS = 32


def read_tree(base: Path, rel: str, what: str = "exam tree") -> dict[str, str]:
    """``{relative path: text}`` of every regular file of ``base/rel`` (``__pycache__`` skipped), read inside
    ``base``: a symlink or a name leaving it is refused (exit 2), non-UTF-8 is an error."""
    return read_text_tree(base, rel, what)


@dataclass(frozen=True)
class ExamSource:
    """Everything certification reads from one exam directory."""

    dir: Path
    exam_id: str
    contract: Any
    contract_error: str | None
    families: Any
    workspace: dict[str, str]
    prompt: str
    hidden: dict[str, str]
    common: dict[str, str]
    reference: dict[str, str]
    controls: dict[str, dict[str, str]] = field(default_factory=dict)
    source: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None  # env.json: the Python and packages the exam is graded with

    @property
    def parent_commit(self) -> str | None:
        """The parent of the upstream fix the exam comes from (``source.json``); None for a hand-made exam."""
        sha = (self.source or {}).get("parentCommit")
        return sha if isinstance(sha, str) and len(sha) == 40 else None

    @property
    def mutants(self) -> dict[str, dict[str, str]]:
        """The derived controls (``controls/mutant-NN``), in order; empty for a hand-made exam."""
        return {k: v for k, v in sorted(self.controls.items()) if MUTANT_DIR.match(k)}

    @property
    def impossible(self) -> bool:
        """Whether the contract marks the exam impossible (only a literal ``true`` does): no honest solver passes it."""
        return isinstance(self.contract, dict) and self.contract.get("impossible") is True

    @property
    def version(self) -> str | None:
        """The contract's version, if it has one and the contract could be read."""
        v = self.contract.get("version") if isinstance(self.contract, dict) else None
        return str(v) if v is not None else None

    @property
    def grader_entry(self) -> str:
        """The grader file the contract names, else ``hidden/test_hidden.py``."""
        entry = self.contract.get("grader") if isinstance(self.contract, dict) else None
        return str(entry or "hidden/test_hidden.py")

    def model_facing(self) -> dict[str, str]:
        """What the model is given: the workspace files and the prompt."""
        return {**{f"workspace/{k}": v for k, v in self.workspace.items()}, "prompt.md": self.prompt}

    def grader_files(self) -> dict[str, str]:
        """The published grader as the sandbox sees it in /grader/tests: common files, then hidden ones."""
        return {**self.common, **self.hidden}

    def tree_hash(self) -> str:
        """Digest of the starting workspace (of an empty list when there is none), part of the freeze hash."""
        ws = self.dir / "workspace"
        return tree_digest(ws) if ws.is_dir() else sha256_digest(canonical([]))


def find_suite_root(exam_dir: Path) -> Path | None:
    """The suite root: the first of the exam dir and three parents holding the families file or a benchmark.json."""
    for p in [exam_dir, *exam_dir.resolve().parents][:4]:
        if (p / mx.FAMILIES_FILE).is_file() or (p / "benchmark.json").is_file():
            return p
    return None


def discover(path: Path) -> list[Path]:
    """One exam dir, or every exam dir of a suite (``benchmark.json`` task dirs, else subdirs with exam.yaml)."""
    if (path / mx.EXAM_FILE).is_file():
        return [path]
    found: list[Path] = []
    if (path / "benchmark.json").is_file():
        doc = load_yaml_or_json_inside(path, "benchmark.json", "benchmark suite")
        for t in doc.get("tasks", []) if isinstance(doc, dict) else []:
            if isinstance(t, dict) and "dir" in t:
                rel = "/".join(parts_of(str(t["dir"]), "benchmark task dir"))
                read_bytes_inside(path, f"{rel}/{mx.EXAM_FILE}", "exam contract")  # refuses a link out of the suite
                found.append(path / rel)
    if not found:
        found = sorted({p.parent for p in path.glob("*/exam.yaml")} | {p.parent for p in path.glob("*/*/exam.yaml")})
        for d in found:  # glob walks into linked directories: an exam found through a link is refused
            read_bytes_inside(path, f"{d.relative_to(path).as_posix()}/{mx.EXAM_FILE}", "exam contract")
    if not found:
        raise UsageError(f"{path}: no exam.yaml here or in its task directories")
    return found


def load_exam(exam_dir: Path) -> ExamSource:
    """Read an exam directory; a missing or malformed contract is recorded (stage 1 fails), not raised."""
    root = find_suite_root(exam_dir)
    contract: Any = None
    error = None
    try:
        contract = load_yaml_or_json_inside(exam_dir, mx.EXAM_FILE, "exam contract")
        if contract is None:
            raise UsageError(f"exam contract: file not found: {exam_dir / mx.EXAM_FILE}")
    except PathOutside:
        raise  # a link out of the exam is refused outright, not recorded as a failed stage
    except AcxError as exc:
        error = str(exc)
    families: Any = None
    if root is not None and (root / mx.FAMILIES_FILE).is_file():
        try:
            families = load_yaml_or_json_inside(root, mx.FAMILIES_FILE, "exam family registry")
        except PathOutside:
            raise
        except AcxError:
            families = None
    common: dict[str, str] = {}
    if root is not None and (root / "benchmark.json").is_file():
        doc = load_yaml_or_json_inside(root, "benchmark.json", "benchmark suite")
        if isinstance(doc, dict) and doc.get("graderCommon"):
            common = read_tree(root, str(doc["graderCommon"]), "graderCommon")
    elif root is not None:
        common = read_tree(root, "grader-common", "grader-common")
    exam_id = str(contract.get("id")) if isinstance(contract, dict) and contract.get("id") else exam_dir.name
    raw_prompt = read_bytes_inside(exam_dir, "prompt.md", "exam prompt")
    try:
        prompt = raw_prompt.decode("utf-8") if raw_prompt is not None else ""
    except UnicodeDecodeError:
        raise UsageError(f"{exam_dir / 'prompt.md'}: not UTF-8 text") from None
    names = [*CONTROL_DIRS, *_mutant_dirs(exam_dir)]
    trees = {c: read_tree(exam_dir, f"controls/{c}", f"control {c}") for c in names}  # links refused here
    controls = {c: t for c, t in trees.items() if (exam_dir / "controls" / c).is_dir()}
    source = load_yaml_or_json_inside(exam_dir, mx.SOURCE_FILE, "exam source")
    if source is not None and not isinstance(source, dict):
        raise UsageError(f"{exam_dir / mx.SOURCE_FILE}: expected an object")
    env = load_yaml_or_json_inside(exam_dir, mx.ENV_FILE, "exam environment spec")
    if env is not None and not isinstance(env, dict):
        raise UsageError(f"{exam_dir / mx.ENV_FILE}: expected an object")
    return ExamSource(exam_dir, exam_id, contract, error, families, read_tree(exam_dir, "workspace", "workspace"),
                      prompt, read_tree(exam_dir, "hidden", "hidden grader"), common,
                      read_tree(exam_dir, "reference", "reference"), controls, source, env)


def _mutant_dirs(exam_dir: Path) -> list[str]:
    """The ``controls/mutant-NN`` directories, sorted; more than :data:`MAX_MUTANT_DIRS` is refused."""
    ctl = exam_dir / "controls"
    if not ctl.is_dir() or ctl.is_symlink():
        return []
    found = sorted(p.name for p in ctl.iterdir() if MUTANT_DIR.match(p.name))
    if len(found) > MAX_MUTANT_DIRS:
        raise UsageError(f"{ctl}: {len(found)} mutant controls, at most {MAX_MUTANT_DIRS}")
    return found


def _files_digest(files: dict[str, str]) -> str:
    return sha256_digest(canonical(files))


def freeze_inputs(src: ExamSource, patterns: tuple[tuple[str, str, str], ...]) -> dict[str, str]:
    """A digest per input the freeze hash covers (grader, reference, prompt, controls, families, patterns)."""
    return {"grader": _files_digest(src.hidden), "graderCommon": _files_digest(src.common),
            "reference": _files_digest(src.reference), "prompt": sha256_digest(src.prompt.encode("utf-8")),
            "controls": sha256_digest(canonical(src.controls)), "families": sha256_digest(canonical(src.families)),
            "source": sha256_digest(canonical(src.source)),
            "patterns": sha256_digest(canonical([list(p) for p in patterns])),
            **({"environment": sha256_digest(canonical(src.environment))} if src.environment is not None else {})}


def exam_freeze_hash(src: ExamSource, patterns: tuple[tuple[str, str, str], ...] = mx.DEFAULT_PATTERNS) -> str:
    """The freeze hash of an exam: changes when its contract, tree or any graded input changes."""
    contract = src.contract if isinstance(src.contract, dict) else {"unreadable": src.contract_error}
    return mx.freeze_hash(contract=contract, tree_hash=src.tree_hash(), inputs=freeze_inputs(src, patterns))


def load_patterns(path: Path | None) -> tuple[tuple[str, str, str], ...]:
    """The default list plus a project list (YAML/JSON ``{patterns: [{name, regex, scope?}]}``)."""
    import re

    if path is None:
        return mx.DEFAULT_PATTERNS
    doc = load_yaml_or_json_file(path, "publication patterns")
    items = doc.get("patterns") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise UsageError(f"publication patterns ({path}): expected {{patterns: [{{name, regex, scope}}]}}")
    extra = []
    for it in items:
        if not isinstance(it, dict) or not isinstance(it.get("name"), str) or not isinstance(it.get("regex"), str):
            raise UsageError(f"publication patterns ({path}): each pattern needs a name and a regex")
        scope = str(it.get("scope", "all"))
        if scope not in ("all", "model"):
            raise UsageError(f"publication patterns ({path}): scope must be 'all' or 'model'")
        try:
            re.compile(it["regex"])
        except re.error as exc:
            raise UsageError(f"publication patterns ({path}): {it['name']}: bad regex ({exc})") from None
        extra.append((it["name"], it["regex"], scope))
    return (*mx.DEFAULT_PATTERNS, *extra)
