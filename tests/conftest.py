"""Shared fixtures: the conformance vectors and a real local registry; the ``slow`` switch.

``slow`` tests (the extra repeats of the stress tests) are skipped unless ``--runslow`` is given or
``ACX_SLOW=1`` / ``CI=true`` is set; see :mod:`tests.support.env`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .support.env import (
    ROOT,
    SLOW_SKIP_REASON,
    STRESS_SKIP_REASON,
    ci_enabled,
    slow_enabled,
    stress_enabled,
    vectors_dir,
)
from .support.faultproxy import FaultProxy
from .support.registry import Registry, ggcr_binary, registry_binary, start_ggcr, start_registry

TESTDATA = ROOT / "testdata"


@pytest.fixture(scope="session", autouse=True)
def status_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Consumers remember status-list sequences in ``$ACX_OCI_CACHE_DIR``: a temporary one, never the real home."""
    path = tmp_path_factory.mktemp("acx-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACX_OCI_CACHE_DIR", str(path))
        yield path


@pytest.fixture(autouse=True)
def fresh_referrers_api_memo() -> None:
    """What this process learned of a host's Referrers API is keyed by address: the tests' servers take ports
    the OS hands out again, so a server that has the API was read with a gone one's "no" (and listed nothing:
    test_gateway_conformance flaked so). Each test starts with nothing learned."""
    from acx_oci.oci.registry.referrers import forget_api_support

    forget_api_support()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run tests marked slow (also enabled by ACX_SLOW=1 or CI=true)")


#: The files that take longest (CI's --durations): first, so that with two workers (scripts/test.sh) the
#: longest is not the last to start while the other worker has run out of files.
HEAVY_FIRST = ("test_real_agent_page.py", "test_exam_derive.py", "test_probe_pairs.py", "test_envimage.py",
               "test_exam_env.py", "test_model_egress.py", "test_env_reproducible.py", "test_exam_import.py",
               "test_exam_run.py", "test_exams.py", "test_exam_certify_run.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: n for n, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's own order kept
    slow, stress = slow_enabled(config), stress_enabled()
    for item in items:
        if "slow" in item.keywords and not slow:
            item.add_marker(pytest.mark.skip(reason=SLOW_SKIP_REASON))
        elif "stress" in item.keywords and not stress:
            item.add_marker(pytest.mark.skip(reason=STRESS_SKIP_REASON))


@pytest.fixture(scope="session")
def vectors() -> Path:
    """``tests/vectors`` (in the repository) or ``$ACX_VECTORS``; FAILS when missing, never skips."""
    return vectors_dir()


def _fresh_registry() -> Iterator[Registry]:
    if registry_binary() is None:
        if ci_enabled():
            raise RuntimeError("docker-registry is not installed; .ci/run must install it")
        pytest.skip("docker-registry not installed")
    reg = start_registry()
    try:
        yield reg
    finally:
        reg.stop()


@pytest.fixture(scope="session")
def registry_server() -> Iterator[Registry]:
    yield from _fresh_registry()


@pytest.fixture(scope="module")
def own_registry() -> Iterator[Registry]:
    """A Distribution registry of the module's own: faults injected in front of it, or repositories that must
    not meet other tests' pushes, stay there."""
    yield from _fresh_registry()


@pytest.fixture
def proxy(own_registry: Registry) -> Iterator[FaultProxy]:
    """A fault-injecting proxy (tests/support/faultproxy.py) in front of ``own_registry``."""
    with FaultProxy(own_registry.host) as p:
        yield p


@pytest.fixture(scope="session")
def registry(registry_server: Registry) -> str:
    """``127.0.0.1:PORT`` of a real CNCF Distribution registry with fresh storage."""
    return registry_server.host


@pytest.fixture(scope="session")
def ggcr_server() -> Iterator[Registry]:
    """go-containerregistry's registry with the Referrers API (built once, cached; see scripts/build-ggcr.sh).

    Skips when it cannot be built (no network to Debian's mirror) unless CI=true, where that fails.
    """
    try:
        binary = ggcr_binary()
    except (RuntimeError, OSError) as exc:
        if ci_enabled():
            raise
        pytest.skip(f"ggcr registry unavailable: {exc}")
    reg = start_ggcr(binary)
    try:
        yield reg
    finally:
        reg.stop()


@pytest.fixture(scope="session")
def ggcr(ggcr_server: Registry) -> str:
    """``127.0.0.1:PORT`` of go-containerregistry's registry: Referrers API, listing reports the config media
    type as artifactType, no artifactType filter, no OCI-Subject header."""
    return ggcr_server.host


REGISTRY_KINDS = ["distribution", "ggcr"]


@pytest.fixture(params=REGISTRY_KINDS)
def any_registry(request: pytest.FixtureRequest) -> str:
    """The test runs twice: on CNCF Distribution (tag-schema fallback) and on ggcr (native Referrers API)."""
    return str(request.getfixturevalue("registry" if request.param == "distribution" else "ggcr"))
