"""One vocabulary of reasons: each code is spelt once, in ``acx_oci/reasons.py``; the docs come from it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from acx_oci import errors, reasons

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "acx_oci"
#: Words that are reason codes *and* ordinary JSON member names or states (``{"error": ...}``).
COMMON_WORDS = {"error"}


def _literals(path: Path) -> list[tuple[int, str]]:
    """Code-valued string literals in a module, except dict keys, subscripts and ``__all__`` (names, not codes)."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            skip |= {id(k) for k in node.keys if k is not None}
        elif isinstance(node, ast.Subscript):
            skip.add(id(node.slice))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip |= {id(e) for e in ast.walk(node.value)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in reasons.REASONS
            and n.value not in COMMON_WORDS and id(n) not in skip]


def test_every_exception_code_is_in_the_vocabulary_with_its_exit_code() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.AcxError)]
    assert len(classes) > 20
    for cls in classes:
        reason = reasons.REASONS.get(cls.code)
        assert reason is not None, f"{cls.__name__}.code {cls.code!r} is not in acx_oci/reasons.py"
        assert reason.exit_code == cls.exit_code, f"{cls.__name__}: exit {cls.exit_code}, vocabulary {reason.exit_code}"


def test_docs_table_is_generated_from_the_vocabulary() -> None:
    doc = (ROOT / "docs" / "reasons.md").read_text()
    assert doc == reasons.markdown(), "docs/reasons.md drifted: python -m acx_oci.reasons > docs/reasons.md"
    assert all(f"| `{code}` |" in doc for code in reasons.REASONS)


def test_a_code_is_defined_once() -> None:
    try:
        reasons._r("sigma_gate", "check", 1, "again")
    except ValueError as exc:
        assert "twice" in str(exc)
    else:
        raise AssertionError("a second definition of sigma_gate was accepted")


def test_no_module_spells_a_code_itself() -> None:
    """Outside the vocabulary a code is a name (``reasons.SIGMA_GATE``), never a string a typo could change."""
    found = {f"{p.relative_to(ROOT)}:{line}: {code}" for p in sorted(PACKAGE.rglob("*.py"))
             if p.name != "reasons.py" for line, code in _literals(p)}
    assert found == set()


def test_the_issues_six_codes_live_in_one_file() -> None:
    """The acceptance check as written: each is a string literal in exactly one file under acx_oci/."""
    for code in ("schema_invalid", "status_rollback", "status_unknown", "containment_unproven", "self_issued",
                 "fetch_failed"):
        files = [p for p in PACKAGE.rglob("*.py") if f'"{code}"' in p.read_text() or f"'{code}'" in p.read_text()]
        assert [p.relative_to(ROOT).as_posix() for p in files] == ["acx_oci/reasons.py"], code


def test_attest_and_verify_name_the_gate_with_the_same_codes() -> None:
    """One spelling per concept: a run refused at the gate and a credential refused at it say the same code."""
    from acx_oci.model.rating import Rating
    from acx_oci.rating.engine import gate

    said = gate(Rating(mu=25.0, sigma=3.0), rated=4, sigma_max=1.5, min_games=30)
    assert [r.split(":")[0] for r in said] == [reasons.SIGMA_GATE, reasons.GAMES_GATE]
    verify_src = (PACKAGE / "evaluation" / "verify.py").read_text()
    assert "reasons.SIGMA_GATE" in verify_src and "reasons.GAMES_GATE" in verify_src
