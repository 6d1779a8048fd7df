"""Game records: one DSSE-signed in-toto Statement v1 per game of a verification run.

Each record is content-addressed (the sha256 of the envelope's RFC 8785
bytes, which is also its layer digest) and carries exactly the predicate
fields DESIGN.md lists. It names its task only through ``taskCommitment``
(HMAC-SHA256 keyed from the benchmark's seal), so publishing records never
publishes a held-out task; whoever holds the unsealed slice can check which
task each game was. Replaying ``difficulty``/``outcome`` in ``game`` order
reproduces the rating, so anyone can audit the arithmetic of a credential.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from acx_oci.crypto import (
    PAYLOAD_TYPE_INTOTO,
    STATEMENT_TYPE,
    Identity,
    canonical,
    check_digest,
    sha256_digest,
    sign_envelope,
    statement,
    statement_bytes,
    subject_for_digest,
    verify_envelope,
)
from acx_oci.errors import UsageError, VerificationError
from acx_oci.jsonio import parse_json
from acx_oci.model import rating as ts

PREDICATE_TYPE = "https://acx.dev/attestation/game/v1"
PREDICATE_FIELDS = frozenset({"game", "taskCommitment", "difficulty", "outcome", "ratingBefore", "ratingAfter",
                              "romDigest", "benchmarkDigest", "solver"})
# Present when a real run produced the game (run conditions: docs/security.md); absent for simulated games.
# ``review``: what the harness review's rules read (evaluation/harness_review.py), and for a game it withheld
# the outcome as played and the rule's name. ``grading``: how the exam was graded (``mode``: ``in-process`` when the
# hidden tests import the submission into pytest's process; the ``tamperChecks`` that ran: sandbox/tamper.py).
OPTIONAL_FIELDS = frozenset({"runtimeDigest", "containment", "conditions", "transcriptDigest", "executor",
                             "canary", "model", "review", "grading"})
# Fields that differ between two runs of the same games (random sealing keys, timings, which worker ran):
# everything else in a record is a function of (ROM, benchmark, solver, parameters).
PER_RUN_FIELDS = ("containment", "executor", "transcriptDigest", "model", "review")
CERTIFIED_PASS = "certified-pass"
MODEL_FAIL = "model-fail"
LANE_ERROR = "lane-error"
WITHHELD = "withheld"
INVALID = "invalid"
OUTCOMES = (CERTIFIED_PASS, MODEL_FAIL, LANE_ERROR, WITHHELD, INVALID)
RATED = frozenset({CERTIFIED_PASS, MODEL_FAIL})


def task_commitment(key: bytes, task_id: str) -> str:
    """``hmac-sha256:<hex>`` of the task id; hides the id, binds the game to it."""
    return "hmac-sha256:" + hmac.new(key, task_id.encode("utf-8"), hashlib.sha256).hexdigest()


def predicate(*, game: int, task_commitment: str, difficulty: float, outcome: str, rating_before: ts.Rating,
              rating_after: ts.Rating, rom_digest: str, benchmark_digest: str,
              solver: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One game's predicate; UsageError for an unknown outcome or extra field, so a record never carries a stray key."""
    if outcome not in OUTCOMES:
        raise UsageError(f"game record: unknown outcome {outcome!r}")
    unknown = set(extra or {}) - OPTIONAL_FIELDS
    if unknown:
        raise UsageError(f"game record: unknown fields {sorted(unknown)}")
    return {
        **(extra or {}),
        "game": game,
        "taskCommitment": task_commitment,
        "difficulty": difficulty,
        "outcome": outcome,
        "ratingBefore": rating_before.to_json(),
        "ratingAfter": rating_after.to_json(),
        "romDigest": rom_digest,
        "benchmarkDigest": benchmark_digest,
        "solver": solver,
    }


@dataclass(frozen=True)
class GameRecord:
    """A signed game: the envelope, its exact bytes and their digest."""

    envelope: dict[str, Any]
    raw: bytes
    digest: str
    predicate: dict[str, Any]


def sign_game(pred: dict[str, Any], signer: Identity) -> GameRecord:
    """Statement subject = the ROM digest graded; sign the JCS bytes of our own dict."""
    st = statement([subject_for_digest("cartridge-rom", pred["romDigest"])], PREDICATE_TYPE, pred)
    envelope = sign_envelope(statement_bytes(st), PAYLOAD_TYPE_INTOTO, signer)
    raw = canonical(envelope)
    return GameRecord(envelope, raw, sha256_digest(raw), pred)


def _check_predicate(pred: Any) -> dict[str, Any]:
    if not isinstance(pred, dict) or not PREDICATE_FIELDS <= set(pred) <= PREDICATE_FIELDS | OPTIONAL_FIELDS:
        got = sorted(pred) if isinstance(pred, dict) else type(pred).__name__
        raise VerificationError(f"game record: predicate fields must be {sorted(PREDICATE_FIELDS)} plus any of "
                                f"{sorted(OPTIONAL_FIELDS)}, found {got}")
    if not isinstance(pred["game"], int) or pred["game"] < 1:
        raise VerificationError("game record: game must be a positive integer")
    if pred["outcome"] not in OUTCOMES:
        raise VerificationError(f"game record: unknown outcome {pred['outcome']!r}")
    if not isinstance(pred["difficulty"], (int, float)) or isinstance(pred["difficulty"], bool):
        raise VerificationError("game record: difficulty must be a number")
    for k in ("ratingBefore", "ratingAfter"):
        r = pred[k]
        if not isinstance(r, dict) or set(r) != {"mu", "sigma"} or not all(
                isinstance(r[x], (int, float)) and not isinstance(r[x], bool) for x in ("mu", "sigma")):
            raise VerificationError(f"game record: {k} must be {{mu, sigma}} numbers")
    check_digest(pred["romDigest"], "game record romDigest")
    check_digest(pred["benchmarkDigest"], "game record benchmarkDigest")
    return pred


def verify_game(raw: bytes, public_keys: Iterable[bytes], expected_digest: str | None = None) -> dict[str, Any]:
    """Verify a record's bytes (digest, signature, statement shape); return its predicate."""
    if expected_digest is not None and sha256_digest(raw) != expected_digest:
        raise VerificationError(f"game record: bytes digest to {sha256_digest(raw)}, expected {expected_digest}")
    envelope = parse_json(raw, "game record")
    ptype, payload, _ = verify_envelope(envelope, public_keys)
    return game_predicate(ptype, payload)


def game_predicate(ptype: str, payload: bytes) -> dict[str, Any]:
    """The predicate of a game record whose envelope signature was already verified (statement shape checked)."""
    if ptype != PAYLOAD_TYPE_INTOTO:
        raise VerificationError(f"game record: payloadType {ptype!r}, expected {PAYLOAD_TYPE_INTOTO}")
    st = parse_json(payload, "game record payload")
    if not isinstance(st, dict) or st.get("_type") != STATEMENT_TYPE or st.get("predicateType") != PREDICATE_TYPE:
        raise VerificationError(f"game record: expected an in-toto Statement v1 with predicateType {PREDICATE_TYPE}")
    pred = _check_predicate(st.get("predicate"))
    subjects = st.get("subject")
    rom_hex = pred["romDigest"].split(":", 1)[1]
    if not isinstance(subjects, list) or not any(
            isinstance(s, dict) and s.get("digest") == {"sha256": rom_hex} for s in subjects):
        raise VerificationError("game record: statement subject is not the predicate's romDigest")
    return pred


def is_rated(pred: dict[str, Any]) -> bool:
    """A game moves the rating iff its outcome is a result and its task is not an impossible canary."""
    return pred.get("outcome") in RATED and not pred.get("canary")


def rerate(predicates: Iterable[dict[str, Any]], model: ts.Model = ts.DEFAULT_MODEL) -> ts.Rating:
    """Re-rate the games in ``game`` order; every recorded rating must be the recomputed one, exactly.

    Games numbered 1..N without gaps; unrated outcomes must leave the rating unchanged.
    """
    preds = sorted(predicates, key=lambda p: int(p["game"]))
    if [p["game"] for p in preds] != list(range(1, len(preds) + 1)):
        raise VerificationError("game records: game numbers are not 1..N without gaps or duplicates")
    r = model.initial()
    for p in preds:
        before = ts.Rating(float(p["ratingBefore"]["mu"]), float(p["ratingBefore"]["sigma"]))
        if before != r:
            raise VerificationError(f"game {p['game']}: ratingBefore {before} is not the previous ratingAfter {r}")
        if is_rated(p):
            r = ts.rate(r, float(p["difficulty"]), p["outcome"] == CERTIFIED_PASS, model)
        after = ts.Rating(float(p["ratingAfter"]["mu"]), float(p["ratingAfter"]["sigma"]))
        if after != r:
            raise VerificationError(f"game {p['game']}: ratingAfter {after} is not the replayed {r}")
    return r
