"""``attest`` as a pipeline: frozen outcomes, one store per artifact opened once and closed once."""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.oci import Reference, Store, StoreOptions
from acx_oci.services.verifier import AttestRequest, GateOptions, Issued, Refused
from acx_oci.services.verifier import attest as attest_mod
from acx_oci.services.verifier.attest import attest
from acx_oci.solvers import ReferenceSolver
from acx_oci.trust import load_identity

from ..support.attest_world import World, build_attest_world


class CountingStore:
    """The real store, with its ``close`` calls counted (every other call goes straight through)."""

    def __init__(self, inner: Store, closed: Counter[str], name: str) -> None:
        self._inner, self._closed, self._name = inner, closed, name

    def close(self) -> None:
        self._closed[self._name] += 1
        self._inner.close()

    def __enter__(self) -> CountingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_attest_world(tmp_path_factory.mktemp("pipeline"), registry)


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[str], Counter[str]]:
    opened: Counter[str] = Counter()
    closed: Counter[str] = Counter()
    real = attest_mod.open_store

    def counting_open(ref: Reference | str, options: StoreOptions | None = None) -> Store:
        name = ref.repository if isinstance(ref, Reference) else str(ref)
        opened[name] += 1
        return CountingStore(real(ref, options), closed, name)  # type: ignore[return-value]

    monkeypatch.setattr(attest_mod, "open_store", counting_open)
    return opened, closed


def test_an_issued_attest_opens_the_cartridge_once_and_closes_it(
        world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened, closed = _counting(monkeypatch)
    ident = load_identity(f"{world.verifier}.key", did=world.verifier_did)
    req = AttestRequest(cartridge_ref=world.cart, benchmark_ref=world.bench, verifier=ident,
                        out_dir=tmp_path / "out", state_dir=tmp_path / "state", solver=ReferenceSolver(33),
                        gate=GateOptions(cooldown=timedelta(0)))
    outcome = attest(req)
    assert isinstance(outcome, Issued) and outcome.attestation_digest, outcome  # pushed through that same store
    assert opened == {"acme/dag-agent": 1, "acme/bench": 1}, opened
    assert closed == opened, closed
    assert outcome.to_json()["attestationDigest"] == outcome.attestation_digest
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.reasons = ("x",)  # type: ignore[misc]


def test_a_refused_attest_closes_what_it_opened(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened, closed = _counting(monkeypatch)
    publisher = load_identity(Path(world.tmp / "publisher.key"), did=world.publisher_did)  # grades itself
    outcome = attest(AttestRequest(cartridge_ref=world.cart, benchmark_ref=world.bench, verifier=publisher,
                                   out_dir=tmp_path / "out", state_dir=tmp_path / "state",
                                   solver=ReferenceSolver(33)))
    assert isinstance(outcome, Refused) and outcome.exit_code == 2
    assert any(r.startswith("independence:") for r in outcome.reasons), outcome.reasons
    assert opened == {"acme/dag-agent": 1, "acme/bench": 1} and closed == opened, (opened, closed)
    assert outcome.to_json()["status"] == "refused" and outcome.to_json()["games"] == 0
