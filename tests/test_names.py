"""One name, one thing: a reader who meets a name in acx_oci meets one concept, wherever it is imported from."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from acx_oci.urls import split_fragment, without_fragment

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "acx_oci"


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(), filename=str(p)) for p in sorted(PACKAGE.rglob("*.py"))}


def duplicate_classes(trees: dict[Path, ast.Module]) -> dict[str, list[str]]:
    """Every public class name defined in more than one place, with where."""
    seen: dict[str, list[str]] = defaultdict(list)
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen[node.name].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return {name: where for name, where in seen.items() if len(where) > 1}


def test_no_two_public_classes_share_a_name() -> None:
    dups = duplicate_classes(_trees())
    assert not dups, "public class names defined more than once (rename so each says what it is): " + "; ".join(
        f"{name} at {', '.join(where)}" for name, where in sorted(dups.items()))


def test_the_scan_sees_a_duplicate() -> None:
    planted = {ROOT / "acx_oci/a.py": ast.parse("class Verdict:\n    pass\n"),
               ROOT / "acx_oci/b.py": ast.parse("def f():\n    class Verdict:\n        pass\n"),
               ROOT / "acx_oci/c.py": ast.parse("class _Private:\n    pass\nclass _Private:\n    pass\n")}
    assert duplicate_classes(planted) == {"Verdict": ["acx_oci/a.py:1", "acx_oci/b.py:2"]}


_FRAGMENT_CUT = re.compile(r"""\.(?:r?split|r?partition)\(\s*(?:sep\s*=\s*)?["']#["']""")


def fragment_cuts(sources: dict[str, str]) -> list[str]:
    """Every inline cut at ``#`` (``split``, ``rsplit``, ``partition``, ``rpartition``) outside acx_oci/urls.py."""
    return [f"{name}:{i}: {line.strip()}" for name, text in sources.items() if name != "acx_oci/urls.py"
            for i, line in enumerate(text.splitlines(), 1) if _FRAGMENT_CUT.search(line)]


def test_a_urls_fragment_is_cut_in_one_helper() -> None:
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in sorted(PACKAGE.rglob("*.py"))}
    found = fragment_cuts(sources)
    assert not found, "cut a URL's fragment with acx_oci.urls.without_fragment / split_fragment: " + "; ".join(found)
    planted = {"acx_oci/x.py": 'a = did.split("#", 1)[0]\nb, _, c = u.partition(\'#\')\nd = u.rsplit(sep="#")\n',
               "acx_oci/urls.py": 'base, _, fragment = url.partition("#")\n'}
    assert [f.split(":")[1] for f in fragment_cuts(planted)] == ["1", "2", "3"]


def test_the_fragment_helper_cuts_at_the_first_hash() -> None:
    assert without_fragment("did:web:example.com#key-1") == "did:web:example.com"
    assert without_fragment("did:key:z6Mk") == "did:key:z6Mk"
    assert split_fragment("pkg:pypi/a@1#src/x#y") == ("pkg:pypi/a@1", "src/x#y")
    assert split_fragment("https://h/lists/u") == ("https://h/lists/u", "")


def any_kwargs(trees: dict[Path, ast.Module]) -> list[str]:
    """Every function whose ``**`` parameter is typed ``Any`` (what it takes is then hidden from mypy)."""
    return [f"{path.relative_to(ROOT)}:{node.lineno} {node.name}(**{node.args.kwarg.arg})"
            for path, tree in trees.items() for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.args.kwarg is not None
            and isinstance(ann := node.args.kwarg.annotation, ast.Name | ast.Attribute)
            and (ann.id if isinstance(ann, ast.Name) else ann.attr) == "Any"]


def test_no_use_case_takes_kwargs_typed_any() -> None:
    services = {p: t for p, t in _trees().items() if p.is_relative_to(PACKAGE / "services")}
    found = any_kwargs(services)
    assert not found, "a use case's options are named and typed (explicit parameters or a TypedDict with " \
                      "Unpack), never **kwargs: Any: " + "; ".join(found)
    planted = {ROOT / "acx_oci/services/x.py": ast.parse(
        "def a(**kwargs: Any): ...\ndef b(**kw: typing.Any): ...\ndef c(**kw: Unpack[O]): ...\n"
        "async def d(**_: object): ...\n")}
    assert [f.split(" ")[1] for f in any_kwargs(planted)] == ["a(**kwargs)", "b(**kw)"]


def test_cli_options_reach_commands_as_parameters() -> None:
    # ctx.meta holds the run's JSON record only (cli/main.py, cli/jsonout.py); an option hidden there
    # (a callback storing it) is invisible in the command's signature and to mypy.
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((PACKAGE / "cli").glob("*.py"))
             if p.name not in ("main.py", "jsonout.py")
             for i, line in enumerate(p.read_text().splitlines(), 1) if ".meta[" in line or ".meta.get(" in line]
    assert not found, "an option kept in click's ctx.meta instead of a parameter: " + "; ".join(found)
