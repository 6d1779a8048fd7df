"""The image's dependency closure is for its own Python, not the host's (pip download's markers are the host's)."""

from __future__ import annotations

import socket
import zipfile
from pathlib import Path

import pytest

from acx_oci.envimage import closure, pyenv
from acx_oci.errors import AcxError


def _wheel(dist: Path, name: str, version: str, requires: list[str]) -> None:
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(dist / f"{name}-{version}-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{name}-{version}.dist-info/METADATA", meta)


def test_markers_are_the_targets(tmp_path: Path) -> None:
    # what pip download left on a 3.11 host for pytest: no exceptiongroup, no tomli
    _wheel(tmp_path, "pytest", "8.4.2", ['exceptiongroup>=1; python_version < "3.11"', "iniconfig>=1",
                                          'tomli>=1; python_version < "3.11"', 'colorama; sys_platform == "win32"'])
    _wheel(tmp_path, "iniconfig", "2.1.0", [])
    _wheel(tmp_path, "attrs", "24.1.0", ['hypothesis; extra == "tests"', 'cloudpickle; extra == "cov"'])
    py39, py311 = (closure.target_environment(v, "x86_64") for v in ("3.9", "3.11"))
    assert closure.missing(tmp_path, ["pytest"], py39) == ["exceptiongroup>=1", "tomli>=1"]
    assert closure.missing(tmp_path, ["pytest"], py311) == []
    # an extra asked for at the top brings its requirements, and only its own
    assert closure.missing(tmp_path, ["attrs[tests]"], py311) == ["hypothesis"]
    assert closure.missing(tmp_path, ['attrs; python_version < "3.0"'], py311) == []


def test_the_closure_settles_or_refuses(tmp_path: Path) -> None:
    _wheel(tmp_path, "a", "1", ["b"])
    got: list[list[str]] = []

    def download(more: list[str]) -> None:
        got.append(more)
        for name in more:
            _wheel(tmp_path, name, "1", [])

    closure.complete(tmp_path, ["a"], closure.target_environment("3.9", "x86_64"), download)
    assert got == [["b"]]
    with pytest.raises(AcxError, match="did not settle"):  # an index that never serves what it names
        closure.complete(tmp_path, ["a", "c"], closure.target_environment("3.9", "x86_64"), lambda more: None)


def _pypi() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


@pytest.mark.slow
def test_a_39_resolution_of_pytest_holds_its_39_dependencies(tmp_path: Path) -> None:
    if not _pypi():
        pytest.skip("PyPI unreachable")
    inputs = pyenv.build_inputs({"python": "3.9", "requirements": ["pytest"], "package": []})
    pins, _ = pyenv.resolve(inputs, tmp_path)
    names = {p.name for p in pins}
    assert {"pytest", "exceptiongroup", "tomli", "iniconfig", "pluggy", "packaging"} <= names, names
