"""One Debian root tar per run for the slow environment-image tests (mmdebstrap takes minutes).

``test_envimage``'s image and ``test_exam_env``'s Python environment both start from bookworm with
``python3`` and ``python3-pytest``: the first asks for the tar, which is built here once, under a file lock,
and every later build reuses it. Under pytest-xdist the tar is shared by the workers (in the run's common
temporary folder), so two workers never run mmdebstrap for the same root nor write the same file. With
``$ACX_TEST_ENVIMAGE_DIR`` the tar outlives the run too.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path

import pytest

PACKAGES = ("python3", "python3-pytest")
SUITE = "bookworm"
EPOCH = 1_700_000_000


def _base(factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("ACX_TEST_ENVIMAGE_DIR"):
        base = Path(os.environ["ACX_TEST_ENVIMAGE_DIR"])
    elif os.environ.get("PYTEST_XDIST_WORKER"):
        base = factory.getbasetemp().parent / "envimage-shared"  # every worker's basetemp has this parent
    else:
        base = factory.getbasetemp() / "envimage-shared"
    base.mkdir(parents=True, exist_ok=True)
    return base


def root_tar(factory: pytest.TempPathFactory, packages: tuple[str, ...] = PACKAGES) -> Path:
    """The run's root tar of ``packages`` (bookworm), built on first use; skips without mmdebstrap."""
    from acx_oci.envimage.build import run_mmdebstrap

    key = hashlib.sha256(",".join(sorted(packages)).encode()).hexdigest()[:16]
    tar = _base(factory) / f"rootfs-{key}.tar"
    with open(tar.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not tar.exists():
            if shutil.which("mmdebstrap") is None:
                pytest.skip("mmdebstrap not installed")
            partial = tar.with_name(f"{tar.name}.partial{os.getpid()}")
            try:
                run_mmdebstrap(SUITE, list(packages), partial, epoch=EPOCH)
                os.replace(partial, tar)
            finally:
                partial.unlink(missing_ok=True)
    return tar
