"""The verifier ledger: attempts, cooldown, status list allocation and publications."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.errors import UsageError
from acx_oci.services.verifier.ledger import Ledger, Subject

T0 = datetime(2026, 7, 10, 12, 0, tzinfo=UTC)
ROM = "sha256:" + "a" * 64
BENCH = "sha256:" + "b" * 64


def _subject(rom: str = ROM, cartridge_id: str | None = None) -> Subject:
    return Subject(cartridge_ref="oci:x@sha256:" + "c" * 64, cartridge_manifest_digest="sha256:" + "c" * 64,
                   rom_digest=rom, benchmark_id="b", benchmark_version="1", benchmark_digest=BENCH, issuer="did:web:v",
                   solver={"name": "reference", "competence": 14}, cartridge_id=cartridge_id,
                   capability_id="build-dag" if cartridge_id else None)


def _attempt(ledger: Ledger, now: datetime, cooldown: timedelta, rom: str = ROM, cartridge_id: str | None = None,
             scope: str = "rom+claim") -> tuple[int, Any]:
    return ledger.begin_attempt(_subject(rom, cartridge_id), now=now, cooldown=cooldown, scope=scope)


def test_every_attempt_starts_a_cooldown_issued_or_not(tmp_path: Path) -> None:
    day = timedelta(hours=24)
    with Ledger(tmp_path / "state") as led:
        first, refusal = _attempt(led, T0, day)
        assert refusal is None
        led.finish_attempt(first, now=T0 + timedelta(minutes=1), issued=False, reasons=["gate: sigma"],
                           mu=14.0, sigma=2.2, games=50)
        second, refusal = _attempt(led, T0 + timedelta(hours=23), day)
        assert refusal is not None and "cooldown" in refusal.reason() and "not-issued" in refusal.reason()
        # another ROM is unaffected; cooldown 0 disables
        assert _attempt(led, T0 + timedelta(hours=1), day, rom="sha256:" + "d" * 64)[1] is None
        assert led.cooldown_refusal(_subject(), T0 + timedelta(hours=1), timedelta(0)) is None
        # the refusal does not extend the cooldown
        third, refusal = _attempt(led, T0 + timedelta(hours=24, seconds=1), day)
        assert refusal is None
        states = [(a.id, a.state, a.starts_cooldown) for a in led.attempts(ROM)]
        assert states == [(first, "not-issued", True), (second, "refused", False), (third, "running", True)]
        assert led.attempts(ROM)[0].reasons == ["gate: sigma"]
    # persisted on disk
    with Ledger(tmp_path / "state") as led:
        assert len(led.attempts()) == 4


def test_status_list_random_indices_and_publications(tmp_path: Path) -> None:
    with Ledger(tmp_path) as led:
        sl = led.status_list(T0, "https://verifier.example/status/")
        assert sl.url == "https://verifier.example/status/" + sl.uuid
        again = led.status_list(T0 + timedelta(days=1), "https://elsewhere.example/status")
        assert (again.uuid, again.url) == (sl.uuid, sl.url) and len(sl.uuid) == 36
        seq = iter([7, 7, 7, 3])
        a = led.allocate(sl.uuid, "urn:uuid:1", T0, randbelow=lambda n: next(seq))
        b = led.allocate(sl.uuid, "urn:uuid:2", T0, randbelow=lambda n: next(seq))
        assert (a, b) == (7, 3)
        idx = {led.allocate(sl.uuid, f"urn:uuid:x{i}", T0) for i in range(20)}
        assert len(idx) == 20 and max(idx) > 1000  # random over 131072, not sequential
        assert led.revoke("urn:uuid:2", T0, "contamination") == (sl.uuid, 3)
        assert led.revoked_indices(sl.uuid) == [3]
        with pytest.raises(UsageError):
            led.revoke("urn:uuid:nope", T0, "x")
        led.record_publication(sl.uuid, "127.0.0.1:5000/acme/agent:acx-status-" + sl.uuid, "sha256:" + "e" * 64, T0)
        led.record_publication(sl.uuid, "file:///tmp/status-list.json", None, T0)
        led.record_publication(sl.uuid, "file:///tmp/status-list.json", "sha256:" + "f" * 64, T0)
        pubs = led.publications(sl.uuid)
        assert [p["location"] for p in pubs] == ["127.0.0.1:5000/acme/agent:acx-status-" + sl.uuid,
                                                 "file:///tmp/status-list.json"]
        assert pubs[1]["digest"] == "sha256:" + "f" * 64
