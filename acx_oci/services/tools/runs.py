"""``exam report --runs`` / ``--attestations``: rollout cells from attest runs' own game records.

An attest ``-o`` folder holds one DSSE game record per game (``games/game-NNNN.dsse.json``) and ``result.json``
(which cartridge played, the record digests, the harness review). A cell is (exam, agent): the exam is the
record's task commitment (the held-out id never appears, so a report is safe to publish), the agent the
cartridge ``id@version`` (or its ROM digest). Records are read with their shape checked and, where
``result.json`` names a digest, their bytes checked against it; their signatures are the consumer's check
(``resolve``), not the report's. In a registry, a cartridge's attestation referrers are the runs (issued
ones only: a refused run publishes an attempt record, no games).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acx_oci.crypto import envelope_payload, sha256_digest
from acx_oci.errors import AcxError, IntegrityError, UsageError
from acx_oci.evaluation import record_digests
from acx_oci.files import load_json_file, read_bytes
from acx_oci.jsonio import loads_ijson
from acx_oci.model import game_predicate, level_result
from acx_oci.oci import ARTIFACT_ATTESTATION, Store
from acx_oci.services.consumer import fetch_one

GAMES_DIR = "games"
RESULT_FILE = "result.json"
MAX_RUNS = 10_000


def _is_run(path: Path) -> bool:
    return (path / GAMES_DIR).is_dir()


def run_dirs(root: Path) -> list[Path]:
    """``root`` itself when it is an attest ``-o`` folder, else its sub-folders that are (sorted by name)."""
    if _is_run(root):
        return [root]
    found = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and _is_run(p))
    if not found:
        raise UsageError(f"exam report: {root} holds no attest run (no {GAMES_DIR}/ folder in it or below it)")
    if len(found) > MAX_RUNS:
        raise UsageError(f"exam report: {root} holds {len(found)} runs, more than {MAX_RUNS}")
    return found


def _agent(result: dict[str, Any] | None, preds: list[dict[str, Any]]) -> str:
    cart = result.get("cartridge") if isinstance(result, dict) else None
    if isinstance(cart, dict) and cart.get("id") and cart.get("version"):
        return f"{cart['id']}@{cart['version']}"
    return str(preds[0]["romDigest"]) if preds else "unknown"


def read_run(run: Path) -> dict[str, Any]:
    """One run: its agent, each game's predicate (record bytes checked against ``result.json``) and its review."""
    result_path = run / RESULT_FILE
    result = load_json_file(result_path, "attest result") if result_path.is_file() else None
    named = {int(g["game"]): str(g["record"]) for g in (result or {}).get("gameRecords") or []
             if isinstance(g, dict) and isinstance(g.get("game"), int) and g.get("record")}
    preds = []
    for path in sorted((run / GAMES_DIR).glob("game-*.dsse.json")):
        if path.is_symlink():
            raise IntegrityError(f"exam report: {path} is a symbolic link")
        raw = read_bytes(path, "game record")
        pred = _predicate(raw, str(path))
        want = named.get(int(pred["game"]))
        if want is not None and sha256_digest(raw) != want:
            raise IntegrityError(f"exam report: {path} digests to {sha256_digest(raw)}, result.json names {want}")
        preds.append(pred)
    run_doc = (result or {}).get("run")
    review = run_doc.get("harnessReview") if isinstance(run_doc, dict) else None
    return {"run": str(run), "agent": _agent(result, preds), "games": preds,
            "harnessReview": review if isinstance(review, dict) else None}


MAX_ATTESTATIONS = 200


def _predicate(raw: bytes, where: str) -> dict[str, Any]:
    try:
        return game_predicate(*envelope_payload(loads_ijson(raw)))
    except (ValueError, UnicodeDecodeError, AcxError) as exc:
        raise IntegrityError(f"exam report: {where} is not a game record ({exc})") from None


def registry_runs(store: Store, target: str) -> list[dict[str, Any]]:
    """The attestations of the cartridge at ``target``, each as a run: its game records in the credential's
    evidence order (every layer digest-checked by the store), agent and harness review from the credential."""
    subject = store.resolve(target).digest
    runs = []
    for desc in store.referrers(subject, ARTIFACT_ATTESTATION).descriptors[:MAX_ATTESTATIONS]:
        got = fetch_one(store, desc, subject, with_evidence=True)
        if got.codes or got.credential is None or got.evidence is None:
            raise IntegrityError(f"exam report: attestation {desc.digest}: {'; '.join(got.messages) or 'unreadable'}")
        res = level_result(got.credential) or {}
        subject_id = str((got.credential.get("credentialSubject") or {}).get("id") or "")
        agent = subject_id.removeprefix("urn:acx:cartridge:") or str(res.get("acx:cartridgeRomDigest"))
        # one layer per record (the old layout) in layer order; the game-records layer in the credential's order
        order = got.evidence_order or tuple(d for d in record_digests(got.credential) if d and d in got.evidence)
        preds = [_predicate(got.evidence[d], f"{desc.digest} record {d}") for d in order]
        review = res.get("acx:harnessReview")
        runs.append({"run": desc.digest, "agent": agent, "games": preds,
                     "harnessReview": review if isinstance(review, dict) else None})
    return runs


def cells_input(runs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every game of ``runs`` as ``{exam, agent, outcome}`` (canaries left out), and each run's review."""
    out: list[dict[str, Any]] = []
    reviews: list[dict[str, Any]] = []
    for got in runs:
        out.extend({"exam": p["taskCommitment"], "agent": got["agent"], "outcome": p["outcome"]}
                   for p in got["games"] if not p.get("canary"))
        reviews.append({"run": got["run"], "agent": got["agent"], "games": len(got["games"]),
                        "findings": (got["harnessReview"] or {}).get("findings", [])})
    return out, reviews


def rollouts(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every game of every run under ``root`` as ``{exam, agent, outcome}``, and each run's harness review."""
    return cells_input([read_run(run) for run in run_dirs(root)])
