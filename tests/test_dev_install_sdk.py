"""``acx-oci dev install-sdk``: the official model SDKs for the sandbox's ``/usr/bin/python3`` without a clone
(the install script ships in the package; ``scripts/install-sdk.sh`` only execs it). Fast: the installed
directory answers at once (CI's scripts/test.sh installs it first), and a failure is one line, exit 3."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from .support.cli import cli
from .support.env import ROOT
from .support.sdk import SDK_DIR, sdk_python


def _pinned() -> str:
    text = (resources.files("acx_oci.cli") / "install-sdk.sh").read_text("utf-8")
    openai = re.search(r"OPENAI_VERSION=\$\{ACX_OPENAI_VERSION:-([\d.]+)\}", text)
    anthropic = re.search(r"ANTHROPIC_VERSION=\$\{ACX_ANTHROPIC_VERSION:-([\d.]+)\}", text)
    assert openai and anthropic
    return f"openai {openai[1]} anthropic {anthropic[1]}"


def test_the_script_ships_in_the_package() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"]
    assert "cli/*.sh" in data["acx_oci"]
    assert (ROOT / "acx_oci" / "cli" / "install-sdk.sh").is_file()
    assert "acx_oci/cli/install-sdk.sh" in (ROOT / "scripts" / "install-sdk.sh").read_text("utf-8")


def test_an_installed_sdk_is_only_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    _python, path = sdk_python()
    if path is None:
        pytest.skip(f"{SDK_DIR} is not installed (scripts/install-sdk.sh or acx-oci dev install-sdk)")
    monkeypatch.delenv("ACX_OPENAI_VERSION", raising=False)
    monkeypatch.delenv("ACX_ANTHROPIC_VERSION", raising=False)
    res = cli("dev", "install-sdk", "--dir", str(SDK_DIR))
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == _pinned()


def test_a_directory_that_cannot_be_made_is_one_line_exit_3(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    res = cli("dev", "install-sdk", "--dir", str(tmp_path / "file" / "sub" / "sdk"))
    assert res.exit_code == 3, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: dev install-sdk: the SDKs could not be installed into")
    assert "Traceback" not in res.output
