"""Environment images are bit-for-bit reproducible on every Python we offer (issue 45, rule 4).

Two builds of one Python 3.9 spec gave different images: Debian byte-compiles the standard library at install
with hash randomisation on, so a frozenset constant's order, and ~25 ``.pyc`` files of bullseye's
``/usr/lib/python3.9``, differed from build to build. The root's ``.pyc`` files are now compiled again from
their sources with ``PYTHONHASHSEED=0`` (``build.PYC_HOOK``). The bullseye root built twice from scratch, its
layers compared, is ``tests/envimage/test_envimage.py::test_building_twice_reports_both_digests`` (one build pair
for the command's ``--twice`` and for this; it fails on 8c6af49, whose mmdebstrap has no such hook).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acx_oci.envimage import build


def test_the_root_is_recompiled_with_a_fixed_hash_seed(tmp_path: Path) -> None:
    if shutil.which("mmdebstrap") is None:
        pytest.skip("mmdebstrap not installed")
    argv = build.mmdebstrap_argv("bullseye", ["python3"], tmp_path / "r.tar")
    assert "--customize-hook=" + build.PYC_HOOK in argv
    assert "PYTHONHASHSEED=0" in build.PYC_HOOK and "'" not in build.PYC_RECOMPILE  # one shell-quoted argument
    compile(build.PYC_RECOMPILE, "<hook>", "exec")  # the hook's Python is valid as written
