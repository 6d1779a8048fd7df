"""Trying until lucky must not pay (issue 23, verifier side), against real registries and the real CLI.

The attempt counts when its verdict exists (a registry that vetoes a low result gains nothing, the result
stays publishable elsewhere); a respin shares the cooldown; a NOT ISSUED run leaves a signed attempt record;
a newer credential for the same ROM revokes the older one in the same status-list update.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from acx_oci import reasons
from acx_oci.model import attempt as am
from acx_oci.model import credential_attempt, level_result, statuslist
from acx_oci.oci import ARTIFACT_ATTEMPT_RECORD, MEDIA_ATTEMPT_RECORD, StoreOptions, open_store, parse_reference
from acx_oci.services.artifacts import fetch_status_list
from acx_oci.services.verifier.ledger import DB_FILE, Ledger, Subject
from acx_oci.trust import load_identity

from ..support.cli import cli, ok
from ..support.registry import Registry
from ..support.vetoproxy import VetoProxy

CAP = "build-dag[snowflake+airflow+dbt]@data-engineering"
DID = "did:web:verifier.attempts.example"


@dataclass
class World:
    tmp: Path
    registry: str
    agent: Path
    trust: Path
    key: Path


def _world(tmp: Path, registry: str) -> World:
    ok(cli("keygen", str(tmp / "publisher")))
    ok(cli("keygen", str(tmp / "verifier"), "--did", DID))
    ok(cli("cartridge", "init", str(tmp / "agent"), "--id", "io.example/dag", "--version", "1.0.0",
           "--capability", CAP))
    ok(cli("cartridge", "push", str(tmp / "agent"), f"{registry}/acme/dag:1.0.0", "--key", str(tmp / "publisher.key"),
           "--json"))
    ok(cli("benchmark", "demo", str(tmp / "bench")))
    bench = ok(cli("benchmark", "push", str(tmp / "bench"), f"{registry}/acme/bench:2026.07.1",
                   "--seal-to", str(tmp / "verifier.did.json"), "--json"))
    publisher = json.loads((tmp / "publisher.did.json").read_text())["id"]
    trust = tmp / "trust.yaml"
    trust.write_text(f"publishers:\n  - id: {publisher}\n"
                     f"verifiers:\n  - id: {DID}\n    didDocument: verifier.did.json\n"
                     f"benchmarks:\n  - id: acx-bench-dag-de\n    version: '2026.07.1'\n"
                     f"    digest: {bench['benchmarkDigest']}\n    heldOutSliceDigest: {bench['heldOutSliceDigest']}\n"
                     "solvers: [rom, reference]\n")
    return World(tmp, registry, tmp / "agent", trust, tmp / "verifier.key")


def _attest(w: World, registry: str, tag: str, out: str, *extra: Any, competence: str = "33") -> Any:
    return cli("attest", f"{registry}/acme/dag:{tag}", "--benchmark", f"{registry}/acme/bench:2026.07.1",
               "--key", w.key, "--issuer", DID, "--competence", competence, "--state", w.tmp / "state",
               "-o", w.tmp / out, "--json", *extra)


def test_vetoing_registry_gains_nothing(own_registry: Registry, tmp_path: Path) -> None:
    w = _world(tmp_path, own_registry.host)
    with VetoProxy(own_registry.host, threshold=99) as veto:
        first = _attest(w, veto.host, "1.0.0", "run1")
        assert first.exit_code == 3, first.output  # signed, issued, the push vetoed
        doc = json.loads(first.output)
        assert doc["issued"] and doc["attestationDigest"] is None and veto.vetoed and veto.levels
        assert "counts all the same" in doc["publicationError"]
        again = _attest(w, veto.host, "1.0.0", "run2")
    assert again.exit_code == 2, again.output
    refused = json.loads(again.output)
    assert refused["status"] == "refused" and refused["reasons"][0].startswith("cooldown: ")
    assert "next attempt allowed after" in refused["reasons"][0]
    # The first run's result, published afterwards to the real registry (not the vetoing one), decides.
    pub = cli("attest", "--publish", tmp_path / "run1", "--to", f"{own_registry.host}/acme/dag", "--key", w.key,
              "--state", tmp_path / "state", "--json")
    assert pub.exit_code == 0, pub.output
    res = json.loads(cli("resolve", f"{own_registry.host}/acme/dag:1.0.0", "--trust", w.trust, "--json").output)
    levels = [c.get("acxLevel") for c in _claims(res)]
    assert doc["acxLevel"] in levels, res
    # Republishing is idempotent: the same referrer again.
    twice = cli("attest", "--publish", tmp_path / "run1", "--to", f"{own_registry.host}/acme/dag", "--key", w.key,
                "--state", tmp_path / "state", "--json")
    assert json.loads(twice.output)["attestationDigest"] == json.loads(pub.output)["attestationDigest"]


def _claims(res: Any) -> list[dict[str, Any]]:
    """Every object in resolve's JSON that carries an acxLevel."""
    found: list[dict[str, Any]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if isinstance(x.get("acxLevel"), int):
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(res)
    return found


def test_one_byte_respin_shares_the_cooldown(registry: str, tmp_path: Path) -> None:
    w = _world(tmp_path, registry)
    first = _attest(w, registry, "1.0.0", "run1")
    assert first.exit_code == 0, first.output
    skill = w.agent / "skills" / "build-dag" / "SKILL.md"
    skill.write_bytes(skill.read_bytes() + b" ")
    ok(cli("cartridge", "push", str(w.agent), f"{registry}/acme/dag:1.0.1", "--key", str(tmp_path / "publisher.key"),
           "--json"))
    respin = _attest(w, registry, "1.0.1", "run2")
    assert respin.exit_code == 2, respin.output
    reason = json.loads(respin.output)["reasons"][0]
    assert reason.startswith("cooldown: ") and "io.example/dag" in reason and "next attempt allowed after" in reason
    # (the respin is compared with 1.0.0's level, the previous version the ledger knows: a clearly better skill
    # keeps this test about the cooldown, whatever the draw)
    rom_only = _attest(w, registry, "1.0.1", "run3", "--cooldown-scope", "rom", competence="40")
    assert rom_only.exit_code == 0, rom_only.output
    assert (level_result(json.loads((tmp_path / "run3" / "credential.json").read_text())) or {})[
        "acx:baseline"]["found"] == "ledger"
    old = json.loads((tmp_path / "run1" / "credential.json").read_text())
    new = json.loads((tmp_path / "run3" / "credential.json").read_text())
    assert (level_result(old) or {})["acx:cooldownScope"] == "rom+claim"
    assert (level_result(new) or {})["acx:cooldownScope"] == "rom"
    a1, a3 = credential_attempt(old), credential_attempt(new)
    assert a1 is not None and a3 is not None
    assert (a1.sequence, a1.previous_attempts) == (1, 0)
    assert (a3.sequence, a3.previous_attempts, a3.first_attempt_at) == (2, 1, a1.first_attempt_at)  # refusals: no


def test_not_issued_run_pushes_a_signed_attempt_record(registry: str, tmp_path: Path) -> None:
    w = _world(tmp_path, registry)
    res = _attest(w, registry, "1.0.0", "weak", "--games", "30", competence="14")
    assert res.exit_code == 1, res.output
    out = json.loads(res.output)
    store = open_store(parse_reference(f"{registry}/acme/dag:1.0.0"), StoreOptions())
    cart = store.resolve(parse_reference(f"{registry}/acme/dag:1.0.0").target)
    records = [d for d in store.referrers(cart.digest).descriptors if d.artifact_type == ARTIFACT_ATTEMPT_RECORD]
    assert len(records) == 1
    manifest = store.fetch_manifest(records[0].digest)
    (layer,) = manifest.layers
    assert layer.media_type == MEDIA_ATTEMPT_RECORD
    raw = store.fetch_blob(layer.digest)
    assert raw == (tmp_path / "weak" / "attempt-record.json").read_bytes()
    doc = json.loads(raw)
    rec = am.parse_attempt_record(doc)
    me = load_identity(w.key, did=DID)
    assert all(r.ok for r in am.verify_attempt_record(doc, lambda _vm: me.public_bytes))
    assert (rec.verdict, rec.issuer, rec.acx_level, rec.cartridge_manifest_digest) == (
        "not-issued", DID, out["acxLevel"], cart.digest)
    assert rec.attempt.sequence == 1 and {code for code, _ in rec.reasons} & {reasons.SIGMA_GATE, reasons.GAMES_GATE}
    assert set(doc) <= set(json.loads((Path(am.__file__).parent.parent / "schemas" / am.SCHEMA).read_text())
                           ["properties"])  # nothing beyond the schema: no task, no transcript


def test_newer_credential_revokes_the_older_in_the_same_list_update(registry: str, tmp_path: Path) -> None:
    """Also where the older one went: the same ROM pushed to a second repository, attested there later,
    revokes the first repository's credential in that repository's copy of the list too."""
    w = _world(tmp_path, registry)
    ok(cli("cartridge", "push", str(w.agent), f"{registry}/mirror/dag:1.0.0", "--key", str(tmp_path / "publisher.key"),
           "--json"))
    one = _attest(w, registry, "1.0.0", "run1", "--cooldown", "0")
    two = cli("attest", f"{registry}/mirror/dag:1.0.0", "--benchmark", f"{registry}/acme/bench:2026.07.1",
              "--key", w.key, "--issuer", DID, "--competence", "33", "--state", tmp_path / "state",
              "-o", tmp_path / "run2", "--json", "--cooldown", "0")
    assert one.exit_code == 0 and two.exit_code == 0, (one.output, two.output)
    old = json.loads((tmp_path / "run1" / "credential.json").read_text())
    new = json.loads((tmp_path / "run2" / "credential.json").read_text())
    assert (level_result(old) or {})["acx:cartridgeRomDigest"] == (level_result(new) or {})["acx:cartridgeRomDigest"]
    entry, new_entry = old["credentialStatus"], new["credentialStatus"]
    assert entry["statusListCredential"] == new_entry["statusListCredential"]
    for repo in ("mirror/dag", "acme/dag"):
        store = open_store(parse_reference(f"{registry}/{repo}:1.0.0"), StoreOptions())
        fetched = fetch_status_list(store, entry["statusListCredential"])
        assert fetched is not None, repo
        bits = statuslist.list_bits(fetched[0])
        assert statuslist.get_bit(bits, int(entry["statusListIndex"])) is True, repo
        assert statuslist.get_bit(bits, int(new_entry["statusListIndex"])) is False, repo
    with Ledger(tmp_path / "state") as led:
        (sl,) = led.status_list_uuids()
        reasons = {e["credential_id"]: e["reason"] for e in led.entries(sl)}
    assert reasons == {old["id"]: "superseded", new["id"]: None}


# A ledger as main wrote it before the claim cooldown (its attempts table, verbatim).
_OLD_ATTEMPTS = """
CREATE TABLE attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT NOT NULL, finished_at TEXT,
    cartridge_ref TEXT NOT NULL, cartridge_manifest_digest TEXT NOT NULL, rom_digest TEXT NOT NULL,
    benchmark_id TEXT NOT NULL, benchmark_version TEXT NOT NULL, benchmark_digest TEXT NOT NULL,
    issuer TEXT NOT NULL, solver TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'issued', 'not-issued', 'refused', 'aborted')),
    starts_cooldown INTEGER NOT NULL, reasons TEXT NOT NULL DEFAULT '[]',
    mu REAL, sigma REAL, games INTEGER, acx_level INTEGER, credential_id TEXT, publication TEXT
);
CREATE INDEX attempts_cooldown ON attempts (rom_digest, benchmark_digest, started_at);
"""


def test_an_old_ledger_is_migrated_in_place(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    t0 = datetime.now(UTC) - timedelta(hours=1)
    rom, bench = "sha256:" + "1" * 64, "sha256:" + "2" * 64
    db = sqlite3.connect(state / DB_FILE)
    db.executescript(_OLD_ATTEMPTS)
    db.execute("INSERT INTO attempts (started_at, finished_at, cartridge_ref, cartridge_manifest_digest, rom_digest,"
               " benchmark_id, benchmark_version, benchmark_digest, issuer, solver, state, starts_cooldown)"
               " VALUES (?, ?, 'r/c@x', ?, ?, 'b', '1', ?, ?, '{}', 'not-issued', 1)",
               (t0.isoformat(), t0.isoformat(), "sha256:" + "3" * 64, rom, bench, DID))
    db.commit()
    db.close()
    subject = Subject("r/c@x", "sha256:" + "3" * 64, rom, "b", "1", bench, DID, {}, "io.example/dag", "cap")
    with Ledger(state) as led:
        cols = {r[1] for r in led.db.execute("PRAGMA table_info(attempts)")}
        assert {"cartridge_id", "capability_id", "cooldown_scope", "run_dir"} <= cols
        (old,) = led.attempts()
        assert (old.cartridge_id, old.state) == (None, "not-issued")
        _, refusal = led.begin_attempt(subject, now=datetime.now(UTC), cooldown=timedelta(hours=24))
        assert refusal is not None and "next attempt allowed after" in refusal.reason()  # the old row still counts
        other = Subject("r/c@y", "sha256:" + "4" * 64, "sha256:" + "5" * 64, "b", "1", bench, DID, {},
                        "io.example/dag", "cap")
        _, none = led.begin_attempt(other, now=datetime.now(UTC), cooldown=timedelta(hours=24))
        assert none is None
        respin = Subject("r/c@z", "sha256:" + "6" * 64, "sha256:" + "7" * 64, "b", "1", bench, DID, {},
                         "io.example/dag", "cap")
        assert led.cooldown_refusal(respin, datetime.now(UTC), timedelta(hours=24)) is not None
        assert led.cooldown_refusal(respin, datetime.now(UTC), timedelta(hours=24), scope="rom") is None
    with Ledger(state) as led:  # opening a migrated ledger again is a no-op
        assert len(led.attempts()) == 3
