"""The documentation holds together: a short README, links that land, no citation of a document the repository
lacks, no private jargon, and a CLI reference that is exactly what ``--help`` prints.

Links and anchors are checked the way GitHub renders them (a heading's anchor is its text lower-cased, with
punctuation other than ``-`` and ``_`` dropped and spaces turned into ``-``); fenced code is not markdown.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from acx_oci.cli import load_all
from acx_oci.cli.reference import REGENERATE, render

from .support.env import ROOT

main = load_all()  # the group is lazy: these tests walk every command's options

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, ROOT / "DESIGN.md", *sorted(DOCS.glob("*.md"))]
# Pages that may be linked before they exist (none now: docs/reasons.md is generated and committed).
PENDING: set[Path] = set()
# Where a comment, docstring or page may cite a document: the package, tests, scripts, benchmarks, test data, docs.
SOURCES = [*sorted((ROOT / "acx_oci").rglob("*.py")), *sorted((ROOT / "tests").rglob("*.py")),
           *sorted((ROOT / "scripts").glob("*")), *sorted((ROOT / "benchmarks").glob("*.py")),
           *sorted((ROOT / "testdata").rglob("README.md")), ROOT / "pyproject.toml", *PAGES]

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")
CITED_DOC = re.compile(r"(?<![\w/.-])((?:docs/)?[\w-]+\.md)(?![\w/])")
CITED_HEADING = re.compile(r"(?<![\w/.-])(README(?:\.md)?|DESIGN\.md|docs/[\w-]+\.md)[,:]?\s+\(?[\"“]([^\"”\n]+)[\"”]")
# The design briefs the project started from, cited by number or by their folder: not shipped, so not citable.
SEED_CITATION = re.compile(r"\bseed\s+`?0\d\d|\bseeds/|\bseed vocabulary\b", re.I)


def _prose(text: str) -> str:
    """Markdown with fenced code blocks and inline code removed (neither holds links or headings)."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(page: Path) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", FENCE.sub("", page.read_text("utf-8")),
                                                   flags=re.M)]


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for h in headings(page):
        s = slug(h)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def _links(page: Path) -> Iterator[tuple[str, Path, str]]:
    for target in LINK.findall(_prose(page.read_text("utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ... (not relative)
            continue
        path, _, anchor = target.partition("#")
        yield target, (page.parent / path).resolve() if path else page, anchor


def broken_links(page: Path) -> list[str]:
    problems = []
    for target, dest, anchor in _links(page):
        if not dest.is_file():
            if dest not in PENDING:
                problems.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{target}: no heading #{anchor} in {_shown(dest)}")
    return problems


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = README.read_text("utf-8")
    assert len(text.splitlines()) <= 250
    blocks = re.findall(r"^```sh\n(.*?)^```$", text, flags=re.S | re.M)
    assert blocks[:2] == ["pip install -e . && acx-oci demo\n", "bash scripts/test.sh\n"]
    assert text.index("pip install -e . && acx-oci demo") < 400  # the very first thing a reader sees


def test_every_relative_link_resolves_to_a_file_and_a_heading() -> None:
    assert len(PAGES) >= 9, [p.name for p in PAGES]  # README, DESIGN.md and the docs/ pages
    problems = {p.relative_to(ROOT).as_posix(): broken_links(p) for p in PAGES}
    assert not {k: v for k, v in problems.items() if v}


def test_the_link_check_catches_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n## A section\n\n[ok](#a-section) [gone](nowhere.md) [bad](#no-such)\n"
                    "```sh\n[not a link](nowhere-either.md)\n```\n", "utf-8")
    assert broken_links(page) == ["nowhere.md: no such file", f"#no-such: no heading #no-such in {page}"]


def _citations() -> Iterator[tuple[Path, str]]:
    for src in SOURCES:
        if src.is_file():
            yield src, src.read_text("utf-8", errors="replace")


def test_no_file_cites_a_document_the_repository_lacks() -> None:
    known_data = {"SKILL.md", "PROMPT.md", "prompt.md", "NOTES.md", "notes.md", "P.md", "big.md", "leak.md"}
    problems = []
    for src, text in _citations():
        where = src.relative_to(ROOT).as_posix()
        for name in sorted(set(CITED_DOC.findall(text)) - known_data):
            # a page under docs/, or a document named in capitals (README.md, DESIGN.md): at the root or beside the file
            if not (name.startswith("docs/") or name[:-3].isupper()):
                continue
            if not any(p.is_file() or p in PENDING for p in (ROOT / name, src.parent / name)):
                problems.append(f"{where}: cites {name}, which is not in the repository")
        for doc, heading in CITED_HEADING.findall(text):
            target = ROOT / (doc if doc.endswith(".md") else doc + ".md")
            if not target.is_file():
                problems.append(f"{where}: cites {doc}, which is not in the repository")
                continue
            want = heading.replace("`", "").lower()
            if not any(h.replace("`", "").lower().startswith(want) for h in headings(target)):
                problems.append(f"{where}: cites {doc} \"{heading}\", which has no such heading")
        problems += [f"{where}: cites {m.group(0)!r}" for m in SEED_CITATION.finditer(text)]
    assert not problems, "\n".join(problems)


def test_readme_and_docs_speak_no_seed_jargon() -> None:
    pages = [README, *sorted(DOCS.glob("*.md"))]
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in pages
            for n, line in enumerate(p.read_text("utf-8").splitlines(), 1) if re.search(r"\bseeds?\b", line, re.I)]
    assert not hits, "\n".join(hits)


def test_quick_start_commands_are_the_walk_throughs() -> None:
    """The README's short quick start is a subset of the walk-through CI runs, so it cannot rot on its own."""
    quick = README.read_text("utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^```sh\n(.*?)^```$", quick, flags=re.S | re.M)[0]
    def lines(script: str) -> list[str]:
        return [" ".join(line.split("#", 1)[0].split()) for line in script.replace("\\\n", " ").splitlines()]

    walk = "\n".join(lines((DOCS / "getting-started.md").read_text("utf-8").replace("$REG", "localhost:5000")))
    quick_lines = [line for line in lines(commands) if line]
    assert len(quick_lines) >= 5
    assert [line for line in quick_lines if line not in walk] == []


def cli_reference_drift() -> str:
    """The unified diff between docs/cli.md and what the commands' ``--help`` renders today ('' when equal)."""
    have = (DOCS / "cli.md").read_text("utf-8")
    want = render()
    if have == want:
        return ""
    return "".join(difflib.unified_diff(have.splitlines(True), want.splitlines(True), "docs/cli.md", "--help"))


def test_cli_reference_is_what_help_prints() -> None:
    drift = cli_reference_drift()
    assert not drift, f"docs/cli.md is stale; regenerate it: {REGENERATE}\n{drift[:4000]}"


def test_cli_reference_covers_every_command() -> None:
    text = (DOCS / "cli.md").read_text("utf-8")

    def walk(group: click.Group, prefix: str) -> Iterator[str]:
        for name, cmd in group.commands.items():
            yield f"{prefix} {name}"
            if isinstance(cmd, click.Group):
                yield from walk(cmd, f"{prefix} {name}")

    names = list(walk(main, "acx-oci"))
    assert len(names) > 40
    missing = [n for n in names if f"\n## {n}\n" not in text or f"Usage: {n} " not in text]
    assert not missing


@pytest.mark.parametrize("change", ["docstring", "option"])
def test_a_changed_help_is_caught(monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    """The drift check itself: one word of one command's help changes, and the reference no longer matches."""
    assert cli_reference_drift() == ""
    resolve = main.commands["resolve"]
    if change == "docstring":
        monkeypatch.setattr(resolve, "help", (resolve.help or "") + " Changed.")
    else:
        option = next(p for p in resolve.params if isinstance(p, click.Option) and p.help)
        monkeypatch.setattr(option, "help", f"{option.help} Changed.")
    drift = cli_reference_drift()
    assert "Changed." in drift and drift.startswith("--- docs/cli.md")


def test_cli_reference_does_not_depend_on_what_ran_first() -> None:
    """click caches a command's help option once built: after real ``-h`` invocations the reference is the same."""
    from click.testing import CliRunner

    from acx_oci.cli import main

    for args in (["--help"], ["resolve", "-h"], ["attest", "--help"]):
        assert CliRunner().invoke(main, args).exit_code == 0
    assert not cli_reference_drift()


def test_every_command_has_a_help_example() -> None:
    """concepts.md promises an example in every command's ``--help``: each leaf command's help has one."""

    def leaves(group: click.Group, prefix: str) -> Iterator[tuple[str, click.Command]]:
        for name, cmd in group.commands.items():
            if isinstance(cmd, click.Group):
                yield from leaves(cmd, f"{prefix} {name}")
            else:
                yield f"{prefix} {name}", cmd

    missing = [path for path, cmd in leaves(load_all(), "acx-oci")
               if not re.search(r"^\s*Examples?\b[^\n]*:\n\s+acx-oci ", cmd.help or "", re.M)]
    assert not missing, f"no 'Example:' with an acx-oci command line in --help of: {missing}"
