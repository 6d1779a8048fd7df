"""Logged attestations for the consumer tests, made exactly per the producer/consumer contract of issue 24.

Until ``attest --log`` lands this helper plays the producer: it appends the credential's attempt entry
to a real :class:`TransLog` (the verifier's key, the Sigsum origin), publishes the log with
``log_publish.publish`` to a real registry repository, and pushes the attestation ``attest --no-push``
wrote with one more layer, the :class:`LogProof` (media type ``application/vnd.acx.log-proof.v1+json``).
``force_publish`` is the lying verifier: it points the ``checkpoint`` tag at any history, with none of
``publish``'s refusals.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.model import issuer_id, level_result
from acx_oci.oci import MEDIA_MANIFEST, Descriptor, Store, build_manifest, open_store, parse_reference, referrer_tag
from acx_oci.services.artifacts import log_reader as logoci
from acx_oci.services.artifacts import publish_status_list
from acx_oci.services.artifacts.attestation import build_attestation
from acx_oci.services.verifier import log_publish
from acx_oci.services.verifier.log_tree import TransLog, Witness
from acx_oci.tlog import MEDIA_TYPE, LogProof
from acx_oci.trust import load_identity


def attempt_entry(credential_bytes: bytes, cartridge_id: str) -> dict[str, Any]:
    """The attempt entry that describes a credential (the contract's fields; ``recordDigest`` its exact bytes)."""
    cred = json.loads(credential_bytes)
    res = level_result(cred) or {}
    return {"kind": "attempt", "time": cred["validFrom"], "issuer": issuer_id(cred), "cartridgeId": cartridge_id,
            "romDigest": res["acx:cartridgeRomDigest"], "benchmarkDigest": res["acx:benchmarkDigest"],
            "capability": res["acx:capabilityId"], "verdict": "issued", "reasons": [],
            "mu": res["acx:ratingMu"], "sigma": res["acx:ratingSigma"], "level": res["acx:acxLevel"],
            "recordDigest": sha256_digest(credential_bytes)}


def open_log(state: Path, key_file: Path, witnesses: Sequence[Witness] = ()) -> TransLog:
    """The verifier's log in ``state`` (signed by the key in ``key_file``, Sigsum origin)."""
    return TransLog(state, load_identity(key_file).private, witnesses=witnesses)


def log_entry(log: TransLog, entry: dict[str, Any]) -> LogProof:
    """Append ``entry`` and return its proof against the (cosigned) checkpoint the append produced."""
    done = log.append([entry])
    index = done.indices[0]
    return LogProof(log.origin, index, {"schemaVersion": "acx.log-entry/1", **entry},
                    tuple(log.tree.inclusion(index)), done.checkpoint)


def push_with_proof(store: Store, out: Path, proof: LogProof | None, status: bool = True) -> Descriptor:
    """Push what ``attest --no-push`` wrote in ``out`` (status list, then the attestation) plus the proof layer."""
    if status:
        publish_status_list(store, json.loads((out / "status-list.json").read_bytes()))
    subject = store.resolve(parse_reference(str(store.reference)).target)
    envelopes = [p.read_bytes() for p in sorted((out / "games").glob("*.json"))]
    raw, _ = build_attestation(store, Descriptor(MEDIA_MANIFEST, subject.digest, subject.size),
                                  (out / "credential.json").read_bytes(), envelopes)
    if proof is not None:
        doc = json.loads(raw)
        layer = store.push_blob(proof.to_bytes(), MEDIA_TYPE)
        doc["layers"].append({"mediaType": layer.media_type, "digest": layer.digest, "size": layer.size})
        raw = json.dumps(doc, separators=(",", ":")).encode()
    return store.push_referrer(raw, subject.digest, referrer_tag(sha256_digest(raw), subject.digest))


def publish(log: TransLog, log_ref: str) -> log_publish.LogPublication:
    """``log_publish.publish`` to the registry repository ``log_ref`` (the honest verifier)."""
    with open_store(log_ref) as store:
        return log_publish.publish(log, store)


def force_publish(log: TransLog, log_ref: str, override: dict[str, bytes] | None = None) -> None:
    """Serve ``log``'s tiles and checkpoint at ``log_ref`` whatever it served before (a lying verifier);
    ``override`` serves other bytes at some tile paths (a lying log host)."""
    with open_store(log_ref) as store:
        index: dict[str, str] = {}
        for path in log.paths():
            data = (override or {}).get(path) or log.read(path)
            index[path] = store.push_blob(data, logoci.MEDIA_TILE).digest
        note = store.push_blob(log.checkpoint(), logoci.MEDIA_CHECKPOINT)
        idx = store.push_blob(canonical({"size": log.size, "tiles": index}), logoci.MEDIA_TILE_INDEX)
        raw = build_manifest(logoci.ARTIFACT_LOG, [note, idx], annotations={
            logoci.ANNOTATION_SIZE: str(log.size), logoci.ANNOTATION_ORIGIN: log.origin,
            logoci.ANNOTATION_VKEY: log.verifier.vkey()})
        store.push_manifest(raw, MEDIA_MANIFEST, tag=logoci.CHECKPOINT_TAG)


@dataclass(frozen=True)
class Pinned:
    """What a trust file pins of a log: the ``log:`` and ``witnesses:`` values of a verifier entry."""

    log: dict[str, str]
    witnesses: dict[str, Any] | None = None


def pin(log: TransLog, log_ref: str, witness_vkeys: Sequence[str] = (), quorum: int = 0) -> Pinned:
    """The trust-file values naming ``log`` at ``log_ref`` (with ``quorum`` of ``witness_vkeys``)."""
    return Pinned({"origin": log.origin, "key": log.verifier.vkey(), "url": log_ref},
                  {"keys": list(witness_vkeys), "quorum": quorum} if witness_vkeys else None)


def write_trust(base: Path, dest: Path, verifier: str, pinned: Pinned | None) -> Path:
    """A copy of the trust file ``base`` whose entry for ``verifier`` pins the log (or nothing)."""
    doc = json.loads(base.read_text())
    for party in doc["verifiers"]:
        if party["id"] == verifier and pinned is not None:
            party["log"] = pinned.log
            if pinned.witnesses is not None:
                party["witnesses"] = pinned.witnesses
    dest.write_text(json.dumps(doc))
    return dest
