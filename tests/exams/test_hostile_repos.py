"""``exam import`` of a hostile repository: nothing the repository configures runs, nothing outside it is read.

Every program a repository's own config can name (the keys git honours for ``log``, ``cat-file``, ``ls-tree``,
``rev-parse`` and beyond) is a script that leaves a marker file; the import runs, in git mode and as a SWE-bench
instance, and no marker may appear.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..support.cli import cli
from ..support.jsondoc import check_document
from .test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, commit, git, make_repo, patch

#: config key -> value; "{prog}" is a marker-writing script named after the key.
PROGRAM_KEYS = {
    "gpg.program": "{prog}", "gpg.ssh.program": "{prog}", "gpg.x509.program": "{prog}",
    "core.pager": "{prog}", "pager.log": "{prog}", "diff.external": "{prog}", "core.sshCommand": "{prog}",
    "core.fsmonitor": "{prog}", "core.askPass": "{prog}", "credential.helper": "!{prog}",
    "core.alternateRefsCommand": "{prog}", "filter.evil.smudge": "{prog}", "filter.evil.clean": "{prog}",
    "filter.evil.process": "{prog}", "diff.evil.textconv": "{prog}", "core.editor": "{prog}",
    "uploadpack.packObjectsHook": "{prog}", "core.hooksPath": "{hooks}",
}


def _program(where: Path, name: str) -> Path:
    """A script that records that it ran (and what it was given) in MARKERS/NAME."""
    prog = where / "bin" / name.replace(".", "-")
    prog.parent.mkdir(parents=True, exist_ok=True)
    prog.write_text(f"#!/bin/sh\necho \"$@\" > {where / 'markers' / name}\ncat >/dev/null 2>&1\nexit 0\n")
    prog.chmod(0o755)
    return prog


def _sign(repo: Path, sha: str, branch: str) -> str:
    """``sha`` rewritten with a gpgsig header (git verifies it through gpg.program when showSignature is on)."""
    body = git(repo, "cat-file", "commit", sha) + "\n"
    head, _, msg = body.partition("\n\n")
    sig = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    raw = f"{head}\n{sig}\n\n{msg}"
    path = repo.parent / "signed-commit.txt"
    path.write_text(raw)
    new = git(repo, "hash-object", "-t", "commit", "-w", str(path))
    git(repo, "update-ref", f"refs/heads/{branch}", new)
    return new


def _hostile(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A repository whose config names a program through every key, with filters and textconv in its
    attributes, include.path and includeIf files, hooks, and a gpg-signed fix commit."""
    (tmp / "markers").mkdir(parents=True)
    repo = tmp / "r"
    shas = make_repo(repo)
    git(repo, "checkout", "-q", "-b", "attrs", shas["base"])
    base = _sign(repo, commit(repo, {".gitattributes": "* filter=evil diff=evil\n"}, "attributes",
                              "2026-03-03T10:00:00Z"), "attrs")
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "Fix clamp and sign",
                 "2026-03-05T10:00:00Z")
    shas["base"], shas["fix"] = base, _sign(repo, fix, "attrs")
    hooks = tmp / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-merge", "pre-auto-gc", "reference-transaction", "post-index-change"):
        shutil.copy(_program(tmp, f"hook-{hook}"), hooks / hook)
    for key, value in PROGRAM_KEYS.items():
        git(repo, "config", key, value.format(prog=_program(tmp, key), hooks=hooks))
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "filter.evil.required", "true")
    for kind in ("include", "includeif"):
        extra = tmp / f"{kind}.cfg"
        extra.write_text(f"[gpg]\n\tprogram = {_program(tmp, kind)}\n[log]\n\tshowSignature = true\n"
                         f"[core]\n\tpager = {_program(tmp, kind + '-pager')}\n")
    git(repo, "config", "include.path", str(tmp / "include.cfg"))
    git(repo, "config", f"includeIf.gitdir:{repo}/.path", str(tmp / "includeif.cfg"))
    # The hostile config is live: git itself, run plainly in this repository, starts the signature program.
    git(repo, "log", "-1", shas["fix"])
    assert sorted(p.name for p in (tmp / "markers").iterdir()), "the hostile config should run a program"
    for m in (tmp / "markers").iterdir():
        m.unlink()
    return repo, shas


def _git_in(repo: Path, stdin: str, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, check=True, capture_output=True,
                          text=True, env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}).stdout.strip()


def _ran(tmp: Path) -> list[str]:
    return sorted(p.name for p in (tmp / "markers").iterdir())


def test_git_mode_runs_no_program_the_repository_configures(tmp_path: Path) -> None:
    repo, shas = _hostile(tmp_path)
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", shas["fix"],
              "--incomplete", _incomplete(tmp_path), "-o", tmp_path / "suite", "--json")
    doc = check_document("exam import", res.stdout, res.exit_code)
    assert res.exit_code == 0, res.output
    assert _ran(tmp_path) == []
    (e,) = doc["exams"]
    assert e["fixCommit"] == shas["fix"] and e["hiddenTests"] == ["tests/test_calc.py"]
    assert (Path(e["dir"]) / "exam.yaml").is_file()


def _incomplete(tmp: Path) -> Path:
    inc = tmp / "incomplete.patch"
    inc.write_text(patch("calc.py", BASE_CALC, BASE_CALC.replace("    return x\n", "    return max(lo, x)\n")))
    return inc


def test_swebench_mode_runs_no_program_the_repository_configures(tmp_path: Path) -> None:
    repo, shas = _hostile(tmp_path)
    repos = tmp_path / "clones"
    repos.mkdir()
    os.rename(repo, repos / "acme__calc")
    inst = {"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": shas["base"],
            "patch": patch("calc.py", BASE_CALC, FIXED_CALC),
            "test_patch": patch("tests/test_calc.py", "", HIDDEN).replace("--- a/tests/test_calc.py", "--- /dev/null"),
            "FAIL_TO_PASS": ["tests/test_calc.py::test_sign_zero"], "PASS_TO_PASS": [],
            "created_at": "not a date",  # the base commit's date is read from the repository instead
            "incomplete_patch": _incomplete(tmp_path).read_text()}
    jsonl = tmp_path / "i.jsonl"
    jsonl.write_text(json.dumps(inst) + "\n")
    res = cli("exam", "import", "--classification", "public",
              "--swebench", jsonl, "--repos", repos, "-o", tmp_path / "suite", "--json")
    assert res.exit_code == 0, res.output
    assert _ran(tmp_path) == []


def _refused(*args: object) -> str:
    res = cli("exam", "import", "--classification", "public", *args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output, res.output
    return lines[0]


def test_a_symlinked_git_dir_is_refused(tmp_path: Path) -> None:
    repo, shas = _hostile(tmp_path)
    elsewhere = tmp_path / "elsewhere.git"
    os.rename(repo / ".git", elsewhere)
    os.symlink(elsewhere, repo / ".git")
    line = _refused("--repo", repo, "--base", shas["base"], "--fix", shas["fix"], "-o", tmp_path / "suite")
    assert "symlink" in line
    os.unlink(repo / ".git")
    (repo / ".git").write_text(f"gitdir: {elsewhere}\n")  # a gitfile leads off the repository too
    assert ".git is a file" in _refused("--repo", repo, "--base", shas["base"], "--fix", shas["fix"],
                                        "-o", tmp_path / "suite")
    assert _ran(tmp_path) == [] and not (tmp_path / "suite").exists()


def test_objects_reached_through_alternates_or_links_are_never_read(tmp_path: Path) -> None:
    """A commit that lives only in another repository on the host, offered through the repository's
    ``objects/info/alternates`` or a symlinked loose object, is not found."""
    other = tmp_path / "other"
    other_shas = make_repo(other)
    git(other, "checkout", "-q", "-b", "secret", other_shas["base"])
    secret = commit(other, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN, "secret.txt": "host data\n"},
                    "secret", "2026-03-07T10:00:00Z")
    repo = tmp_path / "r"
    shas = make_repo(repo)
    (repo / ".git" / "objects" / "info" / "alternates").write_text(str(other / ".git" / "objects") + "\n")
    git(repo, "update-ref", "refs/heads/borrowed", secret)  # plain git now reads it through the alternates
    assert git(repo, "cat-file", "-t", secret) == "commit"
    line = _refused("--repo", repo, "--base", shas["base"], "--fix", "borrowed", "-o", tmp_path / "suite")
    assert "names no commit" in line and "alternates" in line
    (repo / ".git" / "objects" / "info" / "alternates").unlink()
    loose = other / ".git" / "objects" / secret[:2] / secret[2:]
    assert loose.is_file()
    (repo / ".git" / "objects" / secret[:2]).mkdir(exist_ok=True)
    os.symlink(loose, repo / ".git" / "objects" / secret[:2] / secret[2:])
    assert "names no commit" in _refused("--repo", repo, "--base", shas["base"], "--fix", secret,
                                         "-o", tmp_path / "suite")
    os.rename(repo / ".git" / "objects", tmp_path / "moved-objects")
    os.symlink(tmp_path / "moved-objects", repo / ".git" / "objects")
    assert "not a plain directory" in _refused("--repo", repo, "--base", shas["base"], "--fix", shas["fix"],
                                               "-o", tmp_path / "suite")


def test_submodules_and_gitmodules_commands_do_not_run(tmp_path: Path) -> None:
    (tmp_path / "markers").mkdir()
    repo = tmp_path / "r"
    shas = make_repo(repo)
    prog = _program(tmp_path, "submodule-update")
    git(repo, "checkout", "-q", "-b", "sub", shas["base"])
    (repo / ".gitmodules").write_text(f'[submodule "m"]\n\tpath = m\n\turl = ./m\n\tupdate = !{prog}\n')
    make_repo(repo / "m")  # an embedded repository: `git add` records it as a gitlink (a submodule entry)
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "fix with a submodule",
                 "2026-03-06T10:00:00Z")
    git(repo, "config", "submodule.recurse", "true")
    git(repo, "config", "submodule.m.update", f"!{prog}")
    line = _refused("--repo", repo, "--base", shas["base"], "--fix", fix, "-o", tmp_path / "suite")
    assert "submodule" in line
    assert _ran(tmp_path) == []


def test_a_git_entry_in_a_tree_is_refused(tmp_path: Path) -> None:
    """A hand-made tree holding ``.git/config`` (git refuses to check one out) never reaches a scratch tree."""
    repo = tmp_path / "r"
    shas = make_repo(repo)
    blob = _git_in(repo, "[core]\n\tfsmonitor = /bin/false\n", "hash-object", "-w", "--stdin")
    inner = _git_in(repo, f"100644 blob {blob}\tconfig\n", "mktree")
    top = git(repo, "ls-tree", shas["fix"])
    tree = _git_in(repo, top + f"\n040000 tree {inner}\t.git\n", "mktree")
    bad = git(repo, "commit-tree", tree, "-p", shas["fix"], "-m", "dot git")
    assert ".git" in _refused("--repo", repo, "--base", bad, "--fix", shas["fix"], "-o", tmp_path / "suite")


def test_links_submodules_and_large_files_of_the_base_are_left_out_and_named(tmp_path: Path) -> None:
    """As real repositories have them (pyparsing's docs link, requests' 2 MB logo): the import goes on."""
    repo = tmp_path / "r"
    shas = make_repo(repo)
    git(repo, "checkout", "-q", "-b", "odd", shas["base"])
    os.symlink("../outside.py", repo / "alias.py")  # out of the tree: left out (one to a file of it is that file)
    os.symlink("calc.py", repo / "same.py")
    (repo / "logo.svg").write_text("<svg/>" * 400_000)  # 2.4 MB of text: over the per-file bound
    make_repo(repo / "vendored")  # an embedded repository: a gitlink
    base = commit(repo, {}, "odd files", "2026-03-21T10:00:00Z")
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "fix", "2026-03-22T10:00:00Z")
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", base, "--fix", fix, "-o", tmp_path / "suite",
              "--incomplete", _incomplete(tmp_path), "--json")
    (e,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    left = json.loads((Path(e["dir"]) / "source.json").read_text())["binaryLeftOut"]
    assert left == ["alias.py (symlink)", "logo.svg (2400000 bytes, over 1048576)", "vendored (commit (submodule))"]
    ws = Path(e["dir"]) / "workspace"
    assert (ws / "calc.py").is_file() and not (ws / "alias.py").exists() and not (ws / "logo.svg").exists()
    assert (ws / "same.py").read_text() == (ws / "calc.py").read_text() and not (ws / "same.py").is_symlink()
    assert any("alias.py (symlink)" in n for n in e["notes"])


def test_a_relative_repository_path_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--repo ./calc`` as the docs write it: the scratch git dir's object links are absolute."""
    shas = make_repo(tmp_path / "calc")
    monkeypatch.chdir(tmp_path)
    res = cli("exam", "import", "--classification", "public",
              "--repo", "calc", "--base", shas["base"], "--fix", shas["fix"], "-o", "suite")
    assert res.exit_code == 0, res.output
