"""Attack variants issue 41 did not name, tried against its one door and its readers after it landed.

Each fails on the main this session started from (8c6af49) and on the main issue 41 landed (5145bfa): a
repository whose ``requires-python`` or classifier holds a 5000-digit number ended ``exam import`` as "internal
error: ValueError" (Python's limit on int() of long digit strings); a few hundred bytes of ``pyproject.toml``
extras naming each other, a ``setup.py`` summing a list with itself in a balanced tree, or a ``tox.ini`` naming
one requirements file a thousand times made an import run for hours (exponential or multiplied work, no bound
on the number of requirements); a marker string holding `` --index-url=...`` passed the door and broke uv's
reading of the line (uv and pip split a line at a space and a dash, quotes unseen); an sdist from
``--find-links`` that is no archive, or whose version is 5000 digits, ended ``env build --allow-build`` as an
internal error; a ``setup.py`` whose ``extras_require`` has a list or tuple as a key, or a SWE-bench
instances line nested 100000 deep, ended an import as "internal error" too (TypeError, RecursionError).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci.envimage import pyenv, requirement, sdist
from acx_oci.errors import NoWheel, UsageError
from acx_oci.services.exams import envspec

from ..support.cli import cli
from .test_requirement_door import _empty_index, _repo_with, evil_project

needs_tools = pytest.mark.skipif(shutil.which("mmdebstrap") is None or shutil.which("bwrap") is None,
                                 reason="env build checks for mmdebstrap and bubblewrap before it resolves")


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail the block (rather than hang the suite) when it runs longer than ``seconds``."""
    def late(*_: Any) -> None:
        raise TimeoutError(f"took over {seconds} s")

    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_5000_digit_python_version_is_no_internal_error(tmp_path: Path) -> None:
    big = "3." + "9" * 5000
    repo, shas = _repo_with(tmp_path, {"pyproject.toml": f'[project]\nname = "calc"\nrequires-python = ">={big}"\n'
                                                         f'classifiers = ["Programming Language :: Python :: {big}"]\n'
                                                         'dependencies = ["six"]\n'})
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", shas["fix"], "--id", "calc-v",
              "-o", tmp_path / "suite")
    assert res.exit_code == 0, res.output
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-v" / "env.json").read_text())
    assert spec["requirements"] == ["six", "pytest"] and spec["python"] in pyenv.PYTHONS


def test_extras_naming_each_other_are_expanded_once() -> None:
    # 12 extras, each naming all 12 through the package itself: 12**8 expansions before
    names = ",".join(f"e{i}" for i in range(12))
    body = "".join(f'e{i} = ["calc[{names}]", "dep{i}"]\n' for i in range(12))
    tree = {"pyproject.toml": f'[project]\nname = "calc"\n[project.optional-dependencies]\n'
                              f'test = ["calc[{names}]"]\n{body}'}
    with within(20):
        spec = envspec.derive(tree)
    assert sorted(spec["requirements"]) == sorted([*(f"dep{i}" for i in range(12)), "pytest"])
    assert spec["excluded"] == ["calc"]


def _balanced(depth: int) -> str:
    return "A" if depth == 0 else f"({_balanced(depth - 1)} + {_balanced(depth - 1)})"


def test_a_setup_py_summing_a_list_with_itself_is_bounded() -> None:
    # 2**16 copies of A in 330 KB of setup.py
    src = ("A = [" + ", ".join(f"'dep{i}'" for i in range(100)) + "]\n"
           f"setup(name='calc', install_requires=['six'], tests_require={_balanced(16)})\n")
    assert len(src) < 1024 * 1024  # under the tree reader's file bound
    with within(30):
        spec = envspec.derive({"setup.py": src})
    assert spec["requirements"] == ["six", "pytest"]


def test_one_requirements_file_named_a_thousand_times_is_read_once() -> None:
    many = "".join(f"dep{i}\n" for i in range(500))
    tree = {"tox.ini": "[testenv]\ndeps =\n" + "    -r many.txt\n" * 1000, "many.txt": many,
            **{f"requirements/test{i}.txt": "-r ../many.txt\n-r many.txt\n" for i in range(200)},
            "requirements/many.txt": many}
    with within(30):
        spec = envspec.derive(tree)
    assert spec["requirements"] == [*(f"dep{i}" for i in range(500)), "pytest"]


def test_a_flood_of_requirements_is_cut_and_named() -> None:
    flood = "".join(f"dep{i}\n" for i in range(200_000))
    with within(60):
        spec = envspec.derive({"requirements-test.txt": flood, "tox.ini": "[testenv]\ndeps =\n    six\n"})
        user = envspec.override(spec, requirements=flood, python=None, what="--requirements")
    for got in (spec, user):
        assert len(got["requirements"]) == envspec.MAX_REQUIREMENTS + 1  # and pytest
        assert any(f"over {envspec.MAX_REQUIREMENTS} requirements" in d for d in got["dropped"]), got["dropped"]
    assert "six" not in spec["requirements"]  # what came after the cut is named, not read


def test_a_marker_string_holding_an_option_is_dropped() -> None:
    hostile = ['six; python_version == " --index-url=http://127.0.0.1:1/"',
               "six; platform_release == 'x --find-links /tmp'", "six; os_name == ' -e /tmp/evilproj'",
               'six; python_version == " --hash=sha256:' + "0" * 64 + '"']
    kept, dropped = requirement.sort_out([*hostile, 'six; python_version >= "3.8" and platform_machine != "x86-64"'])
    assert kept == ['six; python_version >= "3.8" and platform_machine != "x86-64"']
    assert len(dropped) == len(hostile) and all("an option in a requirements file" in d for d in dropped)
    for line in hostile:
        with pytest.raises(UsageError, match="is not a requirement we pass on"):
            pyenv.build_inputs({"python": "3.11", "requirements": [line]})


@needs_tools
def test_an_sdist_that_is_no_archive_or_has_a_huge_version_is_one_line(tmp_path: Path) -> None:
    _, marker = evil_project(tmp_path)
    links, index = _empty_index(tmp_path)
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("needsbuild\n")
    for i, name in enumerate(["needsbuild-1.0.tar.gz", "needsbuild-1.0.zip"]):
        shutil.rmtree(links)
        links.mkdir()
        (links / name).write_bytes(b"\x1f\x8b\x08\x00 not an archive at all" * 10)
        start = time.monotonic()
        res = cli("env", "build", f"oci:{tmp_path / f'images{i}'}:x", "--requirements", reqs, "--find-links", links,
                  "--index-url", index, "--allow-build")
        assert res.exit_code == 2, (name[:40], res.output)
        assert "internal error" not in res.output and len(res.output.strip().splitlines()) == 1, res.output
        assert time.monotonic() - start < 120
    assert not marker.exists()
    # an index page may name any file: a 5000-digit version is compared, not int()-ed whole
    huge = f"https://files.example/needsbuild-1.{'9' * 5000}.tar.gz"
    assert sdist.pick(NoWheel("x", "needsbuild", (huge, "https://files.example/needsbuild-1.0.tar.gz"))) == huge


def test_a_setup_py_with_a_list_or_tuple_as_a_dict_key_is_read(tmp_path: Path) -> None:
    src = "A = ['a']\nsetup(name='calc', extras_require={A: ['x'], ('a', 'b'): ['y'], 'test': ['six']})\n"
    repo, shas = _repo_with(tmp_path, {"setup.py": src})
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", shas["fix"], "--id", "calc-k",
              "-o", tmp_path / "suite")
    assert res.exit_code == 0, res.output  # was "internal error: TypeError: unhashable type: 'list'"
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-k" / "env.json").read_text())
    assert spec["requirements"] == ["six", "pytest"]


def test_a_swebench_line_nested_deep_is_one_line(tmp_path: Path) -> None:
    jsonl = tmp_path / "i.jsonl"
    jsonl.write_text('{"instance_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    res = cli("exam", "import", "--classification", "public",
              "--swebench", jsonl, "--repos", tmp_path, "-o", tmp_path / "suite")
    assert res.exit_code == 2 and "i.jsonl:1: schema_invalid: nested deeper than 64 levels" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1


def test_an_sdist_is_not_decompressed_past_its_bound_to_find_its_pyproject(tmp_path: Path) -> None:
    # a gzip of a member declaring 3 GiB (zeros compress 1000:1: 256 MiB of sdist is 256 GiB to skip)
    import gzip
    import tarfile

    info = tarfile.TarInfo("needsbuild-1.0/big")
    info.size = 3 * 1024 ** 3
    path = tmp_path / "needsbuild-1.0.tar.gz"
    path.write_bytes(gzip.compress(info.tobuf() + bytes(1 << 20)))
    with within(20), pytest.raises(UsageError, match=r"bytes before its pyproject\.toml; refused"):
        sdist.build_requires(path)
