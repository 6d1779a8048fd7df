#!/usr/bin/env python3
"""Move ``acx_oci/services/`` into role packages (issue 36, Build 1): a mechanical, re-runnable move.

Run at the repository root on a clean checkout (``python scripts/move_services.py [--commit]``). It

1. refuses to start if any file under ``acx_oci/services/`` is not in :data:`MAPPING` (it lists them, so
   the mapping can be extended) or if the move was already applied;
2. ``git mv``\\ s every module to its role package and writes each role package's ``__init__.py``;
3. splits the transparency log's OCI module (:data:`SPLITS`): the reader stays in ``artifacts/``, the
   writer (``publish``) goes to ``verifier/``, and the checkpoint file name joins the reader, so the
   consumer (and the gateway through it) never imports the verifier's log writer;
4. rewrites every reference: imports (ast), dotted names (``acx_oci.services.X``, ``services.X``),
   paths (``acx_oci/services/X.py``, ``services/X/``) in every tracked .py, .md, .toml, .sh, .cfg file;
5. applies the static edits: the import contracts in pyproject.toml, their planted-arrow test rows in
   tests/test_architecture.py, the README's module map row and DESIGN.md's "Shape of the code";
6. sorts the imports it touched (``ruff --select I``) and drops those the split left unused (F401).

With ``--commit`` it commits the result as ``move: ...``. What it cannot rewrite (bare module names such
as ``attest_plan`` in prose) it leaves; the new names are listed in :data:`MAPPING`.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

# Old path under acx_oci/services/ -> new path under acx_oci/services/. A key ending in "/" moves a whole
# package (every file under it, including ones added later). None: the file is removed (its content is
# said elsewhere). Add any new module here.
MAPPING: dict[str, str | None] = {
    # artifacts/: our artifacts on OCI, both ways (push and fetch), and the log's OCI layout and reader
    "cartridge.py": "artifacts/cartridge.py",
    "benchmark.py": "artifacts/benchmark.py",
    "attestation.py": "artifacts/attestation.py",
    "certification.py": "artifacts/certification.py",
    "cosign_projection.py": "artifacts/cosign_projection.py",
    "cosign_referrer.py": "artifacts/cosign_referrer.py",  # on the cosign branch: cosign 3's bundle layout
    "translog/entries.py": "artifacts/log_entries.py",
    "translog/oci.py": "artifacts/log_reader.py",  # the writer is split off: SPLITS
    "translog/__init__.py": None,
    # consumer/: resolve and what it fetches and remembers, copy, pull, the log monitor
    "resolve.py": "consumer/resolve.py",
    "resolve_fetch.py": "consumer/resolve_fetch.py",
    "resolve_phases.py": "consumer/resolve_phases.py",
    "replay.py": "consumer/replay.py",
    "attempt_fetch.py": "consumer/attempt_fetch.py",
    "log_fetch.py": "consumer/log_fetch.py",
    "did_keys.py": "consumer/did_keys.py",
    "statuscache.py": "consumer/statuscache.py",
    "verdictcache.py": "consumer/verdictcache.py",
    "logcache.py": "consumer/logcache.py",
    "copy.py": "consumer/copy.py",
    "copy_status.py": "consumer/copy_status.py",
    "pull.py": "consumer/pull.py",
    "translog/audit.py": "consumer/log_audit.py",
    # verifier/: the attest pipeline (steps as siblings), the ledger, publish, revoke, the log writer
    "attest.py": "verifier/attest.py",
    "attest_request.py": "verifier/request.py",
    "attest_check.py": "verifier/check.py",
    "attest_plan.py": "verifier/plan.py",
    "attest_play.py": "verifier/play.py",
    "attest_outcome.py": "verifier/outcome.py",
    "attest_issue.py": "verifier/issue.py",
    "attest_log.py": "verifier/log.py",
    "ledger.py": "verifier/ledger.py",
    "ledger_attempts.py": "verifier/ledger_attempts.py",
    "publish.py": "verifier/publish.py",
    "publish_dir.py": "verifier/publish_dir.py",
    "revoke.py": "verifier/revoke.py",
    "transcripts.py": "verifier/transcripts.py",
    "models.py": "verifier/models.py",
    "exposures.py": "verifier/exposures.py",
    "environment.py": "verifier/environment.py",
    "regression.py": "verifier/regression.py",
    "cosign_standing.py": "verifier/cosign_standing.py",  # on the cosign branch: which projections stand (ledger)
    "translog/local.py": "verifier/log_tree.py",
    "executors/": "verifier/executors/",
    # exams/: as today, plus the report's reading of attest runs
    "exams/": "exams/",
    "exam_runs.py": "exams/runs.py",
    # tools/: the demo, the environment check, the shipped examples
    "demo.py": "tools/demo.py",
    "doctor.py": "tools/doctor.py",
    "examples.py": "tools/examples.py",
}

# Top-level definitions moved between the new modules after the git mv: (names, from, to, docstring of `to`
# when the script creates it).
SPLITS: list[tuple[tuple[str, ...], str, str, str | None]] = [
    (("publication_tag", "_media", "Published", "publish"), "artifacts/log_reader.py", "verifier/log_publish.py",
     "The verifier's side of the log's OCI layout (:mod:`acx_oci.services.artifacts.log_reader`): publication.\n\n"
     "Only the verifier publishes its log, so the writer lives here and a consumer that reads the log (and the\n"
     "gateway, through it) never imports it.\n"),
    (("CHECKPOINT",), "verifier/log_tree.py", "artifacts/log_reader.py", None),
]

ROLE_DOCS: dict[str, str] = {
    "": "Use cases, by role: ``artifacts`` (our artifacts on OCI both ways), ``consumer`` (resolve, copy, pull),\n"
        "``verifier`` (attest, ledger, publish, revoke, the log writer), ``exams`` (exam certification),\n"
        "``tools`` (demo, doctor, examples).\n\n"
        "import-linter holds the roles apart (pyproject.toml): neither the gateway nor ``consumer`` imports\n"
        "``verifier``, and ``artifacts`` imports neither.\n",
    "artifacts": "Our artifacts on OCI, both ways: cartridges, benchmarks, attestations and status lists, exam\n"
                 "certifications, the cosign projection, and the transparency log's OCI layout and reader.\n\n"
                 "Imports neither ``consumer`` nor ``verifier`` (an import contract): both sides build on it.\n",
    "consumer": "The consumer's side: ``resolve`` and what it fetches (attestations, records, replays, log proofs)\n"
                "and remembers (status lists, verdicts, log heads), ``copy`` (the verified mirror), ``pull``, and\n"
                "the log monitor (``log_audit``).\n\n"
                "Never imports ``verifier`` (an import contract): the gateway runs this code, not the verifier's.\n",
    "verifier": "The verifier's side: the attest pipeline (``attest`` and its steps ``request``, ``check``, ``plan``,\n"
                "``play``, ``outcome``, ``issue``, ``log``), the ledger, publish, revoke, transcripts, the models\n"
                "file, exposures, environment images, regression, executors, and the transparency log writer\n"
                "(``log_tree`` on disk, ``log_publish`` to a registry).\n",
    "tools": "Tools around the use cases: the demo, ``doctor`` (what this machine can run), the shipped examples.\n",
}

CONTRACTS = '''
[[tool.importlinter.contracts]]
name = "Roles: the gateway and services.consumer never import services.verifier"
type = "forbidden"
source_modules = ["acx_oci.gateway", "acx_oci.services.consumer"]
forbidden_modules = ["acx_oci.services.verifier"]

[[tool.importlinter.contracts]]
name = "Roles: services.artifacts imports neither services.consumer nor services.verifier"
type = "forbidden"
source_modules = ["acx_oci.services.artifacts"]
forbidden_modules = ["acx_oci.services.consumer", "acx_oci.services.verifier"]
'''

ARCH_TEST = "tests/test_architecture.py"
ARCH_ANCHOR = '@pytest.mark.parametrize(("module", "line", "contract"), [\n'
ARCH_ROWS = '''\
    # the roles in services/ (issue 36): the gateway and the consumer never reach the verifier's code, the
    # artifacts neither side's
    ("gateway/app.py", "from acx_oci.services.verifier import ledger", "never import services.verifier"),
    ("services/consumer/copy.py", "import acx_oci.services.verifier.log_publish", "never import services.verifier"),
    ("services/artifacts/cartridge.py", "from acx_oci.services.consumer import resolve", "artifacts imports neither"),
    ("services/artifacts/log_reader.py", "from acx_oci.services.verifier import log_tree", "artifacts imports neither"),
'''

README_ROW = re.compile(r"^\| use cases \| `services/` \|.*\|\n", re.M)
README_ROW_SHA = "5f155f3ebeca5df7"  # the row the script was written against (sha256, 16 hex): a change is warned of
README_ROWS = (
    "| use cases | `services/artifacts/` | our artifacts on OCI both ways: cartridges and benchmarks moved between "
    "directories and stores (`cartridge`, `benchmark`), attestations and status lists (`attestation`), exam "
    "certification referrers (`certification`), the cosign projection (`cosign_projection`), the transparency "
    "log's leaves (`log_entries`) and OCI layout and reader (`log_reader`); imports neither side below |\n"
    "| | `services/consumer/` | resolve (`resolve_fetch`: every byte a decision needs; `resolve_phases`: where "
    "the time went; `replay`: fetch the deciding credentials' records; `attempt_fetch`; `log_fetch` and "
    "`did_keys`), the consumer's caches (`statuscache`: status-list sequences; `verdictcache`: verified proofs "
    "and replays; `logcache`: log heads), copy (the verified mirror, `copy_status`), pull, the log monitor "
    "(`log_audit`); never imports `verifier/` |\n"
    "| | `services/verifier/` | the attest pipeline (`attest` and its steps `request`, `check`, `plan`, `play`, "
    "`outcome`, `issue`, `log`), `executors/` (local or Dask), the SQLite ledger (`ledger`, `ledger_attempts`), "
    "`publish`, `publish_dir`, `revoke`, the models file (`models`), which held-out tasks went to which "
    "provider (`exposures`), `environment`, `regression`, a model-calling run's transcripts re-sealed to an "
    "auditor and its replay compared (`transcripts`), the log writer (`log_tree` on disk, `log_publish`) |\n"
    "| | `services/exams/`, `services/tools/` | exam certification (certify, canaries, report, import; `runs`: "
    "report cells from attest runs); the demo, `doctor`, the shipped `examples` |\n"
)

DESIGN_OLD = "`import-linter` keeps arrows pointing\ndown."
DESIGN_NEW = ("`import-linter` keeps arrows pointing\n"
              "down. `services/` is laid out by role: `artifacts/` (our artifacts on OCI\n"
              "both ways, the log reader), `consumer/` (resolve, copy, pull, the consumer's\n"
              "caches), `verifier/` (the attest pipeline, ledger, publish, revoke, transcripts,\n"
              "the log writer), `exams/`, `tools/`; neither the gateway nor `consumer/` imports\n"
              "`verifier/`, and `artifacts/` imports neither.")

SERVICES = Path("acx_oci/services")
ROLES = {v.split("/")[0] for v in MAPPING.values() if v}
OLD_MODULES: set[str] = set()  # dotted names under services of the modules before the move (preflight fills it)
TEXT_SUFFIXES = (".py", ".md", ".toml", ".sh", ".cfg", ".ini", ".txt")
SELF = Path("scripts/move_services.py")


class Stop(Exception):
    """The move cannot go on: the message says why and what to do."""


def git(*args: str) -> str:
    """Run git at the root; its stdout (a failure stops the move)."""
    out = subprocess.run(["git", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise Stop(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


# --- the mapping as a function of dotted segments ---------------------------------------------------------

def _split_overrides() -> dict[str, dict[str, str]]:
    """Old module key (``translog/oci.py``) -> {symbol: new module path} for symbols a split moved."""
    back = {new: old for old, new in MAPPING.items() if new}
    out: dict[str, dict[str, str]] = {}
    for names, src, dst, _doc in SPLITS:
        old = back.get(src)
        if old is not None:
            out.setdefault(old, {}).update(dict.fromkeys(names, dst))
    return out


OVERRIDES = _split_overrides()


def resolve(segs: list[str]) -> list[str] | None:
    """New segments (under services/) for old ones, the longest known prefix mapped; None if not an old name."""
    for i in range(len(segs), 0, -1):
        head, rest = "/".join(segs[:i]), segs[i:]
        if head + ".py" in MAPPING:
            new = MAPPING[head + ".py"]
            if new is None:
                return None
            target = OVERRIDES.get(head + ".py", {}).get(rest[0], new) if rest else new
            return target[:-3].split("/") + rest
        if head + "/" in MAPPING:
            new = MAPPING[head + "/"]
            return (new.rstrip("/").split("/") if new else []) + rest
    return None


def module_of(rel: str) -> str:
    """``verifier/plan.py`` -> ``acx_oci.services.verifier.plan``."""
    return "acx_oci.services." + rel[:-3].replace("/", ".")


# --- step 1: preflight ------------------------------------------------------------------------------------

def known(rel: str) -> bool:
    """Whether ``rel`` (under services/) is covered by MAPPING."""
    return rel in MAPPING or any(k.endswith("/") and rel.startswith(k) for k in MAPPING)


def preflight(allow_dirty: bool) -> list[str]:
    """The files to move (paths under services/); stops on an applied move, a dirty tree or unmapped files."""
    if not (Path("pyproject.toml").exists() and SERVICES.is_dir()):
        raise Stop("run at the repository root (pyproject.toml and acx_oci/services/ expected)")
    if (SERVICES / "verifier" / "__init__.py").exists() or (SERVICES / "consumer" / "__init__.py").exists():
        raise Stop("acx_oci/services/ already has role packages: the move was applied")
    if not allow_dirty and git("status", "--porcelain", "--untracked-files=no").strip():
        raise Stop("the working tree has uncommitted changes: commit or stash them first (or --allow-dirty)")
    tracked = [p[len(str(SERVICES)) + 1:] for p in git("ls-files", str(SERVICES)).splitlines()]
    untracked = [p[len(str(SERVICES)) + 1:] for p in git("ls-files", "--others", "--exclude-standard",
                                                          str(SERVICES)).splitlines()]
    unknown = sorted(r for r in tracked + untracked if r != "__init__.py" and not known(r))
    if unknown:
        raise Stop("files under acx_oci/services/ that MAPPING (top of scripts/move_services.py) does not place:\n  "
                   + "\n  ".join(unknown) + "\nadd each to MAPPING (old path -> role path) and run again")
    if untracked:
        raise Stop("untracked files under acx_oci/services/ (commit or remove them): " + ", ".join(untracked))
    for rel in tracked:
        if rel.endswith(".py"):
            mod = rel[:-3].removesuffix("/__init__").replace("/", ".")
            OLD_MODULES.add(mod)
    return [r for r in tracked if r != "__init__.py"]


# --- step 2: git mv -----------------------------------------------------------------------------------------

def target(rel: str) -> str | None:
    """The new path (under services/) of an old file."""
    if rel in MAPPING:
        return MAPPING[rel]
    for k, v in MAPPING.items():
        if k.endswith("/") and rel.startswith(k):
            return None if v is None else v + rel[len(k):]
    raise Stop(f"{rel}: not in MAPPING")


def move_files(files: list[str]) -> None:
    """git mv each file, git rm the removed ones, write the role packages' __init__.py, drop emptied folders."""
    for rel in files:
        new = target(rel)
        if new is None:
            git("rm", "-q", str(SERVICES / rel))
        elif new != rel:
            (SERVICES / new).parent.mkdir(parents=True, exist_ok=True)
            git("mv", str(SERVICES / rel), str(SERVICES / new))
    for role, doc in ROLE_DOCS.items():
        init = SERVICES / role / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        init.write_text(f'"""{doc}"""\n')
        git("add", str(init))
    for folder in sorted((p for p in SERVICES.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if folder.name != "__pycache__" and not any(f.suffix == ".py" for f in folder.rglob("*")):
            shutil.rmtree(folder)


# --- step 3: splits -------------------------------------------------------------------------------------

def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def _top_names(text: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(text).body:
        names |= _defined(node)
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _cut(text: str, names: tuple[str, ...]) -> tuple[str, list[tuple[bool, str]]]:
    """``text`` without the top-level definitions of ``names``, and those (is-assignment, source) in order."""
    lines = text.splitlines(keepends=True)
    found: list[tuple[int, int, bool]] = []
    for node in ast.parse(text).body:
        got = _defined(node)
        if got and got <= set(names):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
            while start > 0 and lines[start - 1].startswith("#"):
                start -= 1
            found.append((start, node.end_lineno or node.lineno, isinstance(node, ast.Assign | ast.AnnAssign)))
    missing = set(names) - set().union(*(_defined(n) for n in ast.parse(text).body))
    if missing:
        raise Stop(f"split: {', '.join(sorted(missing))} not defined at the top level any more")
    chunks = [(assign, "".join(lines[s:e])) for s, e, assign in found]
    for s, e, _ in reversed(found):
        del lines[s:e]
    return re.sub(r"\n{4,}", "\n\n\n", "".join(lines)), chunks


def _imports_block(text: str, code: str) -> str:
    """The imports of ``text`` that ``code`` uses, one statement per module."""
    used = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names = [a.name if not a.asname else f"{a.name} as {a.asname}" for a in node.names
                     if (a.asname or a.name) in used]
            if names:
                out.append(_render("", "." * node.level + (node.module or ""), names, ""))
        elif isinstance(node, ast.Import):
            out += [f"import {a.name}" + (f" as {a.asname}" if a.asname else "") + "\n" for a in node.names
                    if (a.asname or a.name).split(".")[0] in used]
    return "".join(out)


def _insert(dst: str, chunks: list[tuple[bool, str]], imports: str) -> str:
    """Assignments after the last top-level import/assignment before the first definition; definitions at the end."""
    tree = ast.parse(dst)
    lines = dst.splitlines(keepends=True)
    last_import = max(n.end_lineno or n.lineno for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))
    last_const = last_import
    for n in tree.body:
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            break
        last_const = n.end_lineno or n.lineno
    assigns = "".join(c for a, c in chunks if a)
    defs = "".join("\n\n" + c for a, c in chunks if not a)
    out = [*lines[:last_import], imports, *lines[last_import:last_const], assigns, *lines[last_const:]]
    return "".join(out).rstrip("\n") + "\n" + defs


def _add_cross_imports(paths: list[Path]) -> None:
    """Import, in each file, the names it uses that another of ``paths`` now defines."""
    defs = {p: {n for node in ast.parse(p.read_text()).body for n in _defined(node)} for p in paths}
    for p in paths:
        text = p.read_text()
        tree = ast.parse(text)
        have = _top_names(text)
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        wanted: dict[Path, list[str]] = {}
        for q in paths:
            if q != p:
                wanted[q] = sorted((used & defs[q]) - have)
        add = "".join(f"from {module_of(str(q.relative_to(SERVICES)))} import {', '.join(ns)}\n"
                      for q, ns in wanted.items() if ns)
        if add:
            lines = text.splitlines(keepends=True)
            last = max(n.end_lineno or n.lineno for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))
            p.write_text("".join([*lines[:last], add, *lines[last:]]))


def apply_splits() -> list[Path]:
    """Move the SPLITS' definitions; the files touched (their imports to be pruned and sorted)."""
    touched: list[Path] = []
    for names, src_rel, dst_rel, doc in SPLITS:
        src, dst = SERVICES / src_rel, SERVICES / dst_rel
        original = src.read_text()
        rest, chunks = _cut(original, names)
        imports = _imports_block(original, "".join(c for _a, c in chunks))
        if dst.exists():
            dst.write_text(_insert(dst.read_text(), chunks, imports))
        else:
            if doc is None:
                raise Stop(f"split into a new {dst_rel} needs its docstring in SPLITS")
            assigns = "".join(c for a, c in chunks if a)
            defs = "\n\n".join(c for a, c in chunks if not a)
            dst.write_text(f'"""{doc}"""\n\nfrom __future__ import annotations\n\n{imports}\n{assigns}\n\n{defs}')
        src.write_text(rest)
        git("add", str(dst))
        touched += [p for p in (src, dst) if p not in touched]
    _add_cross_imports(touched)
    return touched


# --- step 4: references -------------------------------------------------------------------------------------

def _new_name(old_module: str, name: str) -> tuple[str, str, dict[str, str]]:
    """(new module, new name, symbol overrides if ``name`` is a split module imported as an object)."""
    segs = old_module.split(".")[2:]
    if ".".join([*segs, name]) in OLD_MODULES:
        whole = resolve([*segs, name])
        if whole is None:
            raise Stop(f"{old_module}.{name}: imported, but MAPPING removes it")
        over = OVERRIDES.get("/".join([*segs, name]) + ".py", {})
        return ".".join(["acx_oci", "services", *whole[:-1]]), whole[-1], over
    parent = resolve(segs)
    if parent is None:
        return old_module, name, {}
    sym = OVERRIDES.get("/".join(segs) + ".py", {}).get(name)
    if sym is not None:
        return module_of(sym), name, {}
    return "acx_oci.services." + ".".join(parent), name, {}


def _render(indent: str, module: str, names: list[str], comment: str) -> str:
    one = f"{indent}from {module} import {', '.join(names)}{comment}"
    if len(one) <= 120:
        return one + "\n"
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"{indent}from {module} import ({comment}\n{inner}{indent})\n"


def rewrite_imports(text: str) -> str:
    """Rewrite ``from acx_oci.services[...] import ...`` statements (ast-located), keeping trailing comments."""
    if "acx_oci.services" not in text:
        return text
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    objects: dict[str, dict[str, str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                and (node.module == "acx_oci.services" or node.module.startswith("acx_oci.services."))):
            continue
        groups: dict[str, list[str]] = {}
        extra: list[tuple[str, str]] = []
        if all(_new_name(node.module, a.name)[:2] == (node.module, a.name) for a in node.names):
            continue  # nothing moves: the statement stays as written
        for alias in node.names:
            module, name, over = _new_name(node.module, alias.name)
            local = alias.asname or alias.name
            groups.setdefault(module, []).append(name if local == name else f"{name} as {local}")
            if over:
                objects[local] = over
                extra += [(module_of(v).rsplit(".", 1)[0], module_of(v).rsplit(".", 1)[1]) for v in set(over.values())]
        for module, name in extra:
            if name not in groups.setdefault(module, []):
                groups[module].append(name)
        end_line = lines[node.end_lineno - 1]
        tail = end_line[node.end_col_offset:].rstrip("\n")
        opening = re.search(r"\(\s*(#.*)$", lines[node.lineno - 1].rstrip("\n"))
        comment = "  " + tail.strip() if tail.strip().startswith("#") else "  " + opening.group(1) if opening else ""
        indent = lines[node.lineno - 1][:node.col_offset]
        new = "".join(_render(indent, m, ns, comment) for m, ns in groups.items())
        old = "".join(lines[node.lineno - 1:node.end_lineno])
        if new != old:
            edits.append((node.lineno - 1, node.end_lineno, new))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = [new]
    out = "".join(lines)
    for local, over in objects.items():
        for sym, dst in over.items():
            out = re.sub(rf"\b{re.escape(local)}\.{re.escape(sym)}\b", f"{Path(dst).stem}.{sym}", out)
    return out


DOTTED = re.compile(r"acx_oci\.services((?:\.\w+)+)")
FROM_STR = re.compile(r"from acx_oci\.services import (\w+)")
PATHS = re.compile(r"(?<![\w.])((?:acx_oci/)?services/)((?:\w+/)*\w+(?:\.py|/)?)")
SHORT = re.compile(r"(?<![\w./-])services((?:\.\w+)+)")


def _dotted(prefix: str, m: re.Match[str]) -> str:
    segs = m.group(1)[1:].split(".")
    new = resolve(segs)
    return m.group(0) if new is None else prefix + "." + ".".join(new)


def _path(m: re.Match[str]) -> str:
    body = m.group(2)
    suffix = ".py" if body.endswith(".py") else "/" if body.endswith("/") else ""
    segs = body[: len(body) - len(suffix)].split("/")
    new = resolve(segs)
    if new is None:
        return m.group(0)
    if suffix == "" and (SERVICES / "/".join(new)).with_suffix(".py").exists():
        return m.group(1) + "/".join(new)
    return m.group(1) + "/".join(new) + suffix


ROLE_REF = re.compile(r"(:(?:mod|func|class|data|meth):`~?)(\w+)((?:\.\w+)*)`")
TRANSLOG = re.compile(r"(?<![\w./])translog\.(\w+)((?:\.\w+)*)")


def _leaf_form(segs: list[str], rest: int) -> str | None:
    """A bare reference (``attest_plan``, ``translog.oci.publish``) in its new bare form (``plan``,
    ``log_publish.publish``): the new module's leaf name and what followed; None if nothing changes."""
    new = resolve(segs)
    if new is None:
        return None
    out = ".".join(new[len(new) - rest - 1:])
    return None if out == ".".join(segs) else out


def _role_ref(m: re.Match[str]) -> str:
    if m.group(2) + ".py" not in MAPPING:
        return m.group(0)
    rest = [s for s in m.group(3).split(".") if s]
    new = _leaf_form([m.group(2), *rest], len(rest))
    return m.group(0) if new is None else f"{m.group(1)}{new}`"


def _translog(m: re.Match[str]) -> str:
    rest = [s for s in m.group(2).split(".") if s]
    new = _leaf_form(["translog", m.group(1), *rest], len(rest))
    return m.group(0) if new is None else new


def rewrite_text(text: str) -> str:
    """Dotted names, ``from acx_oci.services import X`` in strings, and paths, to the new layout."""
    text = DOTTED.sub(lambda m: _dotted("acx_oci.services", m), text)

    def from_str(m: re.Match[str]) -> str:
        new = resolve([m.group(1)])
        return m.group(0) if new is None else f"from {'.'.join(['acx_oci', 'services', *new[:-1]])} import {new[-1]}"

    text = FROM_STR.sub(from_str, text)
    text = PATHS.sub(_path, text)
    text = SHORT.sub(lambda m: _dotted("services", m), text)
    text = ROLE_REF.sub(_role_ref, text)
    return TRANSLOG.sub(_translog, text)


def rewrite_references() -> list[Path]:
    """Rewrite every tracked text file; the .py files changed."""
    changed: list[Path] = []
    for name in git("ls-files").splitlines():
        p = Path(name)
        if p == SELF or p.suffix not in TEXT_SUFFIXES or not p.exists() or p.is_symlink():
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if "services" not in text and "translog" not in text and ":mod:`" not in text:
            continue
        new = rewrite_text(rewrite_imports(text) if p.suffix == ".py" else text)
        if new != text:
            p.write_text(new, encoding="utf-8")
            if p.suffix == ".py":
                changed.append(p)
    return changed


# --- step 5: static edits ----------------------------------------------------------------------------------

def static_edits(warnings: list[str]) -> None:
    """Contracts, their test rows, the README's module map, DESIGN.md's shape of the code."""
    py = Path("pyproject.toml")
    text = py.read_text()
    if "Roles: the gateway and services.consumer" not in text:
        py.write_text(text.rstrip("\n") + "\n" + CONTRACTS)
    arch = Path(ARCH_TEST)
    text = arch.read_text()
    if ARCH_ANCHOR in text and "services/consumer/copy.py" not in text:
        arch.write_text(text.replace(ARCH_ANCHOR, ARCH_ANCHOR + ARCH_ROWS, 1))
    elif ARCH_ANCHOR not in text:
        warnings.append(f"{ARCH_TEST}: the planted-arrow parametrize list moved; add ARCH_ROWS by hand")
    readme = Path("README.md")
    text = readme.read_text()
    row = README_ROW.search(text)
    if row:
        if hashlib.sha256(row.group(0).encode()).hexdigest()[:16] != README_ROW_SHA:
            warnings.append("README.md: the module map's `services/` row changed since this script was written; "
                            "it was replaced: check its words are in the new rows:\n    " + row.group(0).strip())
        readme.write_text(README_ROW.sub(lambda _m: README_ROWS, text, count=1))
    else:
        warnings.append("README.md: the module map's `services/` row was not found; update it by hand")
    design = Path("DESIGN.md")
    text = design.read_text()
    if DESIGN_OLD in text:
        design.write_text(text.replace(DESIGN_OLD, DESIGN_NEW, 1))
    else:
        warnings.append("DESIGN.md: the 'Shape of the code' sentence on floors was not found; update it by hand")


def ruff(args: list[str], files: list[Path], warnings: list[str]) -> None:
    """Run ruff on ``files`` (the project's config); a missing ruff is a warning."""
    if not files:
        return
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--fix", "--quiet", *args, *map(str, files)],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1) or "No module named" in out.stderr:
        warnings.append(f"ruff {' '.join(args)} did not run ({out.stderr.strip()[:200]}): sort imports by hand")


def main() -> int:
    """Parse the options and run the steps."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commit", action="store_true", help="commit the result as 'move: ...'")
    ap.add_argument("--allow-dirty", action="store_true", help="run on a tree with uncommitted changes")
    opts = ap.parse_args()
    started = time.monotonic()
    warnings: list[str] = []
    try:
        files = preflight(opts.allow_dirty)
        move_files(files)
        split = apply_splits()
        changed = rewrite_references()
        static_edits(warnings)
        ruff(["--select", "F401,I"], split, warnings)
        ruff(["--select", "I"], sorted(set(changed) | set(split) | {Path(ARCH_TEST)}), warnings)
        leftovers = [p for p in SERVICES.iterdir() if p.name not in {*ROLES, "__init__.py", "__pycache__"}]
        if leftovers:
            raise Stop("left loose in acx_oci/services/: " + ", ".join(sorted(map(str, leftovers))))
        if opts.commit:
            git("add", "-A", "acx_oci", "tests", "benchmarks", "scripts", "docs", "README.md", "DESIGN.md",
                "pyproject.toml")
            git("commit", "-q", "-m", "move: acx_oci/services/ into role packages (artifacts, consumer, verifier, "
                "exams, tools), by scripts/move_services.py; the log's OCI module split into the reader "
                "(artifacts/log_reader) and the writer (verifier/log_publish); import contracts hold the roles "
                "apart (issue 36.1)")
    except Stop as exc:
        print(f"move_services: {exc}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"move_services: warning: {w}", file=sys.stderr)
    print(f"move_services: moved {len(files)} files, rewrote {len(changed)} Python files "
          f"in {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
