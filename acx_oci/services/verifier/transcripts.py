"""``acx-oci transcripts export`` and ``attest --model-replay``: a second verifier replays a run's model traffic.

A run of a model-calling ROM seals each game's transcript — the model transcript, every exchange the proxy
recorded, inside it — to the verifier that ran it. :func:`export` re-seals them to an auditor (another
verifier to whom the benchmark was also sealed) beside ``export.json``: what a replay must play (the ROM
and benchmark digests, the run's parameters, the model entry's public fields, hence its cutoff and budgets)
and what it checks (each game's task commitment and outcome, its signed record, and the digest of the
recording that record names). ``attest --model-replay`` plays the same draw with every game's proxy
answering from that game's recording and never calling upstream (:func:`model_setup`), and
:func:`compare` says which games did not reproduce their original outcome.

Why the signed record is carried too: the recording is what the auditor's games are answered from, so a
replay whose recording is not the one the original verifier signed for (its record's
``model.transcriptDigest``) must not issue, whatever its games did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from acx_oci import reasons
from acx_oci.crypto import Identity, Recipient, canonical, envelope_payload, public_from_did_key, sha256_digest, unseal
from acx_oci.crypto.seal import seal
from acx_oci.egress import ModelSetup
from acx_oci.errors import AcxError, IntegrityError, UsageError, VerificationError
from acx_oci.files import read_bytes_inside
from acx_oci.jsonio import as_array, as_object, parse_json, validate
from acx_oci.model import game_predicate, runtime_of, verify_game
from acx_oci.model import modelapi as ma
from acx_oci.rating import engine
from acx_oci.services.artifacts import LoadedCartridge
from acx_oci.services.verifier import models as models_mod

TRANSCRIPT_SEAL_INFO = b"acx-oci/game-transcript/v1"
EXPORT_SCHEMA = "acx.model-replay/1"
EXPORT_FILE = "export.json"
#: Reason codes a replay leads its NOT ISSUED / REFUSED reasons with.
REPLAY_DIVERGENT = reasons.REPLAY_DIVERGENT
RECORDING_ALTERED = reasons.RECORDING_ALTERED
REPLAY_MISMATCH = reasons.REPLAY_MISMATCH
_STATUSES = ("issued", "not-issued")


def _not_attest(out_dir: Path, why: str) -> UsageError:
    return UsageError(f"transcripts export: {out_dir} is not an attest output directory ({why})")


def _digest_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.startswith("sha256:") and len(value) == 71 else None


def _attest_result(out_dir: Path) -> dict[str, Any]:
    """``OUT_DIR/result.json`` as ``attest -o`` wrote it, checked for what an export takes from it."""
    if not out_dir.is_dir():
        raise _not_attest(out_dir, "no such directory")
    raw = read_bytes_inside(out_dir, "result.json", "attest result")
    if raw is None:
        raise _not_attest(out_dir, "no result.json")
    try:
        doc = parse_json(raw, f"{out_dir}/result.json")
    except UsageError:
        raise _not_attest(out_dir, "result.json is not JSON") from None
    doc = as_object(doc)
    cart, bench, run = as_object(doc.get("cartridge")), as_object(doc.get("benchmark")), as_object(doc.get("run"))
    params = as_object(run.get("parameters"))
    if not (isinstance(doc.get("issuer"), str) and _digest_or_none(cart.get("romDigest"))
            and _digest_or_none(cart.get("manifestDigest")) and _digest_or_none(bench.get("benchmarkDigest"))
            and isinstance(params.get("games"), int) and isinstance(params.get("minGames"), int)
            and isinstance(params.get("sigmaMax"), (int, float)) and doc.get("status") in _STATUSES):
        raise _not_attest(out_dir, "result.json lacks the issuer, cartridge, benchmark or run of a played run")
    if not as_array(doc.get("gameRecords")):
        raise _not_attest(out_dir, "result.json lists no game records")
    if not any((out_dir / name).is_file() for name in ("credential.json", "attempt-record.json")):
        # a look below the gate's floor signed no verdict and counted no attempt: replaying its one lucky
        # recording elsewhere would launder the tries nobody saw
        raise _not_attest(out_dir, "it holds neither credential.json nor attempt-record.json (a look below the "
                                   "gate's floor counted no attempt: only a counted run is exported)")
    return doc


def _open(sealed_raw: bytes, ident: Identity, what: str) -> bytes:
    """A sealed transcript's plaintext; a key it is not sealed to (or bytes that are no sealed document) is
    bad input, one line."""
    try:
        return unseal(parse_json(sealed_raw, what), ident, TRANSCRIPT_SEAL_INFO)
    except AcxError as exc:
        raise UsageError(f"{what}: the key of {ident.did} cannot unseal it ({exc})") from None


def _record_predicate(raw: bytes, what: str) -> dict[str, Any]:
    ptype, payload = envelope_payload(parse_json(raw, what))
    return game_predicate(ptype, payload)


def _recording_digest(transcript: dict[str, Any]) -> str | None:
    model = transcript.get("model")
    return sha256_digest(canonical(model)) if isinstance(model, dict) else None


def _record_problem(pred: dict[str, Any], game: dict[str, Any], recording: str | None,
                    has_transcript: bool) -> str | None:
    """Why a signed record and what the export says of its game (and its recording's digest) disagree."""
    for field in ("game", "outcome", "taskCommitment"):
        if pred.get(field) != game.get(field):
            return f"its signed record says {field} {pred.get(field)!r}, the export {game.get(field)!r}"
    signed = as_object(pred.get("model")).get("transcriptDigest")
    if has_transcript and recording != signed:
        return f"the recording digests to {recording}, its signed record names {signed}"
    return None


@dataclass(frozen=True)
class Exported:
    """What ``transcripts export`` wrote: ``export.json`` and the re-sealed transcripts beside it."""

    directory: Path
    doc: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` answer."""
        d = self.doc
        return {"export": str(self.directory / EXPORT_FILE), "directory": str(self.directory),
                "games": len(d["games"]), "transcripts": sum(1 for g in d["games"] if g["transcript"]),
                "sealedTo": d["sealedTo"], "issuer": d["issuer"], "romDigest": d["cartridge"]["romDigest"],
                "benchmarkDigest": d["benchmark"]["benchmarkDigest"], "model": d["model"], "run": d["run"]}


def export(out_dir: Path, verifier: Identity, recipients: list[Recipient], into: Path) -> Exported:
    """Re-seal the game (and model) transcripts of the attest output ``out_dir`` to ``recipients`` in ``into``.

    ``verifier`` is the run's own key (its transcripts are sealed to it). Every game's signed record is
    copied and checked against result.json and against the recording's digest; ``export.json`` is written
    last, so a directory holding it is complete.
    """
    if not recipients:
        raise UsageError("transcripts export: --to names no auditor")
    result = _attest_result(out_dir)
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise UsageError(f"transcripts export: output directory {into} exists and is not empty")
    model = result.get("model")
    files: list[tuple[str, bytes]] = []
    games: list[dict[str, Any]] = []
    for entry in as_array(result.get("gameRecords")):
        g = as_object(entry)
        n, record, rel = g.get("game"), _digest_or_none(g.get("record")), g.get("path")
        if not isinstance(n, int) or n < 1 or record is None or not isinstance(rel, str):
            raise _not_attest(out_dir, f"result.json has a malformed game record entry: {str(entry)[:120]}")
        raw = read_bytes_inside(out_dir, rel, f"game {n}'s record")
        if raw is None or sha256_digest(raw) != record:
            raise IntegrityError(f"transcripts export: game {n}'s signed record ({rel}) is missing or does not "
                                 f"hash to {record}, as result.json says")
        transcript_rel = g.get("transcript")
        plain = None
        if isinstance(transcript_rel, str):
            sealed = read_bytes_inside(out_dir, transcript_rel, f"game {n}'s transcript")
            if sealed is None:
                raise _not_attest(out_dir, f"game {n}'s transcript {transcript_rel} is missing")
            plain = _open(sealed, verifier, f"transcripts export: game {n}'s transcript ({out_dir / transcript_rel})")
            transcript = as_object(parse_json(plain, f"game {n}'s transcript"))
            if transcript.get("model") is not None and not isinstance(model, dict):
                raise _not_attest(out_dir, "result.json names no model entry (written before acx-oci recorded it); "
                                  "a replay needs its cutoff and budgets")
        else:
            transcript = {}
        recording = _recording_digest(transcript)
        record_path, transcript_path = f"games/game-{n:04d}.dsse.json", f"transcripts/game-{n:04d}.sealed.json"
        item = {"game": n, "taskCommitment": g.get("taskCommitment"), "outcome": g.get("outcome"),
                "detail": g.get("detail"), "record": record, "recordPath": record_path,
                "modelTranscriptDigest": recording, "transcript": transcript_path if plain is not None else None}
        problem = _record_problem(_record_predicate(raw, f"game {n}'s record"), item, recording, plain is not None)
        if problem:
            raise IntegrityError(f"transcripts export: game {n}: {problem}")
        files.append((record_path, raw))
        if plain is not None:
            files.append((transcript_path, canonical(seal(plain, recipients, TRANSCRIPT_SEAL_INFO))))
        games.append(item)
    if not any(g["transcript"] for g in games):
        raise _not_attest(out_dir, "no game has a transcript (a simulation's games have none): nothing to replay")
    run, cart, bench = as_object(result.get("run")), as_object(result["cartridge"]), as_object(result["benchmark"])
    params = as_object(run.get("parameters"))
    doc: dict[str, Any] = {
        "schema": EXPORT_SCHEMA, "issuer": result["issuer"], "attempt": result.get("attempt"),
        "sealedTo": [r.kid for r in recipients],
        "cartridge": {k: cart.get(k) for k in ("reference", "manifestDigest", "romDigest", "id", "version")},
        "benchmark": {k: bench.get(k) for k in ("id", "version", "manifestDigest", "benchmarkDigest")},
        "run": {"games": params["games"], "sigmaMax": params["sigmaMax"], "minGames": params["minGames"],
                "status": result["status"], "reasons": [str(r) for r in as_array(result.get("reasons"))],
                "mu": result.get("mu"), "sigma": result.get("sigma"), "acxLevel": result.get("acxLevel"),
                "careerTier": result.get("careerTier"), "rated": result.get("games")},
        "model": model if isinstance(model, dict) else None,
        "games": games,
    }
    validate(doc, "model-replay.schema.json", f"transcripts export of {out_dir}")
    for rel, data in files:
        path = into / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (into / EXPORT_FILE).write_text(json.dumps(doc, indent=2) + "\n")
    return Exported(into, doc)


def _entry(public: dict[str, Any] | None) -> ma.ModelEntry | None:
    """The export's model entry, naming no provider (:data:`acx_oci.model.modelapi.NO_UPSTREAM`)."""
    if public is None:
        return None
    cutoff = public.get("trainingCutoff")
    try:
        when = date.fromisoformat(cutoff) if isinstance(cutoff, str) else None
    except ValueError:
        raise UsageError(f"model replay: export.json's trainingCutoff {cutoff!r} is not a date") from None
    return ma.ModelEntry(id=str(public["id"]), api=str(public["api"]), base_url=ma.NO_UPSTREAM, training_cutoff=when,
                         max_tokens_per_game=public.get("maxTokensPerGame"),
                         max_requests_per_game=public.get("maxRequestsPerGame"),
                         data_use=str(public.get("dataUse") or "unknown"))


@dataclass(frozen=True)
class ModelReplayExport:
    """An export opened with the auditor's key: what the replay plays, answers from and compares with."""

    directory: Path
    doc: dict[str, Any]
    entry: ma.ModelEntry | None
    recordings: dict[str, dict[str, Any]]  # task id -> that game's model transcript
    altered: dict[int, str]  # game -> why its recording or record is not what the original verifier signed
    signatures_verified: bool = False  # the records' signatures were checked (a did:key issuer's key is known)

    @property
    def games(self) -> dict[int, dict[str, Any]]:
        """The original games by number."""
        return {int(g["game"]): g for g in self.doc["games"]}

    @property
    def params(self) -> tuple[int, float, int]:
        """The original run's ``(games, sigmaMax, minGames)``: a replay plays exactly these."""
        run = self.doc["run"]
        return int(run["games"]), float(run["sigmaMax"]), int(run["minGames"])


def load_export(directory: Path, auditor: Identity) -> ModelReplayExport:
    """Read ``DIR/export.json`` (schema-checked) and unseal every game's transcript with the auditor's key.

    A recording or record that is not the one the original verifier signed for is kept, noted in
    ``altered``: its game is still played (and says how it diverges), but the replay cannot issue. The
    records' signatures are verified when the original issuer is a did:key (its key is the DID); for
    another DID method the record digests are what an auditor compares with the original credential's
    evidence.
    """
    if not directory.is_dir():
        raise UsageError(f"attest --model-replay: {directory} is not a directory")
    raw = read_bytes_inside(directory, EXPORT_FILE, "model replay export")
    if raw is None:
        raise UsageError(f"attest --model-replay: {directory} has no {EXPORT_FILE} (made by `acx-oci transcripts "
                         "export`)")
    doc = parse_json(raw, f"{directory / EXPORT_FILE}")
    validate(doc, "model-replay.schema.json", f"model replay export ({directory / EXPORT_FILE})")
    recordings: dict[str, dict[str, Any]] = {}
    altered: dict[int, str] = {}
    try:
        keys = [public_from_did_key(doc["issuer"])] if doc["issuer"].startswith("did:key:") else None
    except (UsageError, ValueError) as exc:
        raise UsageError(f"model replay export: issuer {doc['issuer'][:100]!r} is not a did:key ({exc})") from None
    for g in doc["games"]:
        n = int(g["game"])
        digest = None
        if g["transcript"] is not None:
            sealed = read_bytes_inside(directory, g["transcript"], f"game {n}'s transcript")
            if sealed is None:
                raise UsageError(f"attest --model-replay: {directory / g['transcript']} is missing")
            plain = _open(sealed, auditor, f"attest --model-replay: game {n}'s transcript")
            transcript = as_object(parse_json(plain, f"game {n}'s transcript"))
            if isinstance(transcript.get("taskId"), str) and isinstance(transcript.get("model"), dict):
                recordings[transcript["taskId"]] = transcript["model"]
            digest = _recording_digest(transcript)
        record = read_bytes_inside(directory, g["recordPath"], f"game {n}'s record")
        if record is None or sha256_digest(record) != g["record"]:
            altered[n] = f"its signed record {g['recordPath']} is missing or does not hash to {g['record']}"
            continue
        try:
            pred = verify_game(record, keys) if keys else _record_predicate(record, f"game {n}'s record")
            problem = _record_problem(pred, g, digest, g["transcript"] is not None)
        except (UsageError, VerificationError) as exc:
            problem = f"its signed record does not verify ({exc})"
        if problem:
            altered[n] = problem
    return ModelReplayExport(directory, doc, _entry(doc["model"]), recordings, altered, keys is not None)


def select_model(models: models_mod.Models | None, declared: ma.DeclaredModel | None,
                 replay: ModelReplayExport | None) -> tuple[ma.ModelEntry | None, str | None]:
    """The model entry a run uses: the verifier's models file's, or in a replay the export's (its cutoff and
    budgets; whether the two agree is :func:`model_replay_problems`'s question)."""
    if replay is None:
        return models_mod.select(models, declared)
    return replay.entry, None


def model_replay_problems(replay: ModelReplayExport | None, cart: LoadedCartridge, benchmark_digest: str,
                    models: models_mod.Models | None, baseline_ref: str | None) -> list[str]:
    """Why this cartridge and benchmark cannot replay the export (refused before any game is played)."""
    if replay is None:
        return []
    doc, problems, declared, rom_digest = replay.doc, [], ma.declared_model(runtime_of(cart.rom)), cart.rom_digest
    if doc["cartridge"]["romDigest"] != rom_digest:
        problems.append(f"{REPLAY_MISMATCH}: the export is of ROM {doc['cartridge']['romDigest']}, this "
                        f"cartridge's ROM is {rom_digest}")
    if doc["benchmark"]["benchmarkDigest"] != benchmark_digest:
        problems.append(f"{REPLAY_MISMATCH}: the export was played on benchmark {doc['benchmark']['benchmarkDigest']}, "
                        f"this benchmark is {benchmark_digest}")
    exported = ma.DeclaredModel(replay.entry.api, replay.entry.id) if replay.entry else None
    if exported != declared:
        def name(m: ma.DeclaredModel | None) -> str:
            return f"{m.api}:{m.id}" if m else "none"
        problems.append(f"{REPLAY_MISMATCH}: the export's model is {name(exported)}, the ROM declares {name(declared)}")
    elif exported is not None and models is not None and (exported.api, exported.id) not in models:
        problems.append(f"{REPLAY_MISMATCH}: --models has no entry for the export's model {exported.api}:"
                        f"{exported.id} (with --model-replay, --models is optional but must agree)")
    if baseline_ref:
        problems.append(f"{REPLAY_MISMATCH}: a regression baseline ({baseline_ref}) plays held-in games, and the "
                        "export holds the recordings of the held-out games only")
    return problems


def model_setup(entry: ma.ModelEntry | None, replay: ModelReplayExport | None, executor: Any = None
                ) -> ModelSetup | None:
    """Model egress for a run: the verifier's key and upstream (:func:`acx_oci.services.verifier.models.setup`), or in
    a replay the recordings and no key."""
    if replay is None or entry is None:
        return models_mod.setup(entry, executor)
    if executor is not None:
        raise UsageError("attest --model-replay plays on local games only (--executor cannot carry the recordings "
                         "to the workers)")
    return ModelSetup(entry, None, replays=replay.recordings)


def credential_fields(entry: ma.ModelEntry | None, games: Iterable[engine.Game],
                      replay: ModelReplayReport | None) -> dict[str, Any]:
    """The credential's model fields (:func:`acx_oci.services.verifier.models.credential_fields`) and, for a replay,
    ``acx:modelReplay``."""
    return {**models_mod.credential_fields(entry, (g.predicate for g in games)),
            **(replay.credential_fields() if replay is not None else {})}


def _difference(g: dict[str, Any]) -> str:
    detail = f" - {g['detail']}" if g.get("detail") else ""
    return f"game {g['game']}: {g['outcome'] or 'not played'}, was {g['originalOutcome'] or 'not played'}{detail}"


@dataclass(frozen=True)
class ModelReplayReport:
    """Per game, whether a replay reproduced the original outcome, and why the replay may not issue."""

    games: tuple[dict[str, Any], ...]
    differs: tuple[int, ...]
    altered: dict[int, str]
    original: dict[str, Any]
    same_rating: bool
    signatures_verified: bool = False

    @property
    def reproduced(self) -> bool:
        """Every game's outcome, mu, sigma and the level as the original run's, from intact recordings."""
        return not self.differs and not self.altered and self.same_rating

    def reasons(self) -> list[str]:
        """The NOT ISSUED reasons (empty when everything reproduced)."""
        out = []
        if self.differs:
            shown = "; ".join(_difference(g) for g in self.games if not g["reproduced"])
            out.append(f"{REPLAY_DIVERGENT}: game(s) {', '.join(map(str, self.differs))} did not reproduce the "
                       f"original run's outcome ({shown[:2000]})")
        if self.altered:
            out.append(f"{RECORDING_ALTERED}: the recording of game(s) {', '.join(map(str, sorted(self.altered)))} is "
                       "not the one the original verifier signed for ("
                       + "; ".join(f"game {n}: {why}" for n, why in sorted(self.altered.items()))[:2000] + ")")
        return out

    def to_json(self) -> dict[str, Any]:
        """``replayDiffers`` (the games whose outcome differs) and ``replay`` (every game, and the original)."""
        return {"replayDiffers": list(self.differs),
                "replay": {"reproduced": self.reproduced, "sameRating": self.same_rating,
                           "recordingsAltered": sorted(self.altered), "original": self.original,
                           "recordSignatures": "verified" if self.signatures_verified else
                           "not checked (not a did:key issuer: compare the record digests in export.json with the "
                           "original credential's evidence)",
                           "games": list(self.games)}}

    def credential_fields(self) -> dict[str, Any]:
        """What an issued replay's credential says: its model answers came from another verifier's recording."""
        return {"acx:modelReplay": {"originalIssuer": self.original["issuer"], "games": len(self.games)}}


def judge(replay: ModelReplayExport | None, result: engine.Result, reasons: list[str]
          ) -> tuple[ModelReplayReport | None, list[str]]:
    """A replay's report (None when not replaying) and the run's NOT ISSUED reasons, the replay's first."""
    if replay is None:
        return None, reasons
    report = compare(replay, result)
    return report, [*report.reasons(), *reasons]


def compare(replay: ModelReplayExport, result: engine.Result) -> ModelReplayReport:
    """The replay's games against the export's, by game number: outcome and task commitment must match."""
    original = replay.games
    played = {g.number: g for g in result.games}
    rows, differs = [], []
    for n in sorted(set(original) | set(played)):
        o, g = original.get(n), played.get(n)
        same = o is not None and g is not None and o["outcome"] == g.outcome and \
            o["taskCommitment"] == g.predicate["taskCommitment"]
        rows.append({"game": n, "outcome": g.outcome if g else None, "originalOutcome": o["outcome"] if o else None,
                     "reproduced": same, "recordingIntact": n not in replay.altered,
                     **({"detail": g.detail} if g is not None and not same else {})})
        if not same:
            differs.append(n)
    run = replay.doc["run"]
    same_rating = (run["mu"], run["sigma"], run["acxLevel"]) == (result.rating.mu, result.rating.sigma, result.level)
    first = {"issuer": replay.doc["issuer"], "status": run["status"], "mu": run["mu"], "sigma": run["sigma"],
             "acxLevel": run["acxLevel"]}
    return ModelReplayReport(tuple(rows), tuple(differs), dict(replay.altered), first, same_rating,
                        replay.signatures_verified)
