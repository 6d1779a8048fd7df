"""Evidence replay: re-derive a level credential's numbers from its game records (pure).

A trusted verifier key vouches for the *records* it signed, not for arithmetic
done elsewhere: a careless or stolen key could sign ``mu = 40, sigma = 1`` over
records that replay to a principal. So a consumer re-runs the rating itself:

1. one record per ``evidence[]`` item, in that order, each the bytes its digest
   names, each a DSSE-signed in-toto game record by the credential's issuer;
2. every record about the credential's ROM and benchmark (and, for real runs,
   its solver, proven containment and runtime), numbered ``game`` 1..N in
   evidence order with no gap and no duplicate;
3. TrueSkill replayed over the rated outcomes (``certified-pass`` /
   ``model-fail``) in draw order from the model's initial rating, using the
   records' difficulties; each record's ``ratingBefore``/``ratingAfter`` must be
   the recomputed value, and unrated games must leave the rating unchanged;
4. the credential's ``acx:ratingMu``, ``acx:ratingSigma``, ``acx:gamesPlayed``
   (the rated records; all records = rated + unrated), ``acx:passRate``,
   R = mu - 3 sigma, ``acx:acxLevel`` and ``acx:careerTier`` EXACTLY equal to the
   replay's (the issuer computed them with the same floats in the same order).

5. the harness review (evaluation/harness_review.py) re-run over the records withholds exactly the games
   the records mark as withheld by it (a verifier cannot quietly drop a game it lost, nor keep one it
   should have withheld).

Any difference is ``evidence_mismatch`` naming the field and both values; a
record whose signature is not the issuer's is ``evidence_signature``.
Nothing here fetches: the caller hands in the record bytes (or None where a
record could not be had).

"Replay" in acx-oci names this act only. Re-playing a run against its recorded model answers
(``attest --model-replay``) is a *model replay* (``ModelReplayExport``, ``RecordedAnswers``); folding
TrueSkill over games is rating (:func:`acx_oci.model.rating.rate_games`, :func:`acx_oci.model.gamerecords.rerate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acx_oci import reasons
from acx_oci.crypto import envelope_payload, sha256_digest, verify_envelope
from acx_oci.errors import AcxError
from acx_oci.evaluation.checks import Check, bad, ok
from acx_oci.evaluation.evidence_check import _statement_binding
from acx_oci.jsonio import loads_ijson
from acx_oci.model import CERTIFIED_PASS, WITHHELD, LevelCredential, evidence_digest, game_predicate, is_rated
from acx_oci.model import rating as ts
from acx_oci.model.level_credential import level_credential
from acx_oci.rating import harness_review as hr

MISMATCH = reasons.EVIDENCE_MISMATCH
SIGNATURE = reasons.EVIDENCE_SIGNATURE
NAME = "replay"


def record_digests(credential: LevelCredential) -> list[str | None]:
    """The digest each ``evidence[]`` item names, in order (None where an item names none)."""
    return [evidence_digest(item) for item in credential.evidence]


def inline_record(item: Any) -> dict[str, Any] | None:
    """An evidence item's inline DSSE envelope, if it carries one."""
    env = item.get("acx:dsseEnvelope") if isinstance(item, dict) else None
    return env if isinstance(env, dict) else None


def _fmt(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _field(name: str, claimed: Any, replayed: Any) -> str:
    return f"{name}: the credential says {_fmt(claimed)}, the replayed game records give {_fmt(replayed)}"


def replay_credential(credential: LevelCredential, records: Sequence[bytes | None], issuer_keys: Sequence[bytes],
                      *, layer_digests: Sequence[str] | None = None, model: ts.Model = ts.DEFAULT_MODEL) -> Check:
    """Replay ``credential`` from ``records`` (one per evidence item, in order; None = not available).

    ``layer_digests`` are the attestation's game-record layers: each must be one the credential names.
    """
    digests = record_digests(level_credential(credential, "replay"))  # (a plain dict is refused: TypeError)
    res = credential.result
    if not digests:
        return bad(NAME, MISMATCH, "evidence: the credential references no game records, so nothing replays")
    if len(records) != len(digests):
        return bad(NAME, MISMATCH, _field("number of records", len(digests), len(records)))
    if layer_digests is not None:
        named = {d for d in digests if d}
        extra = [d for d in layer_digests if d not in named]
        if extra:
            return bad(NAME, MISMATCH, f"evidence: the attestation carries {len(extra)} game record(s) the "
                                       f"credential does not name (first {extra[0]})")
    keys = list(issuer_keys)
    if not keys:
        return bad(NAME, SIGNATURE, "evidence: the issuer has no assertion key to check game records with")
    items = credential.evidence
    rating = model.initial()
    rated = passes = 0
    preds: list[dict[str, Any]] = []
    for i, (digest, raw) in enumerate(zip(digests, records, strict=True)):
        n = i + 1
        if digest is None:
            return bad(NAME, MISMATCH, f"evidence[{i}] names no digest")
        if raw is None:
            if layer_digests is not None and digest not in layer_digests:
                return bad(NAME, reasons.EVIDENCE_MISSING, f"evidence[{i}] {digest}: the attestation does not "
                                                           "carry this game record (neither inline nor in its layers)")
            return bad(NAME, MISMATCH, f"evidence[{i}] {digest}: the game record is not available "
                                       "(neither inline nor a layer of the attestation)")
        actual = sha256_digest(raw)
        if actual != digest:
            return bad(NAME, MISMATCH, _field(f"evidence[{i}] digest", digest, actual))
        try:
            envelope = loads_ijson(raw)
            ptype, payload = envelope_payload(envelope)
        except (ValueError, UnicodeDecodeError, AcxError) as exc:
            return bad(NAME, MISMATCH, f"evidence[{i}] {digest}: not a DSSE envelope ({exc})")
        try:
            verify_envelope(envelope, keys)
        except AcxError as exc:
            return bad(NAME, SIGNATURE, f"evidence[{i}] {digest}: not signed by the issuer ({exc})")
        try:
            pred = game_predicate(ptype, payload)
        except AcxError as exc:
            return bad(NAME, MISMATCH, f"evidence[{i}] {digest}: {exc}")
        item = items[i] if i < len(items) else None
        if isinstance(item, dict) and "acx:game" in item and item["acx:game"] != n:
            return bad(NAME, MISMATCH, _field(f"evidence[{i}] acx:game", item["acx:game"], n))
        if pred["game"] != n:
            return bad(NAME, MISMATCH, f"evidence[{i}]: game number {pred['game']} where game {n} belongs "
                                       "(records must be games 1..N in order, no gaps, no duplicates)")
        for key, field_ in (("romDigest", "acx:cartridgeRomDigest"), ("benchmarkDigest", "acx:benchmarkDigest")):
            if pred[key] != res.get(field_):
                return bad(NAME, MISMATCH, f"game {n}: " + _field(f"{key} ({field_})", res.get(field_), pred[key]))
        binding = _statement_binding(digest, payload, res)
        if binding:
            return bad(NAME, MISMATCH, f"game {n}: {binding[0]}")
        before = ts.Rating(float(pred["ratingBefore"]["mu"]), float(pred["ratingBefore"]["sigma"]))
        if before != rating:
            return bad(NAME, MISMATCH, f"game {n}: " + _field("ratingBefore", before, rating))
        if pred.get("canary") and pred["outcome"] == CERTIFIED_PASS:
            return bad(NAME, MISMATCH, f"game {n}: a pass on an impossible exam; the run was cheating_detected "
                       "and must not have been issued")
        preds.append(pred)
        if is_rated(pred):
            rated += 1
            won = pred["outcome"] == CERTIFIED_PASS
            passes += won
            rating = ts.rate(rating, float(pred["difficulty"]), won, model)
        after = ts.Rating(float(pred["ratingAfter"]["mu"]), float(pred["ratingAfter"]["sigma"]))
        if after != rating:
            return bad(NAME, MISMATCH, f"game {n}: " + _field("ratingAfter", after, rating))
    review = _review_in_step(preds, res)
    if review:
        return bad(NAME, MISMATCH, review)
    replayed_r = ts.conservative(rating)
    level = ts.acx_level(replayed_r)
    mu, sigma = res.get("acx:ratingMu"), res.get("acx:ratingSigma")
    claimed_r = float(mu) - 3.0 * float(sigma) if _num(mu) and _num(sigma) else None  # type: ignore[arg-type]
    want: tuple[tuple[str, Any, Any], ...] = (
        ("acx:ratingMu", mu, rating.mu),
        ("acx:ratingSigma", sigma, rating.sigma),
        ("acx:gamesPlayed", res.get("acx:gamesPlayed"), rated),
        ("acx:passRate", res.get("acx:passRate"), passes / rated if rated else 0.0),
        ("R (mu - 3 sigma)", claimed_r, replayed_r),
        ("acx:acxLevel", res.get("acx:acxLevel"), level),
        ("acx:careerTier", res.get("acx:careerTier"), ts.career_tier(level)),
    )
    wrong = [_field(name, claimed, got) for name, claimed, got in want if not _same(claimed, got)]
    if wrong:
        return bad(NAME, MISMATCH, "; ".join(wrong))
    unrated = len(digests) - rated
    return ok(NAME, f"{len(digests)} game record(s) replayed ({rated} rated, {unrated} unrated): mu={rating.mu!r} "
                    f"sigma={rating.sigma!r} level {level} ({ts.career_tier(level)}), exactly as claimed")


def _review_in_step(preds: list[dict[str, Any]], res: dict[str, Any]) -> str | None:
    """The harness review re-run over the records must withhold exactly the games the records say it withheld
    (and the credential's ``acx:harnessReview``, when present, must list those games)."""
    found = hr.review([hr.view(p) for p in preds], len(preds))
    marked: dict[int, str] = {}
    for p in preds:
        rv = p.get("review")
        if isinstance(rv, dict) and "withheldBy" in rv:
            if p["outcome"] != WITHHELD:
                return f"game {p['game']}: the harness review withheld it, but its outcome is {p['outcome']}"
            marked[int(p["game"])] = str(rv["withheldBy"])
    if marked != dict(found.withheld):
        return _field("games withheld by the harness review", dict(sorted(marked.items())),
                      dict(sorted(found.withheld.items())))
    claimed = res.get("acx:harnessReview")
    if isinstance(claimed, dict) and claimed.get("withheld") != sorted(marked):
        return _field("acx:harnessReview.withheld", claimed.get("withheld"), sorted(marked))
    return None


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(claimed: Any, replayed: Any) -> bool:
    """Exact equality, type-aware: ``True`` is not 1, a string is not a number."""
    if isinstance(replayed, str):
        return isinstance(claimed, str) and claimed == replayed
    if isinstance(replayed, int) and not isinstance(replayed, bool):
        return isinstance(claimed, int) and not isinstance(claimed, bool) and claimed == replayed
    return _num(claimed) and float(claimed) == float(replayed)
