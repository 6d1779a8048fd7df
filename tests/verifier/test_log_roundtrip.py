"""The log from producer to consumer with nothing in between: ``attest --log --witness`` (the real
sigsum-witness cosigns) and then ``resolve`` with a trust file that pins the log and a witness quorum of 1.

tests/verifier/test_log_attest.py checks the producer and tests/consumer/test_log_consumer_e2e.py the consumer
(with a test helper playing the producer); this one proves that the two agree on the proof layer, the entry and
the checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from acx_oci.oci import MANIFEST_ACCEPT
from acx_oci.tlog import ed25519_verifier, raw_public, sigsum_origin
from acx_oci.tlog.checkpoint import sigsum_cosigner
from acx_oci.trust import load_identity

from ..consumer.test_log_consumer_e2e import codes, resolve, world  # noqa: F401  (the module-scoped world fixture)
from ..support.cli import cli
from ..support.logged import Pinned, write_trust
from ..support.policy_world import World, push_cartridge
from ..support.sigsum_witness import sigsum_witness


def _attest(w: World, ref: str, out: Path, state: Path, log: str, witness: str, competence: int) -> dict[str, Any]:
    res = cli("attest", ref, "--benchmark", w.bench_ref, "--key", w.dir / "ver.key", "--issuer", w.verifier_did,
              "--competence", competence, "--state", state, "--cooldown", "0", "-o", out, "--json",
              "--log", log, "--witness", witness)
    doc: dict[str, Any] = json.loads(res.output)
    assert res.exit_code == 0 and doc["issued"] is True, res.output
    return doc


def test_attest_log_then_resolve_verifies_and_a_deleted_newer_credential_stays_superseded(
        world: World, tmp_path: Path) -> None:  # noqa: F811
    ref = f"{world.registry}/roundtrip/agent:1"
    push_cartridge(world, tmp_path / "agent", ref, "io.github.acme/roundtrip-agent")
    key = load_identity(world.dir / "ver.key").private
    public = raw_public(key)
    log_ref = f"{world.registry}/roundtrip/log"
    with sigsum_witness(tmp_path, key) as wit:
        cosigner = sigsum_cosigner(raw_public(wit.key))
        witness = f"{wit.url}={cosigner.vkey()}"
        first = _attest(world, ref, tmp_path / "run0", tmp_path / "state", log_ref, witness, 33)
        second = _attest(world, ref, tmp_path / "run1", tmp_path / "state", log_ref, witness, 22)
    assert first["log"]["cosigned"] == second["log"]["cosigned"] == [wit.url]
    origin = sigsum_origin(public)
    pinned = Pinned({"origin": origin, "key": ed25519_verifier(origin, public).vkey(), "url": log_ref},
                    {"keys": [cosigner.vkey()], "quorum": 1})
    trust = write_trust(world.trust, tmp_path / "trust.json", world.verifier_did, pinned)
    code, doc = resolve(ref, trust, tmp_path / "c0")
    cap = doc["capabilities"][0]
    assert code == 0 and cap["effective"] == "VERIFIED", doc
    assert cap["attestationDigest"] == second["attestationDigest"], cap  # the newer result decides
    # a witness the trust file requires but that never cosigned: the same credentials fail closed
    stranger = sigsum_cosigner(b"\7" * 32).vkey()
    strict = write_trust(world.trust, tmp_path / "strict.json", world.verifier_did,
                         Pinned(pinned.log, {"keys": [cosigner.vkey(), stranger], "quorum": 2}))
    code, doc = resolve(ref, strict, tmp_path / "c1")
    assert code == 1 and "note_unverified" in codes(doc), doc
    # the publisher deletes the newer attestation: the log still shows it, so the older one stays superseded
    repo = ref.split("/", 1)[1].rsplit(":", 1)[0]
    url = f"http://{world.registry}/v2/{repo}/manifests/{second['attestationDigest']}"
    assert httpx.delete(url, headers={"Accept": MANIFEST_ACCEPT}).status_code == 202
    code, doc = resolve(ref, trust, tmp_path / "c3")
    cap = doc["capabilities"][0]
    older = [r for r in cap["rejected"] if r["digest"] == first["attestationDigest"]]
    # (revoked by the newer result's status list, and superseded by the log's order: either refuses it)
    assert code == 1 and older and set(older[0]["codes"]) <= {"superseded", "revoked"}, doc
    attempts = cap["attempts"]  # the deleted attempt still counts: the history comes from the log
    assert attempts["total"] == 2 and [e["source"] for e in attempts["entries"]] == ["log", "log"], attempts
