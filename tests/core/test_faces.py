"""Declared faces: every wing says in its ``__init__`` what it offers (``__all__``), and callers from other wings
import that face, not the modules behind it. The faces are lazy (:mod:`acx_oci.faces`), so they cost nothing."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from ..support.env import ROOT

PACKAGE = ROOT / "acx_oci"
#: Wings whose face imports eagerly: the CLI's is its entry point (``main``), needed whenever it is imported.
EAGER = {"cli"}
#: Cross-wing deep imports a face cannot carry, each with why. Keep it short: a new entry needs a reason.
#: (Besides these, a function named as its own module, ``from acx_oci.crypto.seal import seal``, is imported from
#: that module: a face exporting it would shadow the submodule on the package, so ``acx_oci.crypto.seal`` would be
#: the function and ``mock.patch`` paths through it would break. :func:`deep_cross_wing_imports` skips those.)
ALLOWED = {
    # ANN_ID and ANN_VERSION: the benchmark's and the ROM's annotation keys, one name each in two modules.
    ("acx_oci/services/artifacts/benchmark.py", "acx_oci.model.benchmark"),
    ("acx_oci/services/artifacts/cartridge.py", "acx_oci.model.rom"),
}


def _wing(module: str) -> str | None:
    """``acx_oci.services.consumer.resolve`` -> ``services.consumer``; ``acx_oci.model.rom`` -> ``model``."""
    parts = module.split(".")
    if parts[0] != "acx_oci" or len(parts) < 3:
        return None
    return ".".join(parts[1:3]) if parts[1] == "services" and len(parts) >= 4 else parts[1]


def _module_of(path: Path, base: Path) -> str:
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _wings() -> list[str]:
    """Every package under acx_oci and acx_oci/services that holds Python modules."""
    found = []
    for init in sorted([*PACKAGE.glob("*/__init__.py"), *PACKAGE.glob("services/*/__init__.py")]):
        wing = init.parent.relative_to(PACKAGE).as_posix().replace("/", ".")
        if wing != "services" and any(p.name != "__init__.py" for p in init.parent.glob("*.py")):
            found.append(wing)
    return found


def deep_cross_wing_imports(tree: Path) -> list[tuple[str, str]]:
    """``(file, module)`` for each ``from acx_oci.<wing>.<sub> import ...`` in a module of another wing (bar
    ``from acx_oci.<wing>.<sub> import <sub>``: a function named as its module, which a face cannot carry)."""
    found = []
    for path in sorted(tree.rglob("*.py")):
        own = _wing(_module_of(path, tree.parent) + ".x")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                wing = _wing(node.module + ".x")
                named_as_module = all(a.name == node.module.rpartition(".")[2] for a in node.names)
                if wing is not None and wing != own and node.module != f"acx_oci.{wing}" and not named_as_module:
                    found.append((path.relative_to(tree.parent).as_posix(), node.module))
    return found


def test_callers_from_other_wings_import_the_face() -> None:
    """Inside a wing, modules import their siblings; across wings, only the face (bar the listed exceptions)."""
    assert set(deep_cross_wing_imports(PACKAGE)) == ALLOWED


def _declared(wing: str) -> tuple[dict[str, str], list[str]]:
    """A face's ``TYPE_CHECKING`` imports (name -> module) and its ``__all__``."""
    tree = ast.parse((PACKAGE / wing.replace(".", "/") / "__init__.py").read_text())
    imports: dict[str, str] = {}
    exported: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If):
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom) and inner.module:
                    imports.update({a.asname or a.name: inner.module for a in inner.names})
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            exported = list(ast.literal_eval(node.value))
    return imports, exported


def test_every_wing_declares_a_face_and_what_it_runs_is_what_it_declares() -> None:
    """Each name in ``__all__`` is imported for mypy under ``TYPE_CHECKING`` and resolves at run time to that
    very object; each wing's docstring shows it in use."""
    wings = _wings()
    assert {"model", "oci", "crypto", "services.consumer", "services.verifier"} <= set(wings)
    for wing in wings:
        face = importlib.import_module(f"acx_oci.{wing}")
        assert face.__doc__ and "Example::" in face.__doc__, wing
        if wing in EAGER:
            assert face.__all__, wing
            continue
        imports, exported = _declared(wing)
        assert exported and sorted(imports) == sorted(exported), wing
        assert len(set(exported)) == len(exported), wing
        for name, module in imports.items():
            assert getattr(face, name) is getattr(importlib.import_module(module), name), (wing, name)
        assert set(exported) <= set(dir(face)), wing


def test_a_face_costs_nothing_until_a_name_is_used() -> None:
    """Importing every lazy face loads none of the modules behind them; one name loads its module only."""
    faces = [f"acx_oci.{w}" for w in _wings() if w not in EAGER]
    probe = ("import importlib, json, sys\n"
             f"for f in {faces!r}: importlib.import_module(f)\n"
             "before = sorted(m for m in sys.modules if m.startswith('acx_oci'))\n"
             "from acx_oci.tlog import leaf_hash\n"
             "print(json.dumps([before, sorted(m for m in sys.modules if m.startswith('acx_oci'))]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=60, check=True).stdout
    before, after = json.loads(out)
    assert set(before) == {"acx_oci", "acx_oci.faces", "acx_oci.services", *faces}
    assert {m for m in set(after) - set(before) if m.startswith("acx_oci.tlog.")} == {"acx_oci.tlog.merkle"}


def test_the_scan_sees_a_deep_import(tmp_path: Path) -> None:
    """The scan above could not pass vacuously: a planted cross-wing deep import is found, a sibling's is not."""
    wing = tmp_path / "acx_oci" / "rating"
    wing.mkdir(parents=True)
    (wing / "x.py").write_text("from acx_oci.model.rom import build_rom\nfrom acx_oci.rating.engine import rate\n"
                               "from acx_oci.model import Resolution\nfrom acx_oci.crypto.seal import seal\n")
    found = deep_cross_wing_imports(tmp_path / "acx_oci")
    assert [module for _, module in found] == ["acx_oci.model.rom"]
