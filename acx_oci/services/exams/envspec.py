"""An imported exam's environment spec: the Python and test dependencies its repository asks for at the base.

Read from the base tree's text (already read from git objects by :mod:`acx_oci.services.exams.gitrepo`), never
by running anything: ``pyproject.toml`` (``[project]`` dependencies, ``requires-python``, classifiers, the
``test``/``tests``/``testing`` optional-dependency extras and dependency groups), ``setup.py`` (parsed with
:mod:`ast` only: literal ``setup(...)`` keywords and module-level literal assignments), ``setup.cfg``,
``requirements*test*.txt``/``requirements-dev.txt``/``test-requirements.txt`` (``-r`` followed inside the tree)
and ``tox.ini``'s ``[testenv] deps``. The package under test is never a requirement (a self-referencing extra
such as ``attrs[tests-no-zope]`` is expanded, not installed). The spec goes to ``env.json`` in the exam's
task folder; ``env build --spec`` turns it into an image (:mod:`acx_oci.envimage.pyenv`).
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Iterable
from typing import Any

from acx_oci import pysource
from acx_oci.envimage import PYTHONS, name_of, normalize, read_toml, shown, sort_out, spec_digest
from acx_oci.errors import UsageError
from acx_oci.services.exams import envlocks, poetryspec
from acx_oci.services.exams.pythons import choose_python, version_key

SCHEMA = "acx.exam-env/1"
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TEST_EXTRAS = ("test", "tests", "testing")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")
_REQ_FILE = re.compile(r"^(requirements[^/]*test[^/]*\.txt|requirements[-_]dev\.txt|dev[-_]requirements\.txt|"
                       r"test[-_]?requirements\.txt|requirements/[^/]*(test|dev)[^/]*\.txt|"
                       r"tests?/requirements[^/]*\.txt)$")  # parse's tests/requirements.txt (a new user's finding)
_HASH = re.compile(r"[ \t]+--hash[= ][ \t]*sha256:[0-9a-fA-F]+")
_CLASSIFIER = re.compile(r"^Programming Language :: Python :: (3\.\d+)$")
MAX_INCLUDES = 16
#: What tox and nox environments install the project *with*, not what its tests import.
INSTALLERS = frozenset({"poetry", "pdm", "hatch", "pipenv", "uv", "tox", "nox", "flit"})
#: Requirements a spec holds at most (a real project lists a few hundred); the rest are named, not read: each
#: line is parsed a few times, and a repository's files could otherwise feed millions.
MAX_REQUIREMENTS = 2000
_DIST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+!-]{0,63}$")
_VERSION_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]{0,200}\.py$")
#: What setuptools-scm and hatch-vcs write at build time into the file a project names (never in git).
VERSION_FILE = ("# written by acx-oci exam import: the project's build writes this file (setuptools-scm, hatch-vcs)\n"
                "__version__ = version = '0.0.0'\n__version_tuple__ = version_tuple = (0, 0, 0)\n")


def _extras(req: str) -> list[str]:
    m = _NAME.match(req)
    return [normalize(e) for e in m.group(2)[1:-1].split(",") if e.strip()] if m and m.group(2) else []


class _Found:
    """What the readers collect: requirements in order (with where they came from), the package's own name."""

    def __init__(self) -> None:
        self.reqs: list[str] = []
        self.origins: list[str] = []
        self.sources: list[str] = []
        self.dropped: list[str] = []
        self.names: set[str] = set()
        self.requires: str | None = None
        self.classifiers: list[str] = []
        self.project: str | None = None
        self.version: str | None = None
        self.version_file: str | None = None

    def add(self, reqs: list[str], where: str) -> None:
        """Each line through the one door (:mod:`acx_oci.envimage.requirement`): kept re-serialised, or named;
        at most :data:`MAX_REQUIREMENTS` in all."""
        lines = [_HASH.sub("", r.split(" #", 1)[0]).strip(" \t") for r in reqs]  # a pinned file's --hash: pip's
        lines = bounded([r for r in lines if r], MAX_REQUIREMENTS - len(self.reqs), where, self.dropped)
        kept, dropped = sort_out(lines)
        self.reqs += kept
        self.origins += [where] * len(kept)
        self.dropped += [f"{d} in {where}" for d in dropped]
        if kept:
            self.sources.append(where)

    def meta(self, name: Any, requires: Any, classifiers: Any, version: Any = None) -> None:
        if isinstance(name, str) and name.strip():
            self.names.add(normalize(name.strip()))
            if self.project is None and _DIST.match(name.strip()):
                self.project = normalize(name.strip())
        if isinstance(version, str) and self.version is None and _DIST.match(version.strip()):
            self.version = version.strip()
        if isinstance(requires, str) and requires.strip() and self.requires is None:
            self.requires = requires.strip()
        if isinstance(classifiers, list):
            self.classifiers += [m.group(1) for c in classifiers if isinstance(c, str) and (m := _CLASSIFIER.match(c))]


def bounded(lines: list[str], room: int, where: str, dropped: list[str]) -> list[str]:
    """``lines`` without repeats, at most ``room`` of them; what is left out is named in ``dropped``."""
    lines = list(dict.fromkeys(lines))
    if len(lines) > max(room, 0):
        dropped.append(f"{len(lines) - max(room, 0)} more lines in {where} (over {MAX_REQUIREMENTS} requirements)")
        return lines[:max(room, 0)]
    return lines


def _strs(value: Any) -> list[str]:
    if isinstance(value, str):
        # "\n" only: a Unicode line separator stays inside its line, where the one door refuses it
        return [ln.strip(" \t\r") for ln in value.split("\n") if ln.strip(" \t\r")]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list | tuple) else []


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _pyproject(text: str, found: _Found) -> None:
    try:
        doc = read_toml(text, "pyproject.toml")
    except UsageError as exc:  # not TOML, too big, nested too deep: named, and the import goes on without it
        found.dropped.append(str(exc))
        return
    proj = _table(doc, "project")
    found.meta(proj.get("name"), proj.get("requires-python"), proj.get("classifiers"), proj.get("version"))
    tool = _table(doc, "tool")
    hatch_vcs = _table(_table(_table(_table(tool, "hatch"), "build"), "hooks"), "vcs")
    scm = _table(tool, "setuptools_scm")
    for where in (hatch_vcs.get("version-file"), scm.get("version_file"), scm.get("write_to")):
        if isinstance(where, str) and found.version_file is None:
            found.version_file = where.strip().removeprefix("./")
    found.add(_strs(proj.get("dependencies")), "pyproject.toml [project] dependencies")
    found.meta(*poetryspec.meta(doc))
    for reqs, left, where in poetryspec.read(doc, TEST_EXTRAS):  # a Poetry project's own tables
        found.add(reqs, where)
        found.dropped += [f"{why} in {where}" for why in left]
    extras = {normalize(k): _strs(v) for k, v in _table(proj, "optional-dependencies").items()}
    for key in TEST_EXTRAS:
        if key in extras:
            found.add(_expand(extras, key, found.names), f"pyproject.toml [project.optional-dependencies] {key}")
    groups = {normalize(k): v for k, v in _table(doc, "dependency-groups").items()}
    tests = [k for k in TEST_EXTRAS if isinstance(groups.get(k), list)] or [k for k in TEST_EXTRAS if k in extras]
    # ``dev`` only when nothing names the tests' own: it takes docs and linters too (filelock's: sphinx 9, Python 3.12)
    for key in tests if tests else ["dev"]:
        if isinstance(groups.get(key), list):
            found.add(_group(groups, key, set()), f"pyproject.toml [dependency-groups] {key}")


def _group(groups: dict[str, Any], key: str, seen: set[str]) -> list[str]:
    """A dependency group's requirements, its ``{include-group = "NAME"}`` entries (PEP 735) replaced by that
    group's (``dev = [{include-group = "tests"}, "ruff"]`` needs what ``tests`` lists); a cycle stops."""
    if key in seen or not isinstance(groups.get(key), list):
        return []
    seen.add(key)
    out: list[str] = []
    for g in groups[key]:
        if isinstance(g, str):
            out.append(g)
        elif isinstance(g, dict) and isinstance(g.get("include-group"), str):
            out += _group(groups, normalize(g["include-group"]), seen)
    return out


def _expand(extras: dict[str, list[str]], key: str, own: set[str], depth: int = 0,
            seen: set[str] | None = None) -> list[str]:
    """An extra's requirements, a reference to the package's own extras (``pkg[a,b]``) replaced by theirs
    (the reference itself stays, so that :func:`finish` names the package as left out). Each extra is expanded
    once: extras naming each other (``a = ["pkg[a,b]"]``, ``b = ["pkg[a,b]"]``) grew exponentially."""
    seen = set() if seen is None else seen
    if key in seen:
        return []
    seen.add(key)
    out: list[str] = []
    for r in extras.get(key, []):
        out.append(r)
        if name_of(r) in own and depth < 8:
            for e in _extras(r):
                out += _expand(extras, e, own, depth + 1, seen)
    return out


def _literals(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = literal`` assignments (what ``setup(install_requires=NAME)`` often points at)."""
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return out


def _setup_py(text: str, found: _Found) -> None:
    try:
        tree = pysource.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        found.dropped.append("setup.py (not parseable Python)")
        return
    names = _literals(tree)

    def value(node: ast.expr, depth: int = 0) -> Any:
        """A literal, with module-level literal names, lists and dicts of them, and ``a + b`` of lists."""
        if depth > 16:
            return None
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.List | ast.Tuple):
            return [value(e, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):  # string keys only: a list or tuple key is unhashable (a TypeError)
            return {key: value(v, depth + 1) for k, v in zip(node.keys, node.values, strict=True)
                    if k is not None and isinstance(key := value(k, depth + 1), str)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = value(node.left, depth + 1), value(node.right, depth + 1)
            # bounded: a balanced (A+A)+(A+A)... 16 deep is 65536 copies of A
            return a + b if isinstance(a, list) and isinstance(b, list) and \
                len(a) + len(b) <= MAX_REQUIREMENTS else None
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None

    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        if func is None or not ((isinstance(func, ast.Name) and func.id == "setup") or
                                (isinstance(func, ast.Attribute) and func.attr == "setup")):
            continue
        kw = {k.arg: value(k.value) for k in node.keywords if k.arg}  # type: ignore[attr-defined]
        found.meta(kw.get("name"), kw.get("python_requires"), kw.get("classifiers"), kw.get("version"))
        found.add(_strs(kw.get("install_requires")), "setup.py install_requires")
        found.add(_strs(kw.get("tests_require")), "setup.py tests_require")
        extras = {normalize(str(k)): _strs(v) for k, v in _table(kw, "extras_require").items()}
        for key in TEST_EXTRAS:
            if key in extras:
                found.add(_expand(extras, key, found.names), f"setup.py extras_require {key}")


def _ini(text: str, what: str, found: _Found) -> configparser.ConfigParser | None:
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cp.read_string(text)
    except configparser.Error:
        found.dropped.append(f"{what} (not an INI file)")
        return None
    return cp


def _setup_cfg(text: str, found: _Found) -> None:
    cp = _ini(text, "setup.cfg", found)
    if cp is None:
        return
    found.meta(cp.get("metadata", "name", fallback=None), cp.get("options", "python_requires", fallback=None),
               _strs(cp.get("metadata", "classifiers", fallback="")), cp.get("metadata", "version", fallback=None))
    found.add(_strs(cp.get("options", "install_requires", fallback="")), "setup.cfg install_requires")
    if cp.has_section("options.extras_require"):
        extras = {normalize(k): _strs(v) for k, v in cp.items("options.extras_require")}
        for key in TEST_EXTRAS:
            if key in extras:
                found.add(_expand(extras, key, found.names), f"setup.cfg extras_require {key}")


def _requirements(tree: dict[str, str], path: str, seen: set[str], depth: int = 0) -> list[str]:
    """A requirements file's lines, ``-r``/``-c`` includes followed inside the tree (bounded, no cycles). ``seen``
    is shared by all the files one spec reads: each is read once (a thousand ``-r big.txt`` read it once)."""
    if path in seen or depth >= MAX_INCLUDES or path not in tree:
        return []
    seen.add(path)
    if "autogenerated by pip-compile" in tree[path][:2048]:  # a lock (glom's, for 3.7, tox's own tools in it):
        # its pins are constraints (envlocks); the requirements are what it was compiled from, when that is here
        source = path.rsplit(".", 1)[0] + ".in"
        return _requirements(tree, source, seen, depth + 1) if source != path else []
    out: list[str] = []
    here = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    for line in re.sub(r"\\\r?\n", " ", tree[path]).split("\n"):  # a continued line (pip-compile's) is one
        line = line.split(" #", 1)[0].strip()
        m = re.match(r"^(-r|--requirement)\s*(\S+)$", line)
        if m:
            target = m.group(2).replace("{toxinidir}/", "")
            out += _requirements(tree, target if target in tree else here + target, seen, depth + 1)
        elif line and not line.startswith("#"):
            out.append(line)
    return out


def _tox(tree: dict[str, str], found: _Found, seen: set[str]) -> None:
    cp = _ini(tree["tox.ini"], "tox.ini", found)
    if cp is None or not cp.has_section("testenv"):
        return
    reqs: list[str] = []
    for line in _strs(cp.get("testenv", "deps", fallback="")):
        line = re.sub(r"^[\w.,!-]+:\s+", "", line.strip())  # a factor-conditional line: "py38: mock"
        if "{" in line and not line.startswith("-r"):
            found.dropped.append(f"{shown(line)} (a tox substitution) in tox.ini [testenv] deps")
            continue
        m = re.match(r"^-r\s*(\S+)$", line)
        reqs += _requirements(tree, m.group(1).replace("{toxinidir}/", ""), seen) if m else [line]
    found.add(_no_installers(reqs, "tox.ini [testenv] deps", found), "tox.ini [testenv] deps")


def _no_installers(reqs: list[str], where: str, found: _Found) -> list[str]:
    """``reqs`` without the tools a test environment installs the project with (rich's tox ``deps = poetry``
    runs ``poetry install``): what they install is the project's own tables, read above; the tool is named."""
    tools = [r for r in reqs if name_of(r) in INSTALLERS]
    found.dropped += [f"{shown(r)} (an installer: the project's own dependencies are read instead) in {where}"
                      for r in tools]
    return [r for r in reqs if r not in tools]


def derive(tree: dict[str, str], *, own: Iterable[str] = (), swebench: dict[str, str] | None = None,
           date: str | None = None) -> dict[str, Any]:
    """The environment spec of a base tree; ``own`` are the modules under test (never requirements); ``date``
    (the fix's, YYYY-MM-DD) picks the Python and the date the resolution is made as of."""
    found = _Found()
    if "pyproject.toml" in tree:
        _pyproject(tree["pyproject.toml"], found)
    if "setup.cfg" in tree:
        _setup_cfg(tree["setup.cfg"], found)
    if "setup.py" in tree:
        _setup_py(tree["setup.py"], found)
    seen: set[str] = set()
    for path in sorted(p for p in tree if _REQ_FILE.match(p)):
        found.add(_requirements(tree, path, seen), path)
    if "tox.ini" in tree:
        _tox(tree, found, seen)
    if "noxfile.py" in tree:
        found.add(_no_installers(envlocks.nox_deps(tree["noxfile.py"]), "noxfile.py test sessions", found),
                  "noxfile.py test sessions")
    if not found.reqs and "requirements.txt" in tree:
        found.add(_requirements(tree, "requirements.txt", set()), "requirements.txt")
    names = found.names | {normalize(o) for o in own}
    spec = finish(found.reqs, found.sources, found.dropped, names=names, requires=found.requires,
                  classifiers=found.classifiers, swebench=swebench, origins=found.origins, date=date)
    locked = envlocks.pins(tree, names)
    if locked["constraints"]:  # what the repository itself locks decides versions (never adds packages)
        spec.update(constraints=locked["constraints"], constraintSources=locked["constraintSources"])
    spec["dropped"] += locked["dropped"]
    if locked["lockedTwice"]:
        spec["lockedTwice"] = locked["lockedTwice"]
    if found.project:  # importlib.metadata.version("marshmallow") must answer: the grader gives it this much
        spec["distribution"] = {"name": found.project, "version": found.version or "0.0.0"}
    if found.version_file and found.version_file not in tree and _VERSION_PATH.match(found.version_file) \
            and ".." not in found.version_file.split("/"):
        spec["versionFile"] = found.version_file
    return spec


def derive_with_fix(base: dict[str, str], fixed: dict[str, str], *, own: Iterable[str] = (),
                    swebench: dict[str, str] | None = None, date: str | None = None) -> dict[str, Any]:
    """:func:`derive` of the base tree, plus the requirements the fix's own files add (``addedByFix``): the hidden
    tests are the fix's, and a fix may declare what they need (jsonschema b5572c9's noxfile installs
    ``jsonpath-ng``, which its new test imports; derived at the base alone, the image lacked it)."""
    own = list(own)  # read twice
    spec = derive(base, own=own, swebench=swebench, date=date)
    if not fixed:
        return spec
    have = {name_of(r) for r in spec["requirements"]}
    after = derive({**base, **fixed}, own=own, swebench=swebench, date=date)
    added = [r for r in after["requirements"] if name_of(r) not in have]
    if added:
        spec["requirements"] = [*spec["requirements"], *added]
        spec["addedByFix"] = added
    return spec


def build_files(spec: dict[str, Any] | None, tree: dict[str, str]) -> dict[str, str]:
    """Files a project's build writes that its package imports (hatch-vcs's ``src/humanize/_version.py``): the
    workspace gets them as ``pip install -e .`` would, else the package cannot even be imported."""
    path = (spec or {}).get("versionFile")
    return {path: VERSION_FILE} if isinstance(path, str) and path not in tree else {}


def finish(reqs: list[str], sources: list[str], dropped: list[str], *, names: set[str], requires: str | None,
           classifiers: list[str], python: str | None = None, swebench: dict[str, str] | None = None,
           origins: list[str] | None = None, date: str | None = None) -> dict[str, Any]:
    """The spec document: one requirement per name (:func:`envlocks.one_per_name`, conflicts named), the
    package under test left out, pytest added; with the fix's ``date``, the date the resolution is made as of."""
    excluded: set[str] = set()
    dropped = list(dropped)
    where = origins if origins is not None and len(origins) == len(reqs) else [""] * len(reqs)
    pairs = list(dict.fromkeys(zip(reqs, where, strict=True)))
    if len(pairs) > MAX_REQUIREMENTS:
        dropped.append(f"{len(pairs) - MAX_REQUIREMENTS} more lines in the requirements (over {MAX_REQUIREMENTS} "
                       "requirements)")
        pairs = pairs[:MAX_REQUIREMENTS]
    entries: list[tuple[str, str]] = []
    for r, w in pairs:
        admitted, refused = sort_out([r])  # what the readers kept passes again; a user's file passes here first
        dropped += refused
        name = name_of(admitted[0]) if admitted else None
        if name is not None and name in names:
            excluded.add(name)
        elif name is not None:
            entries.append((admitted[0], w))
    kept, conflicts = envlocks.one_per_name(entries)
    if "pytest" not in {name_of(r) for r in kept}:
        kept.append("pytest")  # the grader's own pytest comes from the environment, never the host
    day = date if date is not None and _DAY.match(date) else None
    if python is not None and python not in PYTHONS:
        raise UsageError(f"--python {python}: expected one of {', '.join(PYTHONS)} (a Debian suite's python3)")
    chosen = python or choose_python(requires, classifiers, day)
    spec: dict[str, Any] = {
        "schema": SCHEMA, "python": chosen, "requirements": kept,
        "pythonRequires": requires, "classifierPythons": sorted(set(classifiers), key=version_key),
        "sources": sources, "dropped": dropped, "package": sorted(names), "excluded": sorted(excluded)}
    if conflicts:
        spec["conflicts"] = conflicts
    if day is not None:  # resolved as the index was then, even before the image's Python existed (a release
        # with no wheel for it moves the resolution a year on: lock._attempts); the fix's own pytest runs its tests
        spec.update(fixDate=day, resolvedAsOf=day)
    if swebench:
        spec["swebench"] = swebench
    return spec


def override(spec: dict[str, Any], *, requirements: str | None, python: str | None, what: str) -> dict[str, Any]:
    """The spec with the user's ``--requirements FILE`` text and/or ``--python X.Y`` in place of the derived."""
    if requirements is None and python is None:
        return spec
    reqs = [ln.split(" #", 1)[0].strip(" \t\r") for ln in requirements.split("\n")] if requirements is not None \
        else spec["requirements"]
    reqs = [r for r in reqs if r and not r.startswith("#")]
    out = finish(reqs, [what] if requirements is not None else spec["sources"],
                 spec["dropped"] if requirements is None else [],
                 names=set(spec["package"]), requires=spec["pythonRequires"],
                 classifiers=spec["classifierPythons"], python=python or spec["python"],
                 swebench=spec.get("swebench"), date=spec.get("fixDate"),
                 origins=[what] * len(reqs) if requirements is not None else None)
    keep = ("distribution", "versionFile") + (("constraints", "constraintSources") if requirements is None else ())
    out.update({k: spec[k] for k in keep if k in spec})
    out["overridden"] = [k for k, v in (("requirements", requirements), ("python", python)) if v is not None]
    return out


__all__ = ["derive", "override", "spec_digest"]
