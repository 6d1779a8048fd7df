"""One unsigned referrer whose credential the fetcher reads only for its claims must not crash or steer
``resolve`` (the fetcher's quick parse, and the attempt history it feeds). Found by an attack review: a lone
surrogate in a status URL raised UnicodeEncodeError from SQLite, a claim nested 900 deep RecursionError in the
grouping, and unverified superseded copies counted as issued attempts (inflating a history, or claiming the
sequence numbers of real attempt records so they were dropped). Real OCI layout, real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import generate_identity, sha256_digest
from acx_oci.evaluation import Material, capability_verdicts, with_attempts
from acx_oci.evaluation.attempts import attempts_in_window
from acx_oci.evaluation.judge import judge_credentials
from acx_oci.jsonio import loads_claims, parse_json
from acx_oci.model import VERIFIED, AttemptCount, LevelCredential
from acx_oci.oci import Descriptor, build_manifest, open_store, referrer_tag
from acx_oci.services.artifacts import attestation as att

from ..support.cli import cli
from ..support.resolve_world import build_resolve_world
from ..verifier.test_attempt_history import FIRST, record
from .test_judge_supersede import NOW, Issuers, lax_attestation


def _lone_surrogate_status(doc: dict[str, Any]) -> list[bytes]:
    doc["credentialStatus"]["statusListCredential"] = "https://status.example/LONE"
    return [json.dumps(doc).encode().replace(b"LONE", b"\\udc00")]


def _lone_surrogate_issuer(doc: dict[str, Any]) -> list[bytes]:
    del doc["credentialStatus"]
    doc["issuer"] = {"id": "did:web:LONE.example", "type": ["Profile"]}
    return [json.dumps(doc).encode().replace(b"LONE", b"\\udc00")]


def _deep_rom(doc: dict[str, Any]) -> list[bytes]:
    """Depths 900-996: how deep a worker thread's json.loads gets depends on the stack; one is enough."""
    doc["credentialSubject"]["result"][0]["acx:cartridgeRomDigest"] = "@@DEEP@@"
    text = json.dumps(doc).encode()
    return [text.replace(b'"@@DEEP@@"', b"[" * d + b"]" * d) for d in range(900, 1000, 12)]


def _container_flood(doc: dict[str, Any]) -> list[bytes]:
    """20,000 empty arrays (60 KB): 2 MiB of them parse to 70 MB of Python lists, kept until judged."""
    doc["credentialSubject"]["result"][0]["acx:padding"] = [[]] * 20_000
    return [json.dumps(doc, separators=(",", ":")).encode()]


def _push_raw(w: Any, raw: bytes, annotations_from: dict[str, Any]) -> None:
    store = open_store(f"{w.registry}/{w.repo}")
    subject = store.resolve(w.cart["manifestDigest"])
    store.push_blob(att.EMPTY_JSON, att.MEDIA_EMPTY)
    layer = store.push_blob(raw, att.MEDIA_VC, {})
    subj = Descriptor(subject.media_type or att.MEDIA_MANIFEST, subject.digest, subject.size)
    manifest = build_manifest(att.ARTIFACT_ATTESTATION, [layer], subject=subj,
                              annotations=att.attestation_annotations(LevelCredential.document(annotations_from)))
    store.push_referrer(manifest, subject.digest, referrer_tag(sha256_digest(manifest), subject.digest))


@pytest.mark.parametrize("forge", [_lone_surrogate_status, _lone_surrogate_issuer, _deep_rom, _container_flood])
def test_one_hostile_referrer_leaves_the_answer_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          forge: Callable[[dict[str, Any]], list[bytes]]) -> None:
    monkeypatch.setenv("ACX_OCI_CACHE_DIR", str(tmp_path / "cache"))
    w = build_resolve_world(tmp_path, f"oci:{tmp_path / 'reg'}")
    ref = f"{w.registry}/{w.repo}:1.0.0"
    base = cli("resolve", ref, "--trust", w.trust, "--json")
    assert base.exit_code == 0, base.output
    honest = json.loads((w.tmp / "att" / "credential.json").read_text())
    original = json.loads((w.tmp / "att" / "credential.json").read_text())
    honest["validFrom"] = "2001-01-01T00:00:00Z"  # older: it could only be superseded
    for raw in forge(honest):
        _push_raw(w, raw, original)
    res = cli("resolve", ref, "--trust", w.trust, "--json")
    assert res.exit_code == 0, res.output
    cap = json.loads(res.output)["capabilities"][0]
    assert cap["effective"] == "VERIFIED", cap
    human = cli("resolve", ref, "--trust", w.trust)
    assert human.exit_code == 0 and "Traceback" not in human.output, human.output
    if forge is _container_flood:  # refused before any parse, with its reason
        assert "schema_invalid: more than 16384 objects and arrays" in res.output, res.output


@pytest.mark.parametrize("raw", [b'{"a":"\\udc00"}', b'{"a":"\xed\xb0\x80"}', b"[" * 65 + b"]" * 65,
                                 '{"a":1}'.encode("utf-16"), b"\xef\xbb\xbf{}", b"{", b""])
def test_the_quick_parse_leaves_to_the_strict_one_what_it_refuses(raw: bytes) -> None:
    """Lone surrogates (escaped or raw), nesting past the bound, UTF-16, a BOM, malformed input: None (the
    fetcher then parses strictly and reports the strict parser's reason)."""
    assert loads_claims(raw) is None


def test_the_quick_parse_of_a_credential_is_the_strict_one() -> None:
    v = generate_identity()
    raw = Issuers(v).credential(v, 30, age_hours=1)
    assert loads_claims(raw) == parse_json(raw, "credential")


def _forge(real: bytes, **result_changes: object) -> bytes:
    doc = json.loads(real)
    doc["validFrom"] = "2000-01-01T00:00:00Z"  # older than the real one: the walk supersedes it unverified
    for k, v in result_changes.items():
        doc["credentialSubject"]["result"][0][k] = v
    doc["proof"][0]["proofValue"] = "z" + "1" * 80  # not the verifier's signature
    return json.dumps(doc).encode()


def _window_count(w: Issuers, creds: tuple[bytes, ...], records: tuple[Any, ...], window: float) -> int:
    m = Material(tuple(lax_attestation(r) for r in creds), w.lists())
    j = judge_credentials(m, w.facts, w.trust, NOW)
    (cap,) = with_attempts(capability_verdicts(w.facts, j.accepted, j.rejected), m, records, w.facts, w.trust, NOW)
    assert cap.effective == VERIFIED and j.verifications == 1  # the forged copies were never verified
    return attempts_in_window(cap.attempts, NOW, window)


def test_an_unverified_superseded_copy_does_not_inflate_the_attempts() -> None:
    v = generate_identity()
    w = Issuers(v)
    first = NOW - timedelta(days=1)
    real = w.credential(v, 30, age_hours=1, attempt=AttemptCount(1, 0, first))
    forged = _forge(real, **{"acx:attempt": {"sequence": 1_000_000, "previousAttempts": 999_999,
                                              "firstAttemptAt": first.strftime("%Y-%m-%dT%H:%M:%SZ")}})
    assert _window_count(w, (real, forged), (), 30 * 86400) == 1


def test_unverified_superseded_copies_cannot_erase_real_attempt_records() -> None:
    """The publisher (whom maxAttempts bounds) pushes unsigned copies claiming the sequence numbers of its real
    NOT ISSUED attempt records, dated 2000: the records must still count (3 attempts in the 2-day window)."""
    v = generate_identity()
    w = Issuers(v)
    real = w.credential(v, 30, age_hours=1, attempt=AttemptCount(3, 2, FIRST))
    records = (record(v, 1, NOW - timedelta(days=1)), record(v, 2, NOW - timedelta(hours=12)))
    assert _window_count(w, (real,), records, 2 * 86400) == 3
    forged = tuple(_forge(real, **{"acx:attempt": {"sequence": s, "previousAttempts": s - 1,
                                                   "firstAttemptAt": FIRST.strftime("%Y-%m-%dT%H:%M:%SZ")}})
                   for s in (1, 2))
    assert _window_count(w, (real, *forged), records, 2 * 86400) == 3
