"""The architecture is enforced, not described: layers, no cycles, small modules, reason codes as data."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import acx_oci
from acx_oci import errors

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "acx_oci"
LINT_IMPORTS = shutil.which("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS, "lint-imports (import-linter) is not installed: pip install -e '.[test]'"
    return subprocess.run([LINT_IMPORTS, "--config", str(tree / "pyproject.toml"), "--no-cache"], cwd=tree,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copytree(PACKAGE, tree / "acx_oci", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_layer_contracts_hold() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    # the roles in services/ (issue 36): the gateway and the consumer never reach the verifier's code, the
    # artifacts neither side's
    ("gateway/app.py", "from acx_oci.services.verifier import ledger", "never import services.verifier"),
    ("services/consumer/copy.py", "import acx_oci.services.verifier.log_publish", "never import services.verifier"),
    ("services/artifacts/cartridge.py", "from acx_oci.services.consumer import resolve", "artifacts imports neither"),
    ("services/artifacts/log_reader.py", "from acx_oci.services.verifier import log_tree", "artifacts imports neither"),
    ("crypto/jcs.py", "import requests", "pure core"),
    ("model/credential.py", "import requests", "pure core"),
    ("trust/did.py", "import sqlite3", "pure core"),
    ("model/rating.py", "from acx_oci.services.verifier import attest", "Layers"),
    ("crypto/digest.py", "from acx_oci import files", "read no files"),
    # the judge decides on bytes already fetched: an HTTPS import in evaluation breaks the pure core (not the
    # layers, which let evaluation sit above net)
    ("evaluation/judge.py", "import acx_oci.net.https", "pure core"),
])
def test_linter_fails_on_a_back_arrow(tmp_path: Path, module: str, line: str, contract: str) -> None:
    """A deliberately broken copy: the linter must say which contract broke."""
    tree = _copy(tmp_path)
    target = tree / "acx_oci" / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    result = _lint(tree)
    assert result.returncode != 0
    broken = [ln for ln in result.stdout.splitlines() if ln.rstrip().endswith("BROKEN")]
    assert any(contract in ln for ln in broken) or contract in result.stdout.split("Broken contracts")[-1], \
        result.stdout[-3000:]


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    adj = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in adj:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            for j in range(i, len(adj[node])):
                nxt = adj[node][j]
                if nxt not in index:
                    work.append((node, j + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_no_import_cycle() -> None:
    graph = grimp.build_graph("acx_oci")
    assert len(graph.modules) > 40
    assert _cycles(graph) == []


def test_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    """The check above could not pass vacuously: a planted cycle is found."""
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyc import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyc import a\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert _cycles(grimp.build_graph("cyc")) == [["cyc.a", "cyc.b"]]
    finally:
        sys.path.remove(str(tmp_path))


def test_no_module_over_450_lines() -> None:
    big = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 450}
    assert big == {}


def test_no_reason_code_from_message_text() -> None:
    pattern = re.compile(r'in str\((exc|e)\)|in msg|getattr\(exc, "code"\)')
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in PACKAGE.rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []


def _error_classes() -> list[type[errors.AcxError]]:
    return [c for _, c in inspect.getmembers(errors, inspect.isclass)
            if issubclass(c, errors.AcxError) and c.__module__ == errors.__name__]


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_reason_and_exit_code_come_from_the_type(cls: type[errors.AcxError]) -> None:
    """A misleading message changes nothing: code and exit code are class data."""
    misleading = "digest mismatch; revoked; expired; older than; not found; HTTP 503; self_issued"
    exc = cls(misleading) if cls is not errors.PolicyUnreadable else cls(misleading, None)
    assert exc.code == cls.code and exc.exit_code == cls.exit_code
    assert re.fullmatch(r"[a-z_]+", exc.code)
    assert exc.exit_code in (1, 2, 3)


def test_every_error_class_is_drawn_in_the_tree() -> None:
    doc = errors.__doc__ or ""
    for cls in _error_classes():
        assert re.search(rf"\b{cls.__name__}\b.*\b{cls.code}\b", doc) or cls.code in doc, cls.__name__


def test_no_exception_class_outside_errors() -> None:
    """One hierarchy: AcxError subclasses live in errors.py only."""
    defined = [f"{p.relative_to(ROOT)}:{m.group(1)}" for p in PACKAGE.rglob("*.py") if p.name != "errors.py"
               for m in re.finditer(r"^class (\w+)\((?:\w+Error|AcxError|Exception)\)", p.read_text(), re.M)]
    assert defined == [], defined


def test_package_version_is_importable() -> None:
    assert acx_oci.__version__


def _long_functions(root: Path, limit: int = 100) -> dict[str, int]:
    """``path:qualified.name`` -> lines, for every def/async def (methods and nested ones too) over ``limit``."""
    import ast

    found: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                if (n := (child.end_lineno or child.lineno) - child.lineno + 1) > limit:
                    found[f"{where}:{name}"] = n
                walk(child, name + ".<locals>.", where)
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".", where)
            else:
                walk(child, prefix, where)

    for p in sorted(root.rglob("*.py")):
        walk(ast.parse(p.read_text()), "", p.relative_to(root.parent).as_posix())
    return found


# Long functions in files other branches are reshaping right now; the lead empties this after merging them.
LONG_FUNCTIONS_ALLOWED: set[str] = set()  # none: every function in acx_oci/ is at most 100 lines


def test_no_function_over_100_lines() -> None:
    long = _long_functions(PACKAGE)
    assert {k: n for k, n in long.items() if k not in LONG_FUNCTIONS_ALLOWED} == {}


def test_function_length_check_sees_methods_and_nested_functions(tmp_path: Path) -> None:
    """The check above could not pass vacuously: a long method and a long nested function are found."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()

    def lines(indent: str, n: int) -> str:
        return "".join(f"{indent}x = {i}\n" for i in range(n))

    (pkg / "m.py").write_text("def short():\n" + lines("    ", 99)  # 100 lines: at the limit, allowed
                              + "class C:\n    async def long(self):\n" + lines("        ", 100)
                              + "def outer():\n    def inner():\n" + lines("        ", 100))
    assert _long_functions(pkg) == {"pkg/m.py:C.long": 101, "pkg/m.py:outer": 102,
                                    "pkg/m.py:outer.<locals>.inner": 101}


def test_one_junit_report_parser() -> None:
    """Grading reads pytest's junit XML in one place (``sandbox.grader.parse_junit``), so one verdict rules."""
    import ast

    parsers = sorted({p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py")
                      for node in ast.walk(ast.parse(p.read_text()))
                      if isinstance(node, ast.Constant) and node.value in ("testcase", "testsuite", "testsuites")}
                     | {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py")
                        if re.search(r"^\s*(import xml|from xml)", p.read_text(), re.M)})
    assert parsers == ["acx_oci/sandbox/grader.py"]
