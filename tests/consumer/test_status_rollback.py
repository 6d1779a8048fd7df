"""Rollback-proof status lists without a registry: the sequence in the signed list, the pure check given
``min_sequence``, the consumer's SQLite history, and the verifier's ledger raising the sequence on every re-sign.

(End to end on a real registry: ``test_resolve_e2e`` — a consumer refuses the put-back list — and
``test_gateway`` — the gateway refuses the push.)
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest

from acx_oci.crypto import dataintegrity
from acx_oci.errors import StatusListError
from acx_oci.evaluation.status_check import check_status
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.model import LevelCredential, statuslist
from acx_oci.services.consumer import StatusHistory
from acx_oci.services.consumer.statuscache import CACHE_ENV, default_cache_dir
from acx_oci.services.verifier.attest import STATUS_LIST_VALIDITY, signed_status_list
from acx_oci.services.verifier.ledger import DB_FILE, Ledger

from ..support.forgery_world import ISSUED, LIST_URL, NOW, VERIFIER_DID, World, make_world


def _list(w: World, sequence: int | None, revoked: bool = False) -> dict[str, object]:
    bits = bytearray(statuslist.empty_bits())
    if revoked:
        statuslist.set_bit(bits, w.index)
    return statuslist.sign_status_list(
        statuslist.new_status_list(list_url=LIST_URL, issuer=VERIFIER_DID, valid_from=ISSUED, bits=bytes(bits),
                                   sequence=sequence), w.verifier, w.verifier.verification_method, ISSUED)


def test_sequence_lives_in_the_signed_subject_and_passes_the_vc2_schema(vectors: Path) -> None:
    w = make_world()
    lst = _list(w, 7)
    assert lst["credentialSubject"][statuslist.SEQUENCE] == 7  # type: ignore[index]
    assert statuslist.list_sequence(lst) == 7
    schema = json.loads((vectors / "vc2/verifiable-credential-schema.json").read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(lst)) == []
    # it is signed: raising it by hand breaks the proof
    raised = json.loads(json.dumps(lst))
    raised["credentialSubject"][statuslist.SEQUENCE] = 8
    assert not dataintegrity.all_ok(dataintegrity.verify(raised, lambda vm: [w.verifier.public_bytes]))
    assert statuslist.list_sequence(w.status_list) == 0  # a list without one (older lists) counts as 0


@pytest.mark.parametrize("bad", [-1, "3", 1.5, True, None])
def test_malformed_sequence_is_status_invalid(bad: object) -> None:
    w = make_world()
    lst = statuslist.new_status_list(list_url=LIST_URL, issuer=VERIFIER_DID, valid_from=ISSUED)
    lst["credentialSubject"][statuslist.SEQUENCE] = bad
    with pytest.raises(StatusListError, match="acx:sequence"):
        statuslist.list_sequence(lst)
    signed = statuslist.sign_status_list(lst, w.verifier, w.verifier.verification_method, ISSUED)
    checks = check_status(LevelCredential.document(w.signed), VERIFIER_DID, w.ctx(status_list=signed),
                          lambda vm: [("k", w.verifier.public_bytes)])
    assert checks[0].code == "status_invalid"


def test_with_bit_raises_the_sequence() -> None:
    w = make_world()
    once = statuslist.with_bit(_list(w, 4), w.index)
    assert statuslist.list_sequence(once) == 5
    assert statuslist.list_sequence(statuslist.with_bit(w.status_list, w.index)) == 1


def test_lower_sequence_than_seen_is_status_rollback() -> None:
    w = make_world()
    old = _list(w, 3)  # the bit clear: what a rollback puts back
    result = verify_level_credential(w.signed, w.ctx(status_list=old, status_min_sequence=4))
    assert not result.verified
    assert "status_rollback" in result.codes and "revoked" not in result.codes
    assert "status_unknown" in result.codes  # revocation status is unknown: fail closed
    message = next(c.message for c in result.checks if c.code == "status_rollback")
    assert "3" in message and "4" in message
    # equal or higher is fine; no history (0) accepts anything, including lists without a sequence
    assert verify_level_credential(w.signed, w.ctx(status_list=old, status_min_sequence=3)).verified
    assert verify_level_credential(w.signed, w.ctx(status_list=old)).verified
    assert verify_level_credential(w.signed, w.ctx(status_list=w.status_list, status_min_sequence=0)).verified
    assert "status_rollback" in verify_level_credential(
        w.signed, w.ctx(status_list=w.status_list, status_min_sequence=1)).codes
    # --allow-unknown-status does not wave a rollback through: a list was found, and it is refused
    assert "status_rollback" in verify_level_credential(
        w.signed, w.ctx(status_list=old, status_min_sequence=4, allow_unknown_status=True)).codes


def test_unsound_list_is_status_invalid_not_rollback_and_rollback_outranks_stale() -> None:
    w = make_world()
    tampered = json.loads(json.dumps(_list(w, 1)))
    tampered["validFrom"] = "2026-07-01T12:00:01Z"
    codes = verify_level_credential(w.signed, w.ctx(status_list=tampered, status_min_sequence=5)).codes
    assert "status_invalid" in codes and "status_rollback" not in codes
    stale_and_old = verify_level_credential(w.signed, w.ctx(status_list=_list(w, 1), status_min_sequence=5,
                                                            now=ISSUED + timedelta(days=30))).codes
    assert "status_rollback" in stale_and_old and "status_stale" not in stale_and_old


def test_history_never_lowers_and_is_kept_per_issuer(tmp_path: Path) -> None:
    h = StatusHistory(tmp_path / "cache")
    assert h.path == tmp_path / "cache" / "status.sqlite" and h.path.exists()
    assert h.highest(LIST_URL, VERIFIER_DID) == 0
    h.remember(LIST_URL, VERIFIER_DID, 5, NOW)
    h.remember(LIST_URL, VERIFIER_DID, 3, NOW)
    assert h.highest(LIST_URL, VERIFIER_DID) == 5
    assert h.highest(LIST_URL, "did:key:z6Mkstranger") == 0  # a stranger's list cannot jam the real issuer's mark
    assert StatusHistory(tmp_path / "cache").highest(LIST_URL, VERIFIER_DID) == 5  # persisted
    h.remember(LIST_URL, VERIFIER_DID, 6)
    assert h.highest(LIST_URL, VERIFIER_DID) == 6


def test_cache_dir_env_then_xdg_then_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert default_cache_dir() == Path(os.environ[CACHE_ENV])  # conftest: never the real home
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "acx-oci"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "acx-oci"


def test_ledger_raises_the_sequence_on_every_resign_and_old_states_start_at_zero(tmp_path: Path) -> None:
    w = make_world()
    with Ledger(tmp_path / "state") as led:
        sl = led.status_list(ISSUED, "https://verifier.example/status", issuer=VERIFIER_DID)
        assert led.sequence(sl.uuid) == 0
        seqs = [statuslist.list_sequence(signed_status_list(led, sl, w.verifier, ISSUED)) for _ in range(3)]
        assert seqs == [1, 2, 3]
        first = signed_status_list(led, sl, w.verifier, ISSUED)
        assert first["validUntil"] == statuslist.rfc3339(ISSUED + STATUS_LIST_VALIDITY)
    assert timedelta(days=1) == STATUS_LIST_VALIDITY
    # a state written before sequences existed: the column is added, its lists count as 0
    (tmp_path / "old").mkdir()
    db = sqlite3.connect(tmp_path / "old" / DB_FILE)
    db.execute("CREATE TABLE status_lists (uuid TEXT PRIMARY KEY, url TEXT NOT NULL, created_at TEXT NOT NULL, "
               "size INTEGER NOT NULL, purpose TEXT NOT NULL, issuer TEXT)")
    db.execute("INSERT INTO status_lists VALUES ('u1', 'https://v.example/status/u1', ?, ?, 'revocation', ?)",
               (ISSUED.isoformat(), statuslist.MIN_ENTRIES, VERIFIER_DID))
    db.commit()
    db.close()
    with Ledger(tmp_path / "old") as led:
        assert led.sequence("u1") == 0
        assert led.next_sequence("u1") == 1
