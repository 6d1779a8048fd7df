"""Nothing a repository or a package index says runs on the host (issue 41): one door for requirement strings,
a resolver that cannot build.

Each attack names a local project whose build backend (in-tree, so it needs nothing from an index) and
``setup.py`` write a marker file when anything prepares it; every test asserts the marker stays absent, and
that an import with the hostile line still writes its exam, naming what it dropped. Each test fails on the main
this session started from (8c6af49): there a Unicode line separator passed the requirement check and pip read
the rest as a line of its own (a local project it prepared on the host), an sdist's build requirements and a
wheel's ``Requires-Dist`` URL went to host pip unchecked, and a deep ``pyproject.toml`` ended the import as
"internal error: RecursionError".
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from acx_oci.envimage import pyenv, requirement, sdist
from acx_oci.errors import UsageError

from ..exams.test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, VISIBLE, commit, git, patch
from ..support.cli import cli

needs_tools = pytest.mark.skipif(shutil.which("mmdebstrap") is None or shutil.which("bwrap") is None,
                                 reason="env build checks for mmdebstrap and bubblewrap before it resolves")
SEPARATORS = ("\u2028", "\u2029", "\x85", "\u000b", "\u000c", "\u001c")


def evil_project(tmp: Path) -> tuple[Path, Path]:
    """(a local project that leaves ``marker`` when prepared or built, the marker's path)."""
    proj, marker = tmp / "evilproj", tmp / "HOST-CODE-RAN"
    proj.mkdir()
    write = f"open({str(marker)!r}, 'a').write('ran\\n')\n"
    (proj / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "evilbackend"\n'
                                         'backend-path = ["."]\n')
    (proj / "evilbackend.py").write_text(write + "def prepare_metadata_for_build_wheel(*a, **k):\n"
                                         "    raise SystemExit(1)\n"
                                         "def build_wheel(*a, **k):\n    raise SystemExit(1)\n"
                                         "def get_requires_for_build_wheel(*a, **k):\n    return []\n")
    (proj / "setup.py").write_text(write + "from setuptools import setup\nsetup(name='evilproj', version='1')\n")
    return proj, marker


def hostile_lines(proj: Path) -> list[str]:
    """Requirement strings that name ``proj`` (a path, a file: URL, behind a line separator) or a remote URL."""
    return ([f"six{sep}{proj}" for sep in SEPARATORS] +
            [f"evilproj @ {proj.as_uri()}", str(proj), "evilproj @ https://example.invalid/evilproj-1.tar.gz",
             f"six; python_version > '3'{SEPARATORS[0]}{proj}", "six\u00a0==1.0", "-e " + str(proj),
             f"--find-links {proj}", f"six --config-settings=x={proj}"])


def _empty_index(tmp: Path) -> tuple[Path, str]:
    links, index = tmp / "links", tmp / "index"
    links.mkdir(exist_ok=True)
    index.mkdir(exist_ok=True)
    return links, index.as_uri()


def test_the_door_keeps_data_and_names_everything_else(tmp_path: Path) -> None:
    proj, _ = evil_project(tmp_path)
    kept, dropped = requirement.sort_out([*hostile_lines(proj), "attrs[tests]>=21,<24; python_version >= '3.8'"])
    assert kept == ['attrs[tests]<24,>=21; python_version >= "3.8"']  # re-serialised by us
    assert len(dropped) == len(hostile_lines(proj)) and all(d.isascii() and d.isprintable() for d in dropped)
    assert any("holds U+2028, not printable ASCII" in d for d in dropped)
    assert any("a direct URL or path" in d for d in dropped)
    for line in hostile_lines(proj):
        with pytest.raises(UsageError, match="is not a requirement we pass on"):
            pyenv.build_inputs({"python": "3.11", "requirements": [line]})


def _repo_with(tmp: Path, files: dict[str, str]) -> tuple[Path, dict[str, str]]:
    repo = tmp / "calc"
    repo.mkdir()
    git(repo, "init", "-q")
    base = commit(repo, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE, **files}, "initial",
                  "2026-03-01T10:00:00Z")
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "Fix", "2026-03-05T10:00:00Z")
    return repo, {"base": base, "fix": fix}


def repository_files(proj: Path) -> dict[str, str]:
    """Every file the spec is read from, each holding hostile requirement strings."""
    lines = hostile_lines(proj)
    toml_list = ", ".join(json.dumps(ln) for ln in lines)
    return {
        "pyproject.toml": f'[project]\nname = "calc"\ndependencies = ["six", {toml_list}]\n'
                          f'[project.optional-dependencies]\ntests = [{toml_list}]\n'
                          f'[dependency-groups]\ntest = [{toml_list}]\n',
        "setup.cfg": "[options]\ninstall_requires =\n    " + "\n    ".join(ln.replace("\n", "") for ln in lines[4:])
                     + "\n",
        "setup.py": f"setup(name='calc', install_requires={lines!r}, tests_require={lines!r})\n",
        "requirements-test.txt": "".join(ln + "\n" for ln in lines),
        "tox.ini": "[testenv]\ndeps =\n    " + "\n    ".join(lines[6:]) + "\n    -r requirements-test.txt\n",
    }


def _spec_is_clean(spec: dict[str, object], proj: Path) -> None:
    reqs = spec["requirements"]
    assert isinstance(reqs, list) and reqs == ["six", "pytest"], reqs
    dropped = spec["dropped"]
    assert isinstance(dropped, list) and len(dropped) >= len(hostile_lines(proj))
    assert all(isinstance(d, str) and d.isascii() and d.isprintable() for d in dropped)
    assert str(proj) not in json.dumps(reqs)


@needs_tools
def test_hostile_repository_files_are_dropped_named_and_never_reach_the_resolver(tmp_path: Path) -> None:
    proj, marker = evil_project(tmp_path)
    repo, shas = _repo_with(tmp_path, repository_files(proj))
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", shas["fix"], "--id", "calc-h",
              "-o", tmp_path / "suite", "--json")
    assert res.exit_code == 0, res.output
    exam = tmp_path / "suite" / "tasks" / "calc-h"
    assert (exam / "exam.yaml").is_file()  # the import still writes its exam
    spec = json.loads((exam / "env.json").read_text())
    _spec_is_clean(spec, proj)
    assert any("holds U+2028" in d and "in pyproject.toml [project] dependencies" in d for d in spec["dropped"])
    assert any("a direct URL or path" in d and "in requirements-test.txt" in d for d in spec["dropped"])
    links, index = _empty_index(tmp_path)
    build = cli("env", "build", f"oci:{tmp_path / 'images'}:x", "--spec", exam / "env.json", "--find-links", links,
                "--index-url", index)
    assert build.exit_code == 2 and "six: no release fits" in build.output, build.output
    assert not marker.exists()


@needs_tools
def test_a_hand_edited_spec_with_a_separator_is_refused_whole(tmp_path: Path) -> None:
    proj, marker = evil_project(tmp_path)
    links, index = _empty_index(tmp_path)
    for line in hostile_lines(proj):
        spec = tmp_path / "env.json"
        spec.write_text(json.dumps({"python": "3.11", "requirements": ["six", line], "package": ["calc"]}))
        res = cli("env", "build", f"oci:{tmp_path / 'images'}:x", "--spec", spec, "--find-links", links,
                  "--index-url", index)
        assert res.exit_code == 2 and "is not a requirement we pass on" in res.output, (line, res.output)
        assert len(res.output.strip().splitlines()) == 1 and res.output.isascii()
    assert not marker.exists()


@needs_tools
def test_a_users_requirements_file_drops_at_import_and_refuses_at_build(tmp_path: Path) -> None:
    proj, marker = evil_project(tmp_path)
    repo, shas = _repo_with(tmp_path, {})
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("six\n" + "".join(ln + "\n" for ln in hostile_lines(proj)), "utf-8")
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", shas["fix"], "--id", "calc-u",
              "-o", tmp_path / "suite", "--requirements", reqs)
    assert res.exit_code == 0, res.output
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-u" / "env.json").read_text())
    _spec_is_clean(spec, proj)
    links, index = _empty_index(tmp_path)
    build = cli("env", "build", f"oci:{tmp_path / 'images'}:x", "--requirements", reqs, "--find-links", links,
                "--index-url", index)
    assert build.exit_code == 2 and "is not a requirement we pass on" in build.output, build.output
    assert not marker.exists()


@needs_tools
def test_a_swebench_instance_whose_base_holds_hostile_lines(tmp_path: Path) -> None:
    proj, marker = evil_project(tmp_path)
    lines = ["six", *hostile_lines(proj)]
    repo, shas = _repo_with(tmp_path, {"requirements-test.txt": "".join(ln + "\n" for ln in lines)})
    repos = tmp_path / "clones"
    repos.mkdir()
    os.rename(repo, repos / "acme__calc")
    inst = {"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": shas["base"],
            "patch": patch("calc.py", BASE_CALC, FIXED_CALC),
            "test_patch": patch("tests/test_calc.py", "", HIDDEN).replace("--- a/tests/test_calc.py", "--- /dev/null"),
            "FAIL_TO_PASS": ["tests/test_calc.py::test_sign_zero"], "PASS_TO_PASS": [],
            "version": f"1.0{SEPARATORS[0]}{proj}", "environment_setup_commit": str(proj)}
    jsonl = tmp_path / "i.jsonl"
    jsonl.write_text(json.dumps(inst) + "\n")
    res = cli("exam", "import", "--classification", "public",
              "--swebench", jsonl, "--repos", repos, "-o", tmp_path / "suite", "--json")
    assert res.exit_code == 0, res.output
    [exam] = list((tmp_path / "suite" / "tasks").iterdir())
    spec = json.loads((exam / "env.json").read_text())
    _spec_is_clean(spec, proj)
    links, index = _empty_index(tmp_path)
    build = cli("env", "build", f"oci:{tmp_path / 'images'}:x", "--spec", exam / "env.json", "--find-links", links,
                "--index-url", index)
    assert build.exit_code == 2 and "six: no release fits" in build.output, build.output
    assert not marker.exists()


def _wheel(links: Path, name: str, requires: list[str]) -> None:
    info = f"{name}-1.0.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(links / f"{name}-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{name}.py", "")
        zf.writestr(f"{info}/METADATA", meta)
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")


@needs_tools
def test_a_wheels_url_dependency_with_a_target_only_marker_is_refused(tmp_path: Path) -> None:
    # host pip (3.11) skipped the dependency by its marker; the hand-written 3.9 closure then fetched the URL
    proj, marker = evil_project(tmp_path)
    links, index = _empty_index(tmp_path)
    _wheel(links, "calcplugin", [f'evilproj @ {proj.as_uri()} ; python_version < "3.10"'])
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("calcplugin\n")
    res = cli("env", "build", f"oci:{tmp_path / 'images'}:x", "--requirements", reqs, "--python", "3.9",
              "--find-links", links, "--index-url", index)
    assert res.exit_code == 2 and "a wheel requires evilproj by a direct URL; refused" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not marker.exists()


def _sdist_requiring(links: Path, build_requires: list[str]) -> None:
    buf = io.BytesIO()
    files = {"needsbuild-1.0/pyproject.toml": "[build-system]\nrequires = " + json.dumps(build_requires) + "\n",
             "needsbuild-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: needsbuild\nVersion: 1.0\n"}
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (links / "needsbuild-1.0.tar.gz").write_bytes(buf.getvalue())


@needs_tools
def test_a_build_requirement_url_under_allow_build_is_refused_before_anything_is_fetched(tmp_path: Path) -> None:
    proj, marker = evil_project(tmp_path)
    links, index = _empty_index(tmp_path)
    for i, bad in enumerate([f"evilproj @ {proj.as_uri()}", f"setuptools{SEPARATORS[0]}{proj}", str(proj)]):
        shutil.rmtree(links)
        links.mkdir()
        _sdist_requiring(links, ["setuptools>=40", bad])
        reqs = tmp_path / "reqs.txt"
        reqs.write_text("needsbuild\n")
        res = cli("env", "build", f"oci:{tmp_path / f'images{i}'}:x", "--requirements", reqs, "--find-links", links,
                  "--index-url", index, "--allow-build")
        assert res.exit_code == 2, res.output
        assert "needsbuild-1.0.tar.gz's build requirement" in res.output and "refused" in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1 and res.output.isascii()
    assert not marker.exists()
    got = tmp_path / "ok"
    got.mkdir()
    _sdist_requiring(got, ["setuptools>=40", "wheel"])
    assert sdist.build_requires(got / "needsbuild-1.0.tar.gz") == ["setuptools>=40", "wheel"]


def test_a_deep_pyproject_is_one_named_line_and_the_exam_is_still_written(tmp_path: Path) -> None:
    deep = 'x = ' + "[" * 5000 + "]" * 5000 + '\n[project]\nname = "calc"\ndependencies = ["six"]\n'
    repo, shas = _repo_with(tmp_path, {"pyproject.toml": deep, "requirements-test.txt": "iniconfig\n"})
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", shas["fix"], "--id", "calc-d",
              "-o", tmp_path / "suite")
    assert res.exit_code == 0, res.output
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-d" / "env.json").read_text())
    assert spec["requirements"] == ["iniconfig", "pytest"]
    assert "pyproject.toml: nested 5000 levels deep (at most 64); not read" in spec["dropped"]
    from acx_oci.envimage import read_toml

    with pytest.raises(UsageError, match="nested 3000 levels deep"):
        read_toml("a = " + "{b = " * 3000 + "1" + "}" * 3000, "x.toml")
    assert read_toml('a = "[[[[" # [[[[\nb = [[1], [2]]\n', "x.toml") == {"a": "[[[[", "b": [[1], [2]]}
