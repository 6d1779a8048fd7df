"""Shared fixtures: the conformance vectors and a real local registry."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .registry_harness import Registry, registry_binary, start_registry

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"


def _vectors_dir() -> Path | None:
    env = os.environ.get("ACX_VECTORS")
    if env:
        p = Path(env)
        if not p.is_dir():
            raise RuntimeError(f"ACX_VECTORS={env} is set but is not a directory")
        return p
    p = ROOT.parent / "shared" / "vectors"
    return p if p.is_dir() else None


@pytest.fixture(scope="session")
def vectors() -> Path:
    """``../shared/vectors``; skip when absent (fail when ACX_VECTORS points nowhere)."""
    p = _vectors_dir()
    if p is None:
        pytest.skip("conformance vectors not found: ../shared/vectors is absent (set ACX_VECTORS)")
    return p


@pytest.fixture(scope="session")
def registry_server() -> Iterator[Registry]:
    if registry_binary() is None:
        if os.environ.get("CI"):
            raise RuntimeError("docker-registry is not installed; .ci/run must install it")
        pytest.skip("docker-registry not installed")
    reg = start_registry()
    try:
        yield reg
    finally:
        reg.stop()


@pytest.fixture(scope="session")
def registry(registry_server: Registry) -> str:
    """``127.0.0.1:PORT`` of a real CNCF Distribution registry with fresh storage."""
    return registry_server.host
