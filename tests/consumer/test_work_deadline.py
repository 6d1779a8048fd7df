"""Issue 25 item 3: deadlines that fit the work.

The default deadline of a registry command is sized to the work (20 s + 0.1 s per attestation listed +
1 s per MiB received), so an honest resolve of many attestations on a machine whose cores are saturated
by another process completes; each request stays bounded by ``--timeout``, so a trickling registry still
ends the command (exit 3) within it. The registry is the real CNCF Distribution; the attestations are
built the way ``benchmarks/resolve.py`` builds them (copies of one real, replayable credential).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from acx_oci import reasons
from acx_oci.net import guard
from acx_oci.oci import open_store
from acx_oci.services.consumer import ResolveLimits, resolve_cartridge
from acx_oci.services.consumer.resolve_fetch import arrivals
from acx_oci.timeutil import WORK_PER_REFERRER, Deadline, deadline_scope
from acx_oci.trust import Trust

from ..oci.test_client_deadlines import run_cli
from ..support.faultproxy import FaultProxy
from ..support.registry import Registry
from ..support.resolve_world import World, build_resolve_world

ROOT = Path(__file__).resolve().parent.parent.parent


def test_a_sized_deadline_grows_with_the_work_and_a_fixed_one_does_not() -> None:
    sized, fixed = Deadline.sized(2.0), Deadline.after(2.0)
    at = sized.at
    sized.allow("attestations", 100, WORK_PER_REFERRER)
    sized.allow("MiB", 0.5, 1.0)
    fixed.allow("attestations", 100, WORK_PER_REFERRER)
    assert sized.at == pytest.approx(at + 10.5) and sized.allowed == pytest.approx(10.5)
    assert fixed.at < at + 0.5 and fixed.allowed == 0
    assert sized.describe() == ("the work-sized time bound (2 s + 10.5 s for the work found (100 attestations, "
                                "0.50 MiB) = 12.5 s; --deadline sets a fixed one)")
    assert fixed.describe() == "the 2 s deadline (--deadline)"


def test_an_extended_guard_fires_at_its_new_end_not_its_first() -> None:
    """A body arriving fast under a work-sized bound moves its request's cut-off; the watchdog honours it."""
    g = guard.arm(time.monotonic() + 0.2)
    g.extend(time.monotonic() + 1.0)
    time.sleep(0.5)
    assert not g.fired
    end = time.monotonic() + 5
    while not g.fired and time.monotonic() < end:
        time.sleep(0.02)
    assert g.fired


def test_fetches_wait_for_a_bound_that_moved_after_they_started() -> None:
    """The attestation fetch loop re-reads a work-sized bound: one that grew while fetching is honoured
    (``as_completed`` read the timeout once and stopped a large honest resolve at its first reading)."""
    bound = Deadline.sized(0.3)
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(time.sleep, 0.8)
        bound.allow("MiB", 1.0, 1.0)  # as if a MiB had arrived
        assert list(arrivals([slow], bound)) == [slow]  # type: ignore[list-item]
        late = pool.submit(time.sleep, 5)
        with pytest.raises(FuturesTimeout):
            list(arrivals([late], Deadline.sized(0.2)))  # type: ignore[list-item]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, own_registry: Registry) -> World:
    return build_resolve_world(tmp_path_factory.mktemp("work-deadline"), own_registry.host)


def test_a_trickling_registry_exits_3_within_the_request_bound_by_default(world: World, proxy: FaultProxy) -> None:
    """No --timeout, no --deadline: every manifest answer trickles; the 10 s request bound ends it, exit 3."""
    proxy.add("trickle", method="GET", path="/manifests/", interval=1.0)
    code, took, err = run_cli("resolve", f"{proxy.host}/{world.repo}:1.0.0", "--trust", world.trust, proxy=proxy)
    assert code == 3, err
    assert "not completed within 10 s" in err
    assert took < 10 + 1.5, f"took {took:.1f} s"


# --------------------------------------------------------------------------- many honest attestations, loaded


@contextmanager
def cpu_hogs(n: int = 2) -> Iterator[None]:
    """``n`` processes spinning (the machine's two cores saturated by someone else), killed after."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in hogs:
            p.kill()
        for p in hogs:
            p.wait()


def _populate(host: str, repo: str, n: int, tmp: Path) -> tuple[str, Trust]:
    """``n`` valid attestations of one cartridge, as benchmarks/resolve.py builds them."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.resolve import populate

    return populate(host, repo, n, tmp)


def _trust_file(trust: Trust, path: Path) -> Path:
    bench = trust.benchmarks[0]
    path.write_text(f"verifiers:\n  - id: {trust.verifiers[0].id}\n"
                    f"benchmarks:\n  - id: {bench.id}\n    version: '{bench.version}'\n"
                    f"    digest: {bench.digest}\n    heldOutSliceDigest: {bench.held_out_slice_digest}\n"
                    "solvers: [rom, reference]\n")
    return path


def test_many_attestations_under_load_complete_within_a_proportionally_smaller_bound(
        registry: str, tmp_path: Path) -> None:
    """100 attestations, a 2 s base (a tenth of the default's 20 s for a tenth of 1,000), both cores busy:
    the bound grows by 0.1 s per attestation listed, so the resolve completes; nothing is partial."""
    subject, trust = _populate(registry, "acx/many-100", 100, tmp_path)
    store = open_store(f"{registry}/acx/many-100@{subject}")
    bound = Deadline.sized(2.0)
    with cpu_hogs(), deadline_scope(bound):
        start = time.monotonic()
        res = resolve_cartridge(store, subject, trust, now=datetime.now(UTC), limits=ResolveLimits())
        took = time.monotonic() - start
    print(f"100 attestations under 2 CPU hogs: {took:.2f} s; {bound.describe()}")
    assert not res.partial, res.notes
    assert res.capabilities[0].effective == "VERIFIED"
    assert len(res.judged) == 100
    assert bound.work["attestations"] == 100 and bound.allowed >= 100 * WORK_PER_REFERRER


@pytest.mark.slow
def test_1000_attestations_with_both_cores_saturated_resolve_with_default_options(
        registry: str, tmp_path: Path) -> None:
    """The acceptance line: ``acx-oci resolve`` of 1,000 valid attestations, default options, two CPU hogs:
    not partial, exit 0 (a fixed 20 s deadline returned partial, exit 3, here)."""
    subject, trust = _populate(registry, "acx/many-1000", 1000, tmp_path)
    trust_path = _trust_file(trust, tmp_path / "trust.yaml")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with cpu_hogs():
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "acx_oci", "resolve", f"{registry}/acx/many-1000@{subject}",
                               "--trust", str(trust_path), "--json"], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=600)
        took = time.monotonic() - start
    print(f"1,000 attestations under 2 CPU hogs, default options: exit {proc.returncode} in {took:.1f} s")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, (proc.stderr, doc.get("notes"))
    assert doc["partial"] is False, doc.get("notes")
    assert doc["capabilities"][0]["effective"] == "VERIFIED"


def test_a_partial_by_deadline_says_which_and_how_much_in_json(world: World, proxy: FaultProxy) -> None:
    """``--json``: the resolution (partial, with the note naming the bound) and the envelope's message saying
    which deadline passed and how many of the attestations listed were checked; exit 3."""
    proxy.add("trickle", method="GET", path=f"/manifests/{world.attest_out['attestationDigest']}", interval=1.0)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "acx_oci", "resolve", f"{proxy.host}/{world.repo}:1.0.0",
                           "--trust", str(world.trust), "--timeout", "30", "--deadline", "2", "--json"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 3 and doc["exitCode"] == 3 and doc["code"] == reasons.DEADLINE_EXCEEDED, proc.stdout
    assert doc["message"] == ("resolve: the result above is partial: the 2 s deadline (--deadline) passed; "
                              "0 of 1 attestations listed were checked")
    assert doc["partial"] is True
    assert any(n.startswith("stopped at the time bound (2 s)") for n in doc["notes"]), doc["notes"]
    assert "checked 0 of 1 attestations" in doc["notes"]
