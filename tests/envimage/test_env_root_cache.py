"""The Debian root is made once per suite and reused by the next spec (issue 43: environments fast enough to
harvest), never past :data:`root.ROOT_MAX_AGE`, never through a link, and never by ``env build --twice``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from acx_oci.envimage import root as pyenv_root


def test_one_root_per_suite_packages_epoch_and_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACX_OCI_CACHE_DIR", str(tmp_path / "cache"))
    a = pyenv_root.cached_root("bookworm", ["python3", "ca-certificates"], 1_700_000_000, None)
    assert a == pyenv_root.cached_root("bookworm", ["ca-certificates", "python3"], 1_700_000_000, None)  # order: none
    others = {pyenv_root.cached_root("trixie", ["python3", "ca-certificates"], 1_700_000_000, None),
              pyenv_root.cached_root("bookworm", ["python3"], 1_700_000_000, None),
              pyenv_root.cached_root("bookworm", ["python3", "ca-certificates"], 1_700_000_001, None),
              pyenv_root.cached_root("bookworm", ["python3", "ca-certificates"], 1_700_000_000, "http://mirror.example")}
    assert a not in others and len(others) == 4
    assert a.parent == tmp_path / "cache" / "debian-roots" and a.name.startswith("bookworm-")


def test_a_stale_root_or_a_link_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACX_OCI_CACHE_DIR", str(tmp_path / "cache"))
    path = pyenv_root.cached_root("bookworm", ["python3"], 1, None)
    path.write_bytes(b"a root")
    assert pyenv_root.cached_root("bookworm", ["python3"], 1, None).read_bytes() == b"a root"  # young: reused
    old = time.time() - pyenv_root.ROOT_MAX_AGE - 60
    os.utime(path, (old, old))
    assert not pyenv_root.cached_root("bookworm", ["python3"], 1, None).exists()  # stale: made again
    (tmp_path / "elsewhere.tar").write_bytes(b"not ours")
    path.symlink_to(tmp_path / "elsewhere.tar")
    assert not pyenv_root.cached_root("bookworm", ["python3"], 1, None).exists()  # a link is never read
    assert (tmp_path / "elsewhere.tar").read_bytes() == b"not ours"
