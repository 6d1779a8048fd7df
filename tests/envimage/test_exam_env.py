"""Exam environments from the repository: the spec derived at import, wheels only, and (slow) a certification
graded by the image's own venv Python with a package from PyPI.

Fast tests read a small generated git repository (pyproject test extra, tox.ini, setup.py parsed with ast only)
and refuse a real source distribution found through ``--find-links`` without running its build script; the
``slow`` one builds one image per session (mmdebstrap bookworm + ``iniconfig`` and ``pytest`` from PyPI).
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from acx_oci.envimage import lock, pyenv, sdist
from acx_oci.errors import UsageError
from acx_oci.services.exams import envspec, pythons

from ..exams.test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, VISIBLE, commit, git
from ..support.cli import cli
from ..support.envroot import PACKAGES, root_tar

PYPROJECT = '''[project]
name = "calc"
requires-python = ">=3.8"
dependencies = ["attrs>=21"]
classifiers = ["Programming Language :: Python :: 3.9", "Programming Language :: Python :: 3.12"]

[project.optional-dependencies]
tests = ["calc[cov]", "hypothesis>=6", "pytest>=7"]
cov = ["coverage[toml]"]
docs = ["sphinx"]
'''
TOX = '''[tox]
envlist = py39,py311

[testenv]
deps =
    -r requirements-test.txt
    py39: mock
    {env:EXTRA_DEP:}
commands = pytest
'''
#: Running this file would leave a mark on the host: derivation must only parse it.
SETUP_PY = '''import pathlib
pathlib.Path("/tmp/acx-setup-py-ran").write_text("ran")
TESTS = ["freezegun", "calc"]
setup(name="calc", install_requires=["idna"], extras_require={"test": TESTS, "docs": ["sphinx"]},
      python_requires=">=3.7,<3.10")
'''


def make_repo(path: Path, extra: dict[str, str]) -> dict[str, str]:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    base = commit(path, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE, **extra}, "initial",
                  "2026-03-01T10:00:00Z")
    fix = commit(path, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "Fix clamp and sign",
                 "2026-03-05T10:00:00Z")
    return {"base": base, "fix": fix}


def test_import_derives_the_environment_from_pyproject_and_tox(tmp_path: Path) -> None:
    shas = make_repo(tmp_path / "calc", {"pyproject.toml": PYPROJECT, "tox.ini": TOX,
                                         "requirements-test.txt": "pytest-timeout==2.3.1  # pinned\n-e .\n"})
    res = cli("exam", "import", "--classification", "public",
              "--repo", tmp_path / "calc", "--base", shas["base"], "--fix", shas["fix"],
              "--id", "calc-env", "-o", tmp_path / "suite", "--json")
    assert res.exit_code == 0, res.output
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-env" / "env.json").read_text())
    # the project's dependencies, its tests extra with its own [cov] extra expanded (never calc itself),
    # the requirements file tox names, tox's factor line; never the docs extra, an editable path or a {sub}
    assert spec["requirements"] == ["attrs>=21", "coverage[toml]", "hypothesis>=6", "pytest>=7",
                                    "pytest-timeout==2.3.1", "mock"]
    assert spec["excluded"] == ["calc"] and "calc" in spec["package"]
    assert spec["python"] == "3.11"  # >=3.8 and classifiers up to 3.12: bookworm's 3.11
    # each dropped line named with why and where (issue 41: the one door for requirement strings)
    assert "-e . (an option, not a requirement) in requirements-test.txt" in spec["dropped"]
    assert "{env:EXTRA_DEP:} (a tox substitution) in tox.ini [testenv] deps" in spec["dropped"]
    assert "pyproject.toml [project.optional-dependencies] tests" in spec["sources"]
    assert "tox.ini [testenv] deps" in spec["sources"]
    out = json.loads(res.stdout)["exams"][0]["environment"]
    assert out["python"] == "3.11" and "hypothesis>=6" in out["requirements"]
    # the spec is part of what is certified: another spec, another freeze hash
    from acx_oci.services.exams import suite_freeze_hashes
    before = suite_freeze_hashes(tmp_path / "suite")["calc-env"]
    (tmp_path / "suite" / "tasks" / "calc-env" / "env.json").write_text(json.dumps({**spec, "python": "3.13"}))
    assert suite_freeze_hashes(tmp_path / "suite")["calc-env"] != before


def test_setup_py_is_parsed_never_run_and_the_user_overrides(tmp_path: Path) -> None:
    mark = Path("/tmp/acx-setup-py-ran")
    mark.unlink(missing_ok=True)
    shas = make_repo(tmp_path / "calc", {"setup.py": SETUP_PY})
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("six==1.16.0\ncalc==1.0\n")
    res = cli("exam", "import", "--classification", "public",
              "--repo", tmp_path / "calc", "--base", shas["base"], "--fix", shas["fix"],
              "--id", "calc-a", "-o", tmp_path / "suite", "--json")
    assert res.exit_code == 0, res.output
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-a" / "env.json").read_text())
    assert spec["requirements"] == ["idna", "freezegun", "pytest"] and spec["excluded"] == ["calc"]
    assert spec["python"] == "3.9" and spec["pythonRequires"] == ">=3.7,<3.10"  # bullseye's python3
    assert not mark.exists()
    res = cli("exam", "import", "--classification", "public",
              "--repo", tmp_path / "calc", "--base", shas["base"], "--fix", shas["fix"],
              "--id", "calc-b", "-o", tmp_path / "suite", "--requirements", reqs, "--python", "3.13")
    assert res.exit_code == 0, res.output
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-b" / "env.json").read_text())
    assert spec["requirements"] == ["six==1.16.0", "pytest"] and spec["python"] == "3.13"
    assert spec["excluded"] == ["calc"] and spec["overridden"] == ["requirements", "python"]
    bad = cli("exam", "import", "--classification", "public",
              "--repo", tmp_path / "calc", "--base", shas["base"], "--fix", shas["fix"],
              "--id", "calc-c", "-o", tmp_path / "suite", "--python", "2.7")
    assert bad.exit_code == 2 and "--python 2.7: expected one of 3.9, 3.11, 3.13" in bad.output
    assert not (tmp_path / "suite" / "tasks" / "calc-c").exists()


def test_setup_cfg_requirement_files_and_swebench_fields() -> None:
    tree = {"setup.cfg": "[metadata]\nname = more-itertools\nclassifiers =\n    Programming Language :: Python :: 3.9\n"
                         "[options]\ninstall_requires =\n    six\n[options.extras_require]\ntesting =\n"
                         "    more_itertools[extra]\n    pytest-cov\n",
            "requirements/test.txt": "-r base.txt\nflaky\n",
            "requirements/base.txt": "urllib3==1.26.18 \\\n    --hash=sha256:" + "0" * 64 + "\n",
            "requirements.txt": "ignored-when-others-exist\n"}
    spec = envspec.derive(tree, own=["more_itertools"], swebench={"version": "8.0",
                                                                 "environment_setup_commit": "a" * 40})
    assert spec["requirements"] == ["six", "pytest-cov", "urllib3==1.26.18", "flaky", "pytest"]
    assert spec["excluded"] == ["more-itertools"] and spec["python"] == "3.9"
    assert spec["swebench"] == {"version": "8.0", "environment_setup_commit": "a" * 40}


def test_a_requirements_file_beside_the_tests_is_read() -> None:
    """parse (r1chardj0n3s/parse) keeps its test requirements in ``tests/requirements.txt``, which its CI installs;
    the spec said ``sources: []`` (a new user's finding)."""
    spec = envspec.derive({"pyproject.toml": '[project]\nname = "parse"\n', "tests/requirements.txt": "pytest\n"
                           "pytest-cov\n"}, own=["parse"])
    assert spec["requirements"] == ["pytest", "pytest-cov"] and spec["sources"] == ["tests/requirements.txt"]


def test_a_test_dependency_the_fix_declares_joins_the_environment() -> None:
    """jsonschema b5572c9 (a new user's finding): the fix's noxfile installs ``jsonpath-ng`` and its new test
    imports it; the spec, derived at the base only, left it out without a word and the reference would fail."""
    nox = "import nox\n\n@nox.session\ndef tests(session):\n    session.install({})\n"
    base = {"pyproject.toml": '[project]\nname = "jsonschema"\n', "noxfile.py": nox.format('"pytest", "virtue"')}
    fixed = {"noxfile.py": nox.format('"pytest", "virtue", "jsonpath-ng"'), "jsonschema/x.py": "X = 1\n"}
    spec = envspec.derive_with_fix(base, fixed, own=["jsonschema"])
    assert spec["requirements"] == ["pytest", "virtue", "jsonpath-ng"] and spec["addedByFix"] == ["jsonpath-ng"]
    assert "addedByFix" not in envspec.derive_with_fix(base, {"jsonschema/x.py": "X = 1\n"}, own=["jsonschema"])


def test_a_pip_compiled_lock_named_by_tox_gives_its_source_not_its_pins_as_requirements() -> None:
    """glom 24c21dc (a new user's finding): tox's ``-rrequirements.txt`` is a ``pip-compile``d lock made on 3.7,
    tox's own tools in it; its 22 pins became requirements. Its ``requirements.in`` is what the tests need; the
    lock's pins stay constraints (they decide versions, never add a package)."""
    lock = ("#\n# This file is autogenerated by pip-compile with Python 3.7\n#\nface==20.1.1\n    # via -r "
            "requirements.in\nvirtualenv==20.25.0\n    # via tox\ntox==4.8.0\n    # via -r requirements.in\n")
    tree = {"setup.py": "setup(name='glom')\n", "tox.ini": "[testenv]\ndeps = -rrequirements.txt\n",
            "requirements.txt": lock, "requirements.in": "face\npytest\ntox\n"}
    spec = envspec.derive(tree, own=["glom"])
    assert "virtualenv" not in " ".join(spec["requirements"]) and "face" in spec["requirements"]
    assert "face==20.1.1" in spec.get("constraints", [])


def test_dependency_groups_expand_their_include_group_entries() -> None:
    # PEP 735 (attrs, tenacity): a group names another with {include-group = ...}; its requirements count
    pyproject = ('[project]\nname = "calc"\n[dependency-groups]\nbase = ["hypothesis"]\n'
                 'Tests = [{include-group = "base"}, {include-group = "tests"}, "pytest>=8"]\n'
                 'dev = [{include-group = "tests"}, "ruff"]\n')
    spec = envspec.derive({"pyproject.toml": pyproject})
    assert spec["requirements"] == ["hypothesis", "pytest>=8"]
    assert spec["sources"] == ["pyproject.toml [dependency-groups] tests"]


def test_the_dev_group_is_read_only_when_no_group_names_the_tests() -> None:
    # filelock: dev = tests + docs (sphinx>=9.1 needs Python 3.12, no image here has it) + linters
    groups = ('[dependency-groups]\ntest = ["pytest>=9"]\ndocs = ["sphinx>=9.1"]\n'
              'dev = [{include-group = "docs"}, {include-group = "test"}]\n')
    assert envspec.derive({"pyproject.toml": '[project]\nname = "calc"\n' + groups})["requirements"] == ["pytest>=9"]
    only_dev = '[project]\nname = "calc"\n[dependency-groups]\ndev = ["pytest", "ruff"]\n'
    assert envspec.derive({"pyproject.toml": only_dev})["requirements"] == ["pytest", "ruff"]


VCS_PYPROJECT = '''[project]
name = "calc"
version = "1.2.3"
[tool.hatch.build.hooks.vcs]
version-file = "src/calc/_version.py"
'''
#: marshmallow asks importlib.metadata for its version; humanize imports the file hatch-vcs writes at build time
CALC_INIT = ('import importlib.metadata\nfrom ._version import __version__\n'
             'META = importlib.metadata.version("calc")\n\n\ndef half(x):\n    return x / 2\n')
HALF_TEST = 'import calc\n\n\ndef test_half():\n    assert calc.META == "1.2.3" and calc.half(3) == 1\n'


def test_the_package_imports_as_if_installed_version_file_and_metadata(tmp_path: Path) -> None:
    from acx_oci.sandbox import grade
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    base = commit(repo, {"pyproject.toml": VCS_PYPROJECT, "src/calc/__init__.py": CALC_INIT}, "initial",
                  "2026-03-01T10:00:00Z")
    fix = commit(repo, {"src/calc/__init__.py": CALC_INIT.replace("x / 2", "x // 2"), "tests/test_half.py": HALF_TEST},
                 "Fix half", "2026-03-05T10:00:00Z")
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", base, "--fix", fix, "--id", "vcs", "-o", tmp_path / "s")
    assert res.exit_code == 0, res.output
    exam = tmp_path / "s" / "tasks" / "vcs"
    assert json.loads((exam / "env.json").read_text())["distribution"] == {"name": "calc", "version": "1.2.3"}
    assert "__version__" in (exam / "workspace/src/calc/_version.py").read_text()
    assert json.loads((exam / "source.json").read_text())["buildWritten"] == ["src/calc/_version.py"]
    fixed = tmp_path / "fixed"
    shutil.copytree(exam / "workspace", fixed)
    shutil.copy(exam / "reference/src/calc/__init__.py", fixed / "src/calc/__init__.py")
    outcomes = [{t.nodeid: t.outcome for t in grade(sub, exam / "hidden", time_seconds=60).tests}
                for sub in (exam / "workspace", fixed)]
    assert outcomes == [{"tests.tests.test_half::test_half": "failed"}, {"tests.tests.test_half::test_half": "passed"}]


def test_a_bullseye_root_has_what_pip_needs_on_python_3_9() -> None:
    # marshmallow 78393d8 (classifiers up to 3.9): pip 26 run from its wheel on bullseye's python3.9 died at
    # "No module named 'distutils.cmd'" (Debian ships distutils apart), so no 3.9 environment could be built
    assert pyenv.root_packages("bullseye") == ("python3", "python3-distutils")
    assert pyenv.root_packages("bookworm") == ("python3",)


def test_the_resolution_is_closed_for_the_images_python_not_the_hosts(tmp_path: Path) -> None:
    """uv resolves for the image's Python and platform (pip download --python-version 3.9 on a 3.11 host left
    out pytest's exceptiongroup and tomli: pytest could not start in the bullseye image, marshmallow 78393d8);
    what the hand-written closure (envimage/closure.py, now gone) computed, uv computes."""
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "pytest", ['exceptiongroup>=1; python_version < "3.11"', "tomli>=1; python_version < '3.11'",
                             "colorama; sys_platform == 'win32'", "pluggy<2,>=1"])
    for name in ("pluggy", "exceptiongroup", "tomli", "colorama", "sortedcontainers", "newer", "attrs"):
        _wheel(links, name, [])
    _wheel(links, "coverage", ['tomli; python_full_version <= "3.11.0a6" and extra == "toml"'])
    _wheel(links, "hypothesis", ["attrs>=1", "sortedcontainers"])
    (tmp_path / "index").mkdir()
    reqs = ["pytest", "coverage[toml]", "hypothesis", "newer; python_version >= '3.12'"]
    got = {}
    for py in ("3.9", "3.11", "3.13"):
        inputs = pyenv.build_inputs({"python": py, "requirements": reqs, "package": ["attrs"]})
        pins, left_out = lock.resolve(inputs, tmp_path / py, index_url=(tmp_path / "index").as_uri(),
                                      find_links=[links])
        got[py] = sorted(p.name for p in pins)
        assert left_out == ["attrs"]  # the package under test: never fetched, never installed
    common = ["coverage", "hypothesis", "pluggy", "pytest", "sortedcontainers"]
    assert got["3.9"] == sorted([*common, "exceptiongroup", "tomli"])
    assert got["3.11"] == common and got["3.13"] == sorted([*common, "newer"])


def test_python_choice_follows_requires_and_classifiers() -> None:
    assert pythons.choose_python(">=3.6, <3.10", []) == "3.9"
    assert pythons.choose_python(">=3.12", []) == "3.13"
    assert pythons.choose_python(None, ["3.7", "3.8", "3.9"]) == "3.9"
    assert pythons.choose_python("~=3.11", []) == "3.11"
    # classifiers that stop below every Python we have (requests in 2016: 3.3-3.5): the oldest allowed
    assert pythons.choose_python(None, ["3.3", "3.4", "3.5"]) == "3.9"
    assert pythons.choose_python(">=3.10", ["3.5"]) == "3.11"
    assert not pythons.satisfies("3.9", ">=3.10") and pythons.satisfies("3.11", "!=3.10.*,>=3.8")


def _sdist(links: Path, marker: Path) -> None:
    """A real source distribution whose setup.py would leave ``marker`` on the host if anything ran it."""
    links.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in (("evilpkg-1.0/setup.py", f"open({str(marker)!r}, 'w').write('ran')\n"),
                           ("evilpkg-1.0/PKG-INFO", "Metadata-Version: 2.1\nName: evilpkg\nVersion: 1.0\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (links / "evilpkg-1.0.tar.gz").write_bytes(buf.getvalue())


def test_a_package_with_only_a_source_distribution_is_named_and_refused(tmp_path: Path) -> None:
    marker = tmp_path / "build-script-ran"
    _sdist(tmp_path / "links", marker)
    (tmp_path / "index").mkdir()  # an empty index: nothing but the --find-links dir answers, no network
    index = (tmp_path / "index").as_uri()
    inputs = pyenv.build_inputs({"python": "3.11", "requirements": ["evilpkg"], "package": ["calc"]})
    with pytest.raises(UsageError, match=r"evilpkg: no wheel for CPython 3.11 .*only a source distribution"):
        lock.resolve(inputs, tmp_path / "wheels", index_url=index, find_links=[tmp_path / "links"])
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("evilpkg\n")
    res = cli("env", "build", f"oci:{tmp_path / 'images'}:x", "--requirements", reqs, "--find-links",
              tmp_path / "links", "--index-url", index, "--wheels-only")
    assert res.exit_code == 2 and "evilpkg: no wheel" in res.output and "refused" in res.output, res.output
    assert "--wheels-only forbids building it" in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not marker.exists() and not (tmp_path / "images").exists()


@pytest.mark.skipif(shutil.which("mmdebstrap") is None or shutil.which("bwrap") is None,
                    reason="a build needs mmdebstrap and bubblewrap (checked before the resolution)")
def test_by_default_a_source_only_requirement_goes_to_the_sandboxed_build_never_the_host(tmp_path: Path) -> None:
    """As pip would, ``env build`` builds a requirement that has only an sdist (jmespath's 2013 ``ply==3.4``
    was refused by the docs' commands while wheels only was the default) — inside the sandbox. Here the empty
    index has no setuptools for the build, so the run stops at the build's own requirement: proof that the
    default went to build it, and that nothing of it ran on the host."""
    marker = tmp_path / "build-script-ran"
    _sdist(tmp_path / "links", marker)
    (tmp_path / "index").mkdir()
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("evilpkg\n")
    res = cli("env", "build", f"oci:{tmp_path / 'images'}:x", "--requirements", reqs, "--find-links",
              tmp_path / "links", "--index-url", (tmp_path / "index").as_uri())
    assert res.exit_code == 2 and "evilpkg-1.0.tar.gz (only a source distribution) is built inside the sandbox, " \
        "but its build requirements cannot be had: setuptools" in res.output, res.output
    assert not marker.exists() and not (tmp_path / "images").exists()


def test_the_sdist_built_is_of_the_version_the_resolver_wanted_not_the_newest(tmp_path: Path) -> None:
    """jmespath 8c0fc3e pins ``ply==3.4`` (no wheel); the build took the newest sdist, ply 3.11, which no
    resolution of ``ply==3.4`` can use."""
    from acx_oci.errors import NoWheel

    _sdist(tmp_path / "links", tmp_path / "marker")
    (tmp_path / "links" / "evilpkg-2.0.tar.gz").write_bytes((tmp_path / "links" / "evilpkg-1.0.tar.gz").read_bytes())
    (tmp_path / "index").mkdir()
    for want, names in (("evilpkg==1.0", ["evilpkg-1.0.tar.gz"]), ("evilpkg", ["evilpkg-2.0.tar.gz"])):
        inputs = pyenv.build_inputs({"python": "3.11", "requirements": [want], "package": ["calc"]})
        with pytest.raises(NoWheel) as caught:
            lock.resolve(inputs, tmp_path / "wheels", index_url=(tmp_path / "index").as_uri(),
                         find_links=[tmp_path / "links"])
        assert [Path(sdist.pick(caught.value)).name] == names, caught.value.sdists


def test_the_built_wheel_is_taken_without_following_a_link_and_only_for_the_sdists_project(tmp_path: Path) -> None:
    """The sandbox writes the build's output folder. A build requirement's ``.pth`` that swapped the wheel for a
    symlink made the host chmod 0644 and hash the file it pointed at (an attacker's review); a wheel named for
    another project (``pytest-999``) would have joined the resolution in its place."""
    secret = tmp_path / "host-secret.key"
    secret.write_bytes(b"secret")
    secret.chmod(0o600)
    out = tmp_path / "out"
    out.mkdir()
    (out / "ply-3.4-py3-none-any.whl").symlink_to(secret)
    with pytest.raises(UsageError, match="not a regular file; refused"):
        sdist._take_wheel(out, "ply-3.4-py3-none-any.whl", "ply-3.4.tar.gz", tmp_path / "dest")
    assert secret.stat().st_mode & 0o777 == 0o600 and not (tmp_path / "dest" / "ply-3.4-py3-none-any.whl").exists()
    for name in ("pytest-999-py3-none-any.whl", "ply-3.5-py3-none-any.whl", "not-a-wheel.whl"):
        (out / name).write_bytes(b"PK")
        with pytest.raises(UsageError, match="a wheel of another project or version; refused"):
            sdist._take_wheel(out, name, "ply-3.4.tar.gz", tmp_path / "dest")
    (out / "ply-3.4-py3-none-any.whl").unlink()
    (out / "ply-3.4-py3-none-any.whl").write_bytes(b"PK\x03\x04 wheel")
    taken = sdist._take_wheel(out, "ply-3.4-py3-none-any.whl", "ply-3.4.tar.gz", tmp_path / "dest")
    assert taken.parent == tmp_path / "dest" and taken.read_bytes() == b"PK\x03\x04 wheel"
    assert taken.stat().st_mode & 0o777 == 0o644


def _wheel(links: Path, name: str, requires: list[str], *, files: dict[str, str] | None = None,
           entry_points: str = "", version: str = "1.0") -> None:
    """A minimal pure-Python wheel (what pip download takes; nothing in it runs)."""
    import zipfile

    info = f"{name}-{version}.dist-info"
    meta = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            + "".join(f"Requires-Dist: {r}\n" for r in requires))
    with zipfile.ZipFile(links / f"{name}-{version}-py3-none-any.whl", "w") as zf:
        for path, text in ({f"{name}.py": ""} if files is None else files).items():
            zf.writestr(path, text)
        zf.writestr(f"{info}/METADATA", meta)
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        if entry_points:
            zf.writestr(f"{info}/entry_points.txt", entry_points)
        zf.writestr(f"{info}/RECORD", "")


def test_the_package_under_test_is_never_installed_even_when_a_test_dependency_pulls_it_in(tmp_path: Path) -> None:
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "calc", [])
    _wheel(links, "calcplugin", ["calc>=1"])  # a pytest plugin of the project, say: it requires the project
    (tmp_path / "index").mkdir()
    inputs = pyenv.build_inputs({"python": "3.11", "requirements": ["calcplugin"], "package": ["calc"]})
    pins, left_out = lock.resolve(inputs, tmp_path / "wheels", index_url=(tmp_path / "index").as_uri(),
                                      find_links=[links])
    assert [p.name for p in pins] == ["calcplugin"] and left_out == ["calc"]
    assert sorted(f.name for f in (tmp_path / "wheels" / "dist").iterdir()) == ["calcplugin-1.0-py3-none-any.whl"]
    assert pins[0].line().startswith("calcplugin==1.0 --hash=sha256:")


@pytest.mark.skipif(shutil.which("mmdebstrap") is None or shutil.which("bwrap") is None,
                    reason="a build needs mmdebstrap and bubblewrap (checked before the resolution)")
def test_an_exam_whose_environment_cannot_be_built_is_refused_and_named(tmp_path: Path) -> None:
    marker = tmp_path / "build-script-ran"
    _sdist(tmp_path / "links", marker)
    (tmp_path / "index").mkdir()
    shas = make_repo(tmp_path / "calc", {"requirements-test.txt": "evilpkg\n"})
    assert cli("exam", "import", "--classification", "public",
               "--repo", tmp_path / "calc", "--base", shas["base"], "--fix", shas["fix"],
               "--id", "calc-env", "-o", tmp_path / "suite").exit_code == 0
    res = cli("exam", "certify", tmp_path / "suite", "--out", tmp_path / "certs", "--environments", "--env-store",
              f"oci:{tmp_path / 'store'}", "--find-links", tmp_path / "links", "--index-url",
              (tmp_path / "index").as_uri(), "--wheels-only", "--json")
    assert res.exit_code == 1, res.output
    rec = json.loads(res.stdout)["records"][0]
    assert not rec["certified"] and rec["stages"]["gold"]["environmentBuilt"] is False
    assert "evilpkg: no wheel" in rec["stages"]["gold"]["reason"]
    assert "only a source distribution" in rec["stages"]["gold"]["reason"]
    assert not marker.exists() and not list((tmp_path / "certs").glob("by-freeze/*"))  # not cached


def test_allow_build_fetches_only_from_find_links_and_checks_the_index_hash(tmp_path: Path) -> None:
    from acx_oci.envimage import sdist

    _sdist(tmp_path / "links", tmp_path / "marker")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret-1.0.tar.gz").write_bytes(b"host file")
    with pytest.raises(UsageError, match="in no --find-links directory"):
        sdist.fetch((elsewhere / "secret-1.0.tar.gz").as_uri(), tmp_path / "out", [tmp_path / "links"])
    url = (tmp_path / "links" / "evilpkg-1.0.tar.gz").as_uri()
    with pytest.raises(UsageError, match="the index says " + "0" * 64):
        sdist.fetch(url + "#sha256=" + "0" * 64, tmp_path / "out2", [tmp_path / "links"])
    got, digest = sdist.fetch(url, tmp_path / "out3", [tmp_path / "links"])
    assert got.read_bytes() == (tmp_path / "links" / "evilpkg-1.0.tar.gz").read_bytes() and len(digest) == 64
    assert sdist.build_requires(got) == sdist.DEFAULT_BUILD_REQUIRES  # no pyproject.toml in it: setuptools
    assert not (tmp_path / "marker").exists()


def test_bad_specs_are_refused_before_any_download() -> None:
    with pytest.raises(UsageError, match=r"python '2\.7': expected one of"):
        pyenv.build_inputs({"python": "2.7", "requirements": []})
    for hostile in ("git+https://x/y", "six\n--index-url http://evil.example/simple", "six --hash=sha256:00",
                    "six ; python_version > '3' -e .", "six @ https://evil.example/six.whl", "six\r--pre"):
        with pytest.raises(UsageError, match="is not a requirement"):
            pyenv.build_inputs({"python": "3.11", "requirements": [hostile]})
    assert pyenv.build_inputs({"python": "3.11", "requirements": ["attrs[tests]>=21,<24; python_version >= '3.8'"]})
    a = pyenv.spec_digest({"python": "3.11", "requirements": ["six"], "package": ["calc"], "sources": ["a"]})
    b = pyenv.spec_digest({"python": "3.11", "requirements": ["six"], "package": ["calc"], "sources": ["b"]})
    assert a == b != pyenv.spec_digest({"python": "3.11", "requirements": ["six==1.16.0"], "package": ["calc"]})


def test_an_image_built_under_a_tag_of_ones_own_is_found_by_certify_through_its_spec_tag(tmp_path: Path) -> None:
    """``env build REPO:TAG --spec`` also tags the image ``spec-<digest>``: certify's ``--env-store REPO`` looked
    only there, so the docs' build-then-certify built every image twice (minutes each; issue 37's walk)."""
    from acx_oci.envimage.build import also_tag
    from acx_oci.oci import open_store, parse_reference

    spec = {"python": "3.11", "requirements": ["pytest"], "package": ["calc"]}
    store = f"oci:{tmp_path / 'layout'}"
    with open_store(parse_reference(f"{store}:calc")) as st:
        config = st.push_blob(b"{}", "application/vnd.oci.image.config.v1+json")
        manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                               "config": config.to_json(), "layers": []}).encode()
        digest = st.push_manifest(manifest, "application/vnd.oci.image.manifest.v1+json", "calc").digest
    with pytest.raises(UsageError, match="not found"):
        pyenv.ensure_image(spec, store, build=False)
    also_tag(f"{store}:calc", pyenv.spec_tag(spec), digest)  # what env build --spec does after its push
    assert pyenv.ensure_image(spec, store, build=False) == f"{store}:{pyenv.spec_tag(spec)}@{digest}"


# --- slow: one image with a package from PyPI ------------------------------------------------------------

ENV_HIDDEN = HIDDEN.replace("from calc import clamp, sign\n", "import sys\n\nimport acxsdistdemo\nimport iniconfig\n\n"
                            "from calc import clamp, sign\n") + '''

def test_graded_by_the_environment():
    assert sys.prefix == "/opt/acx-venv" and iniconfig.__file__.startswith("/opt/acx-venv/")
    assert acxsdistdemo.VALUE == 42
'''
#: A package with only a source distribution: built with --allow-build inside the sandbox, never on the host.
DEMO_SETUP = '''from setuptools import setup
try:
    open(MARKER, "w").write("the build script ran here")
except OSError:
    pass  # inside the sandbox the host's path does not exist
setup(name="acxsdistdemo", version="1.0", py_modules=["acxsdistdemo"])
'''


def _demo_sdist(links: Path, marker: Path) -> None:
    links.mkdir(parents=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in (("acxsdistdemo-1.0/setup.py", DEMO_SETUP.replace("MARKER", repr(str(marker)))),
                           ("acxsdistdemo-1.0/acxsdistdemo.py", "VALUE = 42\n"),
                           ("acxsdistdemo-1.0/PKG-INFO", "Metadata-Version: 2.1\nName: acxsdistdemo\nVersion: 1.0\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (links / "acxsdistdemo-1.0.tar.gz").write_bytes(buf.getvalue())


@pytest.fixture(scope="session")
def py_env_image(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("mmdebstrap") is None or shutil.which("bwrap") is None:
        pytest.skip("mmdebstrap or bubblewrap not installed")
    tmp = tmp_path_factory.mktemp("envstore")
    store = f"oci:{tmp / 'layout'}"
    marker = tmp / "host-marker"
    _demo_sdist(tmp / "links", marker)
    # as the exam below derives it: resolved as of its fix's date (issue 45: environments of the fix's own time)
    spec = {"python": "3.11", "requirements": ["iniconfig", "pytest", "acxsdistdemo"], "package": ["calc"],
            "resolvedAsOf": "2026-03-05"}
    with pytest.raises(UsageError, match=r"acxsdistdemo: no wheel .*only a source distribution"):
        pyenv.ensure_image(spec, store, find_links=[tmp / "links"])
    # the Debian root test_envimage's image starts from (one mmdebstrap per session); its pytest goes unused
    # built under a tag of the user's choosing, as the docs' walk does: certify must still find it by spec
    built = pyenv.build_env_image(f"{store}:calc", spec, epoch=1_700_000_000,
                                  keep_tar=root_tar(tmp_path_factory, PACKAGES), include=PACKAGES,
                                  find_links=[tmp / "links"], allow_build=True)
    ref = pyenv.ensure_image(spec, store, build=False)
    assert ref.endswith("@" + built.manifest_digest)
    assert not marker.exists()  # the sdist's setup.py ran only inside the sandbox
    return {"store": store, "ref": ref, "spec": spec}


def _fake_pytest(links: Path) -> None:
    """A ``pytest`` that imports and cannot run a test: what pytest 2.9 is on CPython 3.9 (INTERNALERROR)."""
    main = "print('INTERNALERROR> AssertionError')\nraise SystemExit(3)\n"
    _wheel(links, "pytest", [], files={"pytest/__init__.py": "", "pytest/__main__.py": main}, version="0.0.1")


def _needs_builds() -> None:
    """Skip without mmdebstrap, bubblewrap or a route to PyPI (pip's own wheel comes from there)."""
    from acx_oci.envimage.preflight import probe_index
    from acx_oci.errors import MachineUnfit

    if shutil.which("mmdebstrap") is None or shutil.which("bwrap") is None:
        pytest.skip("mmdebstrap or bubblewrap not installed")
    try:
        probe_index(None, timeout=5)
    except MachineUnfit:
        pytest.skip("PyPI is not reachable from this machine")


@pytest.mark.slow
def test_an_environment_whose_pytest_imports_but_cannot_run_a_test_is_refused(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """jmespath 8c0fc3e (2013) resolved pytest 2.9.1, which imports on CPython 3.9 and then ends every run
    with an INTERNALERROR: ``env build`` said ok and certification read a harness lane error. The build runs a
    one-line test with the image's pytest; one that cannot is refused (with a date, the build first tries the
    index a year later at a time, while that gives another lock)."""
    _needs_builds()
    tmp = tmp_path_factory.mktemp("fakepytest")
    (tmp / "links").mkdir()
    _fake_pytest(tmp / "links")
    spec = {"python": "3.11", "requirements": ["pytest==0.0.1"], "package": ["calc"]}
    with pytest.raises(UsageError, match=r"the image's pytest 0\.0\.1 cannot run a one-line test on CPython "
                                         r"3\.11\.\d+ \(exit 3: INTERNALERROR> AssertionError\)"):
        pyenv.build_env_image(f"oci:{tmp / 'layout'}:x", spec, epoch=1_700_000_000,
                              keep_tar=root_tar(tmp_path_factory, PACKAGES), include=PACKAGES,
                              find_links=[tmp / "links"])
    assert not (tmp / "layout").exists()


@pytest.mark.slow
def test_a_new_spec_whose_lock_was_installed_before_adds_only_its_report(
        py_env_image: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 43: a harvest meets a new spec at nearly every commit, and most resolve to a lock seen before. The
    image is three layers: the Debian root's and the venv's are packed once and kept (a venv per lock on its
    root); a new spec with the same lock installs nothing and adds only its report. A build from scratch
    (``root_cache=False``, as ``env build --twice``) gives the same layers: the caches change no digest."""
    layout = Path(py_env_image["store"].removeprefix("oci:"))
    spec = {**py_env_image["spec"], "package": ["calc", "calc2"]}  # another spec digest, the same lock
    args: dict[str, Any] = {"epoch": 1_700_000_000, "include": PACKAGES, "find_links": [layout.parent / "links"],
                            "allow_build": True}
    kept = pyenv.build_env_image(f"{py_env_image['store']}:calc2", spec,
                                 keep_tar=root_tar(tmp_path_factory, PACKAGES), **args)
    assert kept.seconds["venvLayerKept"] is True
    first = json.loads((layout / "blobs" / "sha256" / py_env_image["ref"].rsplit(":", 1)[1]).read_bytes())
    ours = [x["digest"] for x in kept.layers]
    assert ours[:2] == [x["digest"] for x in first["layers"][:2]] and ours[2] != first["layers"][2]["digest"]
    with tarfile.open(layout / "blobs" / "sha256" / ours[2].split(":", 1)[1]) as tf:
        member = tf.extractfile("opt/acx-venv/acx-env.json")
        assert member is not None and json.loads(member.read())["specDigest"] == pyenv.spec_digest(spec)
    scratch = pyenv.build_env_image(f"{py_env_image['store']}:calc2-scratch", spec, root_cache=False,
                                    keep_tar=root_tar(tmp_path_factory, PACKAGES), **args)  # packs, installs anew
    assert scratch.seconds["venvLayerKept"] is False and scratch.manifest_digest == kept.manifest_digest


def _plugin_importing(links: Path, module: str) -> None:
    """A pytest plugin (entry point ``pytest11``) that imports ``module`` when pytest loads it."""
    _wheel(links, "acxplugdemo", [], files={"acxplugdemo.py": f"import {module}\n"},
           entry_points="[pytest11]\nacxplugdemo = acxplugdemo\n")


@pytest.mark.slow
def test_a_plugin_that_imports_the_package_under_test_does_not_refuse_the_environment(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """attrs (a repository nobody here had used): a test dependency's pytest plugin imports ``attr``, which the
    image leaves out as the package under test, so the build's one-line test failed and every attrs exam was
    refused with "the image's pytest 9.2.0 cannot run a one-line test". The grader gives the submission's
    package from the start in that case; the build now says so (``pytestImports``) instead of refusing."""
    _needs_builds()
    tmp = tmp_path_factory.mktemp("plugin")
    (tmp / "links").mkdir()
    _plugin_importing(tmp / "links", "attr")
    spec = {"python": "3.11", "requirements": ["pytest", "acxplugdemo"], "package": ["attr", "attrs"],
            "resolvedAsOf": "2026-03-05"}
    built = pyenv.build_env_image(f"oci:{tmp / 'layout'}:x", spec, epoch=1_700_000_000,
                                  keep_tar=root_tar(tmp_path_factory, PACKAGES), include=PACKAGES,
                                  find_links=[tmp / "links"])
    assert built.python_env["pytestImports"] == "attr"


@pytest.mark.slow
def test_a_plugin_needing_a_project_package_the_fix_did_not_change_is_given_the_submissions(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """A harvest of attrs (2017-2025): 21 exams in a row were lane errors, "the test runner cannot start: ... No
    module named 'attrs'". Their environment has pytest-mypy-plugins, whose jsonschema imports ``attrs``; the fix
    changed only ``attr``, and the boot gave the submission's from the start for the packages the fix changed.
    When the runner needs the project's distribution, every package the image leaves out is now the
    submission's from the start (the image's own report names them)."""
    from acx_oci.envimage import prepare
    from acx_oci.sandbox import staging_dir

    _needs_builds()
    tmp = tmp_path_factory.mktemp("plugin-other")
    (tmp / "links").mkdir()
    _wheel(tmp / "links", "acxplugcalc", ["calcx"], files={"acxplugcalc.py": "import calcx\n"},
           entry_points="[pytest11]\nacxplugcalc = acxplugcalc\n")
    spec = {"python": "3.11", "requirements": ["pytest", "acxplugcalc"], "package": ["calc", "calcx"],
            "resolvedAsOf": "2026-03-05"}
    built = pyenv.build_env_image(f"oci:{tmp / 'layout'}:x", spec, epoch=1_700_000_000,
                                  keep_tar=root_tar(tmp_path_factory, PACKAGES), include=PACKAGES,
                                  find_links=[tmp / "links"])
    assert built.python_env["pytestImports"] == "calcx"
    cache = staging_dir("acx-test-pyenv-")  # 0755 under /tmp: the sandbox's uid must reach the root
    try:
        root = prepare(f"oci:{tmp / 'layout'}@{built.manifest_digest}", cache_dir=cache).root
        got = _grade_calc(tmp, root)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert got.passed, got.stderr.decode()[-800:]
    assert b"from the start: calc, calcx" in got.stderr


def _grade_calc(tmp: Path, root: Path) -> Any:
    """The calc tree (``calc`` and ``calcx`` under ``src/``), the fix having changed ``calc``, graded in ``root``."""
    from acx_oci.sandbox import SandboxSpec, grade

    ws, tests = tmp / "ws", tmp / "tests"
    for rel, text in {"src/calc/__init__.py": "def two():\n    return 2\n",
                      "src/calcx/__init__.py": "X = 1\n"}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    tests.mkdir()
    (tests / "test_calc.py").write_text("from calc import two\n\n\ndef test_two():\n    assert two() == 2\n")
    (tests / "acx-grader.json").write_text(json.dumps({"packages": ["calc"], "distributions": {"calcx": "1.0"}}))
    return grade(ws, tests, spec=SandboxSpec(rootfs=root, time_seconds=60, memory_mib=2048, pids=256))


def test_a_runner_that_misses_anything_but_the_package_under_test_still_refuses_the_image() -> None:
    """The other side of the rule above: a plugin that misses some other module is a harness that cannot run."""
    from acx_oci.envimage.lock import Pinned

    pins = [Pinned("pytest", "9.2.0", "pytest-9.2.0-py3-none-any.whl", "0" * 64)]
    said = {"python": "3.11.2", "runs": "exit 3: E   ModuleNotFoundError: No module named 'yaml'",
            "runsMissing": "yaml"}
    assert pyenv.runner_needs(said, {"attr", "attrs"}) == said
    with pytest.raises(UsageError, match=r"cannot run a one-line test .*No module named 'yaml'"):
        pyenv.pytest_check(pyenv.runner_needs(said, {"attr", "attrs"}), pins, ["attr", "attrs"])
    needs = pyenv.runner_needs({**said, "runsMissing": "attr._make"}, {"attr", "attrs"})
    assert needs["runs"] is None and pyenv.pytest_check(needs, pins, ["attr", "attrs"]) == "attr"


def _pyc_flags(tf: tarfile.TarFile, prefix: str) -> dict[str, int]:
    """The header flags of every ``.pyc`` under ``prefix`` (PEP 552: 3 is hash-based and checked)."""
    out: dict[str, int] = {}
    for m in tf:
        name = m.name.removeprefix("./")
        if name.startswith(prefix) and name.endswith(".pyc") and m.isfile():
            f = tf.extractfile(m)
            assert f is not None
            out[name] = int.from_bytes(f.read(8)[4:8], "little")
    return out


@pytest.mark.slow
def test_the_environment_image_holds_bytecode_checked_by_hash_never_by_mtime(py_env_image: dict[str, Any]) -> None:
    """A timestamp ``.pyc`` keeps its source's mtime: the build's own check that pytest imports once wrote such
    ``__pycache__`` into the venv, and two builds of one spec (jmespath 8c0fc3e, twice) were two images. Then the
    venv held none, and the root's read as stale once the layer clamped mtimes: every grade compiled pytest and
    73 stdlib modules again (1.55 s a grade of attrs, 0.86 s with bytecode). Every ``.pyc`` of the root and the
    venv is now hash-checked, pytest's among them; a build from scratch gives the same layers (the test above)."""
    layout = Path(py_env_image["store"].removeprefix("oci:"))
    blob = layout / "blobs" / "sha256"
    manifest = json.loads((blob / py_env_image["ref"].rsplit(":", 1)[1]).read_bytes())
    root, layer, _ = manifest["layers"]  # the Debian root, the venv, the spec's report
    with tarfile.open(blob / layer["digest"].split(":", 1)[1]) as tf:
        venv = _pyc_flags(tf, "opt/acx-venv/")
    assert any(n.startswith("opt/acx-venv/lib/") and "/pytest/__pycache__/__init__." in n for n in venv)
    assert set(venv.values()) == {3}
    with tarfile.open(blob / root["digest"].split(":", 1)[1]) as tf:
        stdlib = _pyc_flags(tf, "usr/lib/python3")
    assert len(stdlib) > 100 and set(stdlib.values()) == {3}


@pytest.mark.slow
def test_certify_grades_in_the_exams_own_environment(py_env_image: dict[str, Any], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from acx_oci.envimage import prune
    from acx_oci.sandbox import staging_dir

    cache = staging_dir("acx-test-pyenv-")  # 0755 under /tmp: the sandbox's uid must reach the root
    monkeypatch.setenv("ACX_OCI_CACHE_DIR", str(cache))
    try:
        _certify_in_own_environment(py_env_image, tmp_path)
    finally:
        prune(cache, 0)
        shutil.rmtree(cache, ignore_errors=True)


def _certify_in_own_environment(py_env_image: dict[str, Any], tmp_path: Path) -> None:
    repo = tmp_path / "calc"
    repo.mkdir()
    git(repo, "init", "-q")
    # tests/ is a package (as cachetools' is): the image's pytest (>= 8) imports its __init__.py again at setup,
    # after the grader deleted the hidden files, so every test was an error before the grader left a stand-in
    base = commit(repo, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE, "tests/__init__.py": "# tests\n",
                         "pyproject.toml": '[project]\nname = "calc"\n\n[project.optional-dependencies]\n'
                                           'test = ["iniconfig", "pytest", "acxsdistdemo"]\n'}, "initial",
                 "2026-03-01T10:00:00Z")
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": ENV_HIDDEN}, "Fix", "2026-03-05T10:00:00Z")
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", base, "--fix", fix, "--id", "calc-env", "-o",
              tmp_path / "suite")
    assert res.exit_code == 0, res.output
    spec = json.loads((tmp_path / "suite" / "tasks" / "calc-env" / "env.json").read_text())
    assert pyenv.spec_digest(spec) == pyenv.spec_digest(py_env_image["spec"])  # the session's image serves it
    cert = cli("exam", "certify", tmp_path / "suite", "--out", tmp_path / "certs", "--environments",
               "--env-store", py_env_image["store"], "--json")
    assert cert.exit_code == 0, cert.output
    rec = json.loads(cert.stdout)["records"][0]
    assert rec["certified"], rec
    env = rec["stages"]["freeze"]["environment"]
    assert env["python"].startswith("3.11.") and env["specDigest"] == pyenv.spec_digest(spec)
    assert any(p.startswith("iniconfig==") for p in env["packages"])
    assert any(p.startswith("pytest==") for p in env["packages"])
    assert "acxsdistdemo==1.0" in env["packages"] and env["builtFromSource"] == ["acxsdistdemo-1.0.tar.gz"]
    assert not any(p.lower().startswith("calc==") for p in env["packages"])
    assert rec["stages"]["freeze"]["imageDigest"] == py_env_image["ref"].rsplit("@", 1)[1]
    from acx_oci.model import CertificationRecord
    from acx_oci.services.artifacts.benchmark_env import plan_pins  # what benchmark push pins the exam's task to

    assert plan_pins(tmp_path / "suite", {rec["exam"]: CertificationRecord.load(rec)}).pins == {
        "calc-env": (rec["stages"]["freeze"]["imageDigest"], pyenv.spec_digest(spec))}
    plain = cli("exam", "certify", tmp_path / "suite", "--out", tmp_path / "plain", "--json", "--no-environments")
    assert plain.exit_code == 1  # on the host's Python there is no iniconfig and no venv: the gold fails
    assert json.loads(plain.stdout)["records"][0]["stages"]["freeze"]["environment"]["python"] == "host"
    # on a Dask cluster (issue 43): the image is pinned here and pulled by the worker, which grades in it
    from ..support.dask_cluster import start_cluster

    cluster = start_cluster(tmp_path / "cluster")
    try:
        cluster.add_worker("w1")
        dask = cli("exam", "certify", tmp_path / "suite", "--out", tmp_path / "dask", "--executor", cluster.url,
                   "--env-store", py_env_image["store"], "--json")
    finally:
        cluster.stop()
    assert dask.exit_code == 0, dask.output
    on_worker = json.loads(dask.stdout)["records"][0]
    assert on_worker["certified"] and on_worker["stages"]["freeze"]["imageDigest"] == rec["stages"]["freeze"][
        "imageDigest"]
    assert on_worker["stages"]["freeze"]["environment"] == env

