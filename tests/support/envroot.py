"""One Debian root tar per session for the slow environment-image tests (mmdebstrap takes minutes).

``test_envimage``'s image and ``test_exam_env``'s Python environment both start from bookworm with
``python3`` and ``python3-pytest``: the first build writes the tar here and every later one reuses it. With
``$ACX_TEST_ENVIMAGE_DIR`` the tar outlives the session too.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

PACKAGES = ("python3", "python3-pytest")
_BASE: list[Path] = []


def root_tar(factory: pytest.TempPathFactory, packages: tuple[str, ...] = PACKAGES) -> Path:
    """Where the session's (or ``$ACX_TEST_ENVIMAGE_DIR``'s) root tar of ``packages`` is kept."""
    if not _BASE:
        base = Path(os.environ.get("ACX_TEST_ENVIMAGE_DIR") or factory.mktemp("envimage"))
        base.mkdir(parents=True, exist_ok=True)
        _BASE.append(base)
    key = hashlib.sha256(",".join(sorted(packages)).encode()).hexdigest()[:16]
    return _BASE[0] / f"rootfs-{key}.tar"
