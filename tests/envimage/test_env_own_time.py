"""Environments of the fix's own time (issue 45, rule 4), on small generated repositories.

The fix's date picks the Python (among 3.9/3.11/3.13, one released by then) and the date the index is resolved
as of (uv's ``--exclude-newer``, never before the image's Python existed); what the repository itself locks
or pins (``uv.lock``, ``poetry.lock``, ``Pipfile.lock``, constraints files) decides versions; tox and nox test
sessions count; one requirement per name, the conflict named (requests: ``pytest-httpbin==0.0.7`` and
``==1.0.0``); ``env build`` refuses an image whose pytest cannot be imported unless what it misses is the
package under test (named). Each test fails on 8c6af49, where none of this existed: the newest versions, the
default Python, both pins handed to the resolver.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from acx_oci.envimage import lock, pyenv
from acx_oci.envimage.lock import Pinned
from acx_oci.errors import MachineUnfit, UsageError
from acx_oci.services.exams import envlocks, pythons

from ..exams.test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, VISIBLE, commit, git
from ..support.cli import cli


def _repo(tmp: Path, files: dict[str, str], date: str) -> tuple[Path, dict[str, str]]:
    repo = tmp / "calc"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    base = commit(repo, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE, **files}, "initial",
                  f"{date}T09:00:00Z")
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "Fix", f"{date}T10:00:00Z")
    return repo, {"base": base, "fix": fix}


def _import(tmp: Path, files: dict[str, str], date: str) -> dict[str, object]:
    repo, shas = _repo(tmp, files, date)
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", shas["fix"], "--id", "calc-t",
              "-o", tmp / "suite")
    assert res.exit_code == 0, res.output
    return dict(json.loads((tmp / "suite" / "tasks" / "calc-t" / "env.json").read_text()))


def test_the_fix_date_picks_the_python_and_the_date_resolved_as_of(tmp_path: Path) -> None:
    spec = _import(tmp_path / "a", {"pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.7"\n'},
                   "2021-03-05")
    assert spec["python"] == "3.9" and spec["fixDate"] == "2021-03-05" and spec["resolvedAsOf"] == "2021-03-05"
    assert pyenv.build_inputs(spec)["excludeNewer"] == "2021-03-05T23:59:59Z"
    old = _import(tmp_path / "b", {}, "2016-05-01")  # before any Python we offer: the oldest, as of the fix's day
    assert old["python"] == "3.9" and old["resolvedAsOf"] == "2016-05-01"  # (2020-10-05, 3.9's release, before)
    new = _import(tmp_path / "c", {}, "2025-06-01")
    assert new["python"] == "3.11" and new["resolvedAsOf"] == "2025-06-01"  # 3.11 first when it was out
    assert pythons.choose_python(">=3.12", [], "2023-01-01") == "3.13"  # requires wins over the date
    assert pythons.choose_python(None, [], "2023-01-01") == "3.11"


def test_resolved_as_the_index_was_on_the_fix_date(tmp_path: Path) -> None:
    from acx_oci.envimage.preflight import probe_index

    try:
        probe_index(None, timeout=5)
    except MachineUnfit:
        pytest.skip("PyPI is not reachable from this machine")
    spec = {"python": "3.9", "requirements": ["pytest"], "package": ["calc"], "resolvedAsOf": "2021-03-05"}
    notes: list[str] = []
    pins, _ = lock.resolve(pyenv.build_inputs(spec), tmp_path / "w", notes=notes)
    assert {p.name: p.version for p in pins}["pytest"] == "6.2.2" and notes == []  # 6.2.3: 2021-04-03
    # requests' tests as of 2020-10-05 (3.9's release): MarkupSafe had no wheel for 3.9 yet; a year later it had
    old = {"python": "3.9", "requirements": ["pytest-httpbin==0.0.7"], "package": ["requests"],
           "resolvedAsOf": "2020-10-05"}
    notes = []
    pins, _ = lock.resolve(pyenv.build_inputs(old), tmp_path / "w2", notes=notes)
    assert notes[0].startswith("as of 2020-10-05: env build: ") and notes[-1].startswith("resolved as of 2021-")
    assert "pytest-httpbin" in {p.name for p in pins}


def test_later_dates_step_a_year_up_to_today() -> None:
    assert lock.later_dates(None, "2026-12-06") == [None]
    assert lock.later_dates("2024-02-29T23:59:59Z", "2026-12-06") == [
        "2024-02-29T23:59:59Z", "2025-02-28T23:59:59Z", "2026-02-28T23:59:59Z", None]
    assert len(lock.later_dates("2001-01-01T23:59:59Z", "2026-12-06")) == lock.MAX_LATER_YEARS + 2


def _wheel(links: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(links / f"{name}-{version}-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{name}.py", "")
        zf.writestr(f"{info}/METADATA", meta)
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")


UV_LOCK = '''version = 1
[[package]]
name = "calc"
version = "0.1.0"
source = { editable = "." }
[[package]]
name = "pytest"
version = "7.4.4"
source = { registry = "https://pypi.org/simple" }
[[package]]
name = "pluggy"
version = "1.0.0"
source = { registry = "https://pypi.org/simple" }
'''


def test_the_repositorys_own_lock_decides_the_versions(tmp_path: Path) -> None:
    spec = _import(tmp_path, {"pyproject.toml": '[project]\nname = "calc"\n[dependency-groups]\ntests = ["pytest"]\n',
                              "uv.lock": UV_LOCK}, "2026-03-01")
    assert spec["requirements"] == ["pytest"]
    assert spec["constraints"] == ["pluggy==1.0.0", "pytest==7.4.4"] and spec["constraintSources"] == ["uv.lock"]
    links = tmp_path / "links"
    links.mkdir()
    for version in ("7.4.4", "8.3.0"):
        _wheel(links, "pytest", version, ("pluggy>=1",))
    for version in ("1.0.0", "1.5.0"):
        _wheel(links, "pluggy", version)
    (tmp_path / "index").mkdir()
    pins, _ = lock.resolve(pyenv.build_inputs(spec), tmp_path / "w", index_url=(tmp_path / "index").as_uri(),
                           find_links=[links])
    assert {p.name: p.version for p in pins} == {"pytest": "7.4.4", "pluggy": "1.0.0"}  # not the newest
    # a lock naming what cannot be had: resolved without the pins, and said so
    notes: list[str] = []
    gone = {**spec, "constraints": ["pytest==6.0.0"]}
    pins, _ = lock.resolve(pyenv.build_inputs(gone), tmp_path / "w2", index_url=(tmp_path / "index").as_uri(),
                           find_links=[links], notes=notes)
    assert {p.name: p.version for p in pins}["pytest"] == "8.3.0"
    assert notes[0].startswith("as of 2026-03-01 with the repository pins: ")
    assert notes[-1] == "resolved as of 2026-03-01 without the repository's pins"


def test_other_locks_and_constraints_files_are_read_as_text() -> None:
    poetry = '[[package]]\nname = "Mock"\nversion = "4.0.3"\n[[package]]\nname = "six"\nversion = "1.15.0"\n' \
             '[[package]]\nname = "six"\nversion = "1.16.0"\n'
    pipfile = json.dumps({"default": {"idna": {"version": "==2.10"}}, "develop": {"pytest": {"version": "==6.1.0"},
                                                                                    "calc": {"version": "==1.0"}}})
    tree = {"poetry.lock": poetry, "Pipfile.lock": pipfile, "constraints.txt": "flaky==3.7.0 \\\n  --hash=sha256:00\n",
            "requirements/ci.txt": "# This file is autogenerated by pip-compile\nattrs==21.4.0\n-e .\n"}
    got = envlocks.pins(tree, {"calc"})
    assert got["constraints"] == ["attrs==21.4.0", "flaky==3.7.0", "idna==2.10", "mock==4.0.3", "pytest==6.1.0"]
    assert got["lockedTwice"] == ["six"]  # one version per Python in the lock: left to the resolver, named
    assert got["constraintSources"] == ["poetry.lock", "Pipfile.lock", "constraints.txt", "requirements/ci.txt"]
    deep = envlocks.pins({"uv.lock": "x = " + "[" * 500 + "]" * 500}, set())
    assert deep["constraints"] == [] and "uv.lock: nested 500 levels deep" in deep["dropped"][0]


def test_one_requirement_per_name_the_conflict_named(tmp_path: Path) -> None:
    # requests: requirements-dev.txt pinned the plugin ==0.0.7, setup.py's tests_require ==1.0.0; both went to
    # the resolver and no image could be built for three real exams
    spec = _import(tmp_path, {
        "requirements-dev.txt": "pytest>=2.8.0\npytest-httpbin==0.0.7\n",
        "setup.py": "setup(name='calc', tests_require=['pytest-httpbin==1.0.0', 'pytest-cov', 'pytest-mock>=2'])\n",
        "tox.ini": "[testenv]\ndeps =\n    pytest-mock==3.1\n    pytest-cov\n"}, "2026-03-01")
    assert spec["requirements"] == ["pytest-httpbin==0.0.7", "pytest-cov", "pytest-mock==3.1", "pytest>=2.8.0"]
    assert spec["conflicts"] == [
        "pytest-httpbin: ==0.0.7 (requirements-dev.txt) over ==1.0.0 (setup.py tests_require)",
        "pytest-mock: ==3.1 (tox.ini [testenv] deps) over >=2 (setup.py tests_require)"]


NOXFILE = '''import nox


@nox.session(python=["3.9", "3.11"])
def tests(session):
    session.install("-e", ".")
    session.install("pytest-mock", "freezegun>=1")
    session.run("pytest")


@nox.session
def docs(session):
    session.install("sphinx")
'''


def test_nox_test_sessions_are_read_never_run(tmp_path: Path) -> None:
    mark = tmp_path / "nox-ran"
    spec = _import(tmp_path, {"noxfile.py": f"open({str(mark)!r}, 'w')\n" + NOXFILE}, "2026-03-01")
    assert spec["requirements"] == ["pytest-mock", "freezegun>=1", "pytest"] and "noxfile.py test sessions" in \
        spec["sources"]
    assert not mark.exists()


def test_env_build_refuses_an_image_whose_pytest_cannot_start() -> None:
    pins = [Pinned("pytest", "8.4.2", "pytest-8.4.2-py3-none-any.whl", "0" * 64)]
    tomli = {"pytest": "ModuleNotFoundError: No module named 'tomli'", "missing": "tomli"}
    assert pyenv.pytest_check(tomli, pins, ["tomli"]) == "tomli"  # the package under test: the submission's
    with pytest.raises(UsageError, match=r"pytest cannot be imported \(ModuleNotFoundError: No module named "
                                         r"'iniconfig'\); left out as the package under test: calc"):
        pyenv.pytest_check({"pytest": "ModuleNotFoundError: No module named 'iniconfig'", "missing": "iniconfig"},
                           pins, ["calc"])
    assert pyenv.pytest_check({"pytest": None}, pins, []) is None
    assert pyenv.pytest_check(tomli, [], ["tomli"]) is None  # no pytest asked for (env build --requirements)


def test_an_environment_of_before_python_312_has_setuptools_as_its_venvs_had() -> None:
    """pytest 3.0 (iniconfig's 2016 pin) imports pkg_resources at start-up without declaring it: a venv of its
    time had setuptools, and the image's venv is made without it, so a spec resolved before 2023-10-02 adds it."""
    def reqs(day: str, more: list[str] | None = None) -> list[str]:
        spec = {"python": "3.9", "requirements": ["pytest", *(more or [])], "package": ["calc"], "resolvedAsOf": day}
        return list(pyenv.build_inputs(spec)["requirements"])

    assert reqs("2016-09-23") == ["pytest", "setuptools"]
    assert reqs("2023-10-02") == ["pytest"]  # Python 3.12's release: venvs without setuptools from then on
    assert reqs("2016-09-23", ["setuptools<30"]) == ["pytest", "setuptools<30"]  # the repository's own, once
    undated = {"python": "3.9", "requirements": ["pytest"], "package": ["calc"]}
    assert pyenv.build_inputs(undated)["requirements"] == ["pytest"]
