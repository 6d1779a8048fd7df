"""Time ``resolve`` against a floor measured in the same run, and count what it fetches and verifies.

For N = 1, 100 and 1,000 valid attestations on one cartridge in a local CNCF Distribution registry (no
Referrers API, so the tag-schema fallback path):

- floor: the GETs resolve needs — the fallback index, every attestation manifest, every credential blob,
  the status list, and the deciding credential's game records (one layer in the current layout) — with
  one keep-alive requests.Session and 8 threads, no verification (the target's floor); and the same GETs
  with urllib3's pool alone, without requests (``floor_urllib3``: a lower floor, reported beside it);
- cold: ``resolve_cartridge`` with an empty consumer cache (``verdicts.json``) and replay cache: verify the
  credentials of each (issuer, ROM, benchmark, capability) newest first, stop at the first that verifies,
  replay it from its records;
- warm: the same with the consumer cache the cold run left (a second ``resolve``: no signature work but
  the status list's).

Every credential carries the same 90 real, replayable game records (one verified run, attested N times at
different instants), so the newest one decides. Five alternating rounds; prints the median (and best)
ratio to the floor, signature verifications per resolve, and the blobs replay fetched per replayed
credential, for the current layout and, once at N = 100, for an old one-layer-per-record attestation.
Run: python benchmarks/resolve.py [--sizes 1,100,1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests
import urllib3

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acx_oci.crypto.digest import sha256_digest  # noqa: E402
from acx_oci.crypto.jcs import canonical  # noqa: E402
from acx_oci.crypto.keys import generate_identity  # noqa: E402
from acx_oci.model import gamerecords, statuslist  # noqa: E402
from acx_oci.model import rating as ts  # noqa: E402
from acx_oci.model.capability import parse_capability  # noqa: E402
from acx_oci.model.credential import LevelClaim, evidence_item, issue  # noqa: E402
from acx_oci.model.level_credential import LevelCredential  # noqa: E402
from acx_oci.model.resolution import Resolution  # noqa: E402
from acx_oci.oci.model import (  # noqa: E402
    ARTIFACT_ATTESTATION,
    EMPTY_JSON,
    MANIFEST_ACCEPT,
    MEDIA_DSSE,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    MEDIA_VC,
    Descriptor,
    build_manifest,
)
from acx_oci.oci.open import open_store  # noqa: E402
from acx_oci.oci.referrers import fallback_tag, referrer_tag  # noqa: E402
from acx_oci.services.artifacts.attestation import (  # noqa: E402
    MEDIA_GAME_RECORDS,
    attestation_annotations,
    publish_status_list,
    records_document,
)
from acx_oci.services.artifacts.cartridge import init_directory, push_directory  # noqa: E402
from acx_oci.services.consumer import replay as replay_service  # noqa: E402
from acx_oci.services.consumer.resolve import resolve_cartridge  # noqa: E402
from acx_oci.services.consumer.statuscache import StatusHistory  # noqa: E402
from acx_oci.services.verifier.log_publish import publish  # noqa: E402
from acx_oci.services.verifier.log_tree import TransLog  # noqa: E402
from acx_oci.tlog.proof import MEDIA_TYPE as MEDIA_LOG_PROOF  # noqa: E402
from acx_oci.tlog.proof import LogProof  # noqa: E402
from acx_oci.trust.trustfile import AcceptedBenchmark, LogTrust, Party, Trust  # noqa: E402
from tests.support.logged import attempt_entry  # noqa: E402
from tests.support.registry import start_registry  # noqa: E402

BENCH_DIGEST = "sha256:" + "b" * 64
HELD_OUT = "sha256:" + "c" * 64
GAMES = 90


def _records(verifier: Any, rom: str) -> tuple[list[gamerecords.GameRecord], ts.Rating, int, int]:
    """90 signed games that replay (a player of skill 33 against tasks spread around it, one lane error)."""
    rating, records, rated, passes = ts.DEFAULT_MODEL.initial(), [], 0, 0
    for n in range(1, GAMES + 1):
        difficulty = round(33.0 + (n * 7919 % 200) / 10.0 - 9.95, 2)
        before = rating
        if n == 7:
            outcome = gamerecords.LANE_ERROR
        else:
            won = difficulty < 33.0
            outcome = gamerecords.CERTIFIED_PASS if won else gamerecords.MODEL_FAIL
            rated, passes = rated + 1, passes + won
            rating = ts.rate(rating, difficulty, won)
        records.append(gamerecords.sign_game(gamerecords.predicate(
            game=n, task_commitment="hmac-sha256:" + f"{n:064x}", difficulty=difficulty, outcome=outcome,
            rating_before=before, rating_after=rating, rom_digest=rom, benchmark_digest=BENCH_DIGEST,
            solver={"name": "reference", "version": 1}), verifier))
    return records, rating, rated, passes


def populate(host: str, repo: str, n: int, workdir: Path, per_record: bool = False,
             logged: bool = False) -> tuple[str, Trust]:
    """N attestations of one cartridge (one run's records shared); ``logged``: each credential also an entry of
    the verifier's log (published at ``REPO-log``), its proof a layer, and the trust file pinning that log."""
    publisher, verifier = generate_identity(), generate_identity()
    cap = parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering")
    d = workdir / repo.replace("/", "_")
    init_directory(d, "io.github.bench/agent", "1.0.0", [cap])
    store = open_store(f"{host}/{repo}:1")
    pushed = push_directory(store, d, publisher, "1")
    subject = store.resolve(pushed.manifest_digest)
    now = datetime.now(UTC)
    url = f"https://status.acx.dev/lists/{uuid.uuid4()}"
    slist = statuslist.sign_status_list(statuslist.new_status_list(list_url=url, issuer=verifier.did,
                                                                   valid_from=now), verifier,
                                        verifier.verification_method, now)
    publish_status_list(store, slist)
    used: set[int] = set()
    records, rating, rated, passes = _records(verifier, pushed.rom_digest)
    # One run's records, stored once; every attestation lists the same layer(s).
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    if per_record:  # the layout before issue 25: one DSSE layer per record
        with ThreadPoolExecutor(8) as pool:
            record_layers = list(pool.map(lambda r: store.push_blob(r.raw, MEDIA_DSSE), records))
    else:
        record_layers = [store.push_blob(records_document([r.raw for r in records]), MEDIA_GAME_RECORDS)]
    evidence = [evidence_item(records[0].raw, game=1, inline=records[0].envelope)]
    evidence += [evidence_item(r.raw, game=i) for i, r in enumerate(records[1:], 2)]
    level = ts.acx_level(ts.conservative(rating))
    subj = Descriptor(MEDIA_MANIFEST, subject.digest, subject.size)

    def one(i: int) -> None:
        idx = statuslist.allocate_index(statuslist.MIN_ENTRIES, used)
        used.add(idx)
        cred = issue(LevelClaim(issuer_did=verifier.did, subject_id=f"urn:acx:cartridge:{pushed.rom_digest}",
                     capability_id=cap.id, rating_mu=rating.mu, rating_sigma=rating.sigma, games_played=rated,
                     acx_level=level, career_tier=ts.career_tier(level), pass_rate=passes / rated,
                     rom_digest=pushed.rom_digest, manifest_digest=pushed.manifest_digest,
                     benchmark_id="acx-bench-dag-de", benchmark_version="2026.07.1", benchmark_digest=BENCH_DIGEST,
                     held_out_slice_digest=HELD_OUT, evidence=evidence, status_entry=statuslist.status_entry(url, idx),
                     valid_from=now - timedelta(seconds=i), valid_until=now + timedelta(days=365),
                     achievement_name="ACX Level — build-dag", previous_version="none"), verifier)
        creds[i] = cred

    def manifest(i: int) -> None:
        cred = creds[i]
        cred_layer = store.push_blob(canonical(cred), MEDIA_VC)
        annotations = attestation_annotations(LevelCredential.document(cred))
        extra = [store.push_blob(proofs[i], MEDIA_LOG_PROOF)] if i in proofs else []
        raw = build_manifest(ARTIFACT_ATTESTATION, [cred_layer, *record_layers, *extra], subject=subj,
                             annotations=annotations)
        built.append((raw, Descriptor(MEDIA_MANIFEST, sha256_digest(raw), len(raw), annotations,
                                      ARTIFACT_ATTESTATION)))

    built: list[tuple[bytes, Descriptor]] = []
    creds: dict[int, dict[str, Any]] = {}
    proofs: dict[int, bytes] = {}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(n)))
    pin = _log_all(creds, proofs, verifier.private, workdir / f"{repo.replace('/', '_')}-log", f"{host}/{repo}-log",
                   pushed.rom_digest) if logged else None
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(manifest, range(n)))
    # Bulk setup: push every manifest under its own tag, then write the fallback index once
    # (push_attestation would rewrite the growing index per attestation: O(n^2) setup).
    for raw, _ in built:
        store.push_manifest(raw, MEDIA_MANIFEST, referrer_tag(sha256_digest(raw), subject.digest))
    store.write_referrers_index(subject.digest, [d for _, d in built])  # type: ignore[attr-defined]
    trust = Trust(verifiers=[Party(verifier.did, log=pin)],
                  benchmarks=[AcceptedBenchmark("acx-bench-dag-de", "2026.07.1", BENCH_DIGEST, HELD_OUT)],
                  solvers=("rom", "reference"))
    return pushed.manifest_digest, trust


def _log_all(creds: dict[int, dict[str, Any]], proofs: dict[int, bytes], key: Any, state: Path, log_ref: str,
             cartridge_id: str) -> LogTrust:
    """Append one attempt entry per credential (one checkpoint), keep each proof, publish the log at ``log_ref``."""
    log = TransLog(state, key)
    order = sorted(creds, reverse=True)  # the log in time order: credential i is i seconds older than 0
    done = log.append([attempt_entry(canonical(creds[i]), cartridge_id) for i in order])
    for i, index in zip(order, done.indices, strict=True):
        entry = {"schemaVersion": "acx.log-entry/1", **attempt_entry(canonical(creds[i]), cartridge_id)}
        proofs[i] = LogProof(log.origin, index, entry, tuple(log.tree.inclusion(index)), done.checkpoint).to_bytes()
    with open_store(log_ref) as log_store:
        publish(log, log_store)
    return LogTrust(log.origin, log.verifier.vkey(), log_ref)


Get = Callable[[str, dict[str, str] | None], bytes]


def requests_get() -> Get:
    """GETs on one keep-alive requests.Session (the target's floor)."""
    session = requests.Session()
    session.mount("http://", requests.adapters.HTTPAdapter(pool_connections=16, pool_maxsize=16))
    return lambda url, headers: session.get(url, headers=headers).content


def urllib3_get() -> Get:
    """GETs on urllib3's pool alone, without requests (a lower floor, reported beside it)."""
    pool = urllib3.PoolManager(maxsize=16)
    return lambda url, headers: pool.request("GET", url, headers=headers).data


def floor(host: str, repo: str, subject: str, get: Get) -> float:
    """The GETs resolve needs, no verification, 8 threads: see the module docstring."""
    base = f"http://{host}/v2/{repo}"
    hdr = {"Accept": MANIFEST_ACCEPT}
    start = time.perf_counter()
    cart = json.loads(get(f"{base}/manifests/{subject}", hdr))
    for layer in cart["layers"]:
        if layer["mediaType"] != "application/vnd.acx.cartridge.file.v1":
            get(f"{base}/blobs/{layer['digest']}", None)
    index = json.loads(get(f"{base}/manifests/{fallback_tag(subject)}", hdr))
    status_tags = [t for t in json.loads(get(f"{base}/tags/list", None))["tags"] if t.startswith("acx-status-")]
    status = json.loads(get(f"{base}/manifests/{status_tags[0]}", hdr))
    get(f"{base}/blobs/{status['layers'][0]['digest']}", None)

    def fetch(desc: dict[str, str]) -> dict[str, Any]:
        m: dict[str, Any] = json.loads(get(f"{base}/manifests/{desc['digest']}", hdr))
        vc = next(layer for layer in m["layers"] if layer["mediaType"] == "application/vc")
        get(f"{base}/blobs/{vc['digest']}", None)
        return m

    with ThreadPoolExecutor(8) as pool:
        manifests = list(pool.map(fetch, index["manifests"]))
        newest = max(manifests, key=lambda m: m["annotations"]["org.opencontainers.image.created"])
        records = [layer["digest"] for layer in newest["layers"]
                   if layer["mediaType"] in (MEDIA_DSSE, MEDIA_GAME_RECORDS)]
        list(pool.map(lambda d: get(f"{base}/blobs/{d}", None), records))
    return time.perf_counter() - start


def resolve_once(host: str, repo: str, subject: str, trust: Trust, cache: Path,
                 log: bool = True) -> tuple[float, Resolution]:
    replay_service.clear_cache()  # a new process: only the consumer cache directory remembers
    t = time.perf_counter()
    res = resolve_cartridge(open_store(f"{host}/{repo}@{subject}"), subject, trust, now=datetime.now(UTC),
                            status_history=StatusHistory(cache), log=log)
    elapsed = time.perf_counter() - t
    cap = res.capabilities[0]
    assert cap.effective == "VERIFIED" and res.replayed and cap.best is not None, (cap, res.notes)
    return elapsed, res


def signatures(res: Resolution) -> int:
    assert res.phases is not None
    return sum(int(p["signatures"]) for p in res.phases.values())


def measure(host: str, repo: str, subject: str, trust: Trust, rounds: int, tmp: Path) -> dict[str, Any]:
    floors, raw_floors, cold, warm = [], [], [], []
    for r in range(rounds):
        floors.append(floor(host, repo, subject, requests_get()))
        raw_floors.append(floor(host, repo, subject, urllib3_get()))
        cache = tmp / f"cache-{repo.replace('/', '_')}-{r}"
        t_cold, res_cold = resolve_once(host, repo, subject, trust, cache)
        t_warm, res_warm = resolve_once(host, repo, subject, trust, cache)
        if res_cold.partial or res_warm.partial:  # a tag listing that ran away did this (fixed: Distribution ignores n)
            print(json.dumps({"skipped_round": r, "notes": [*res_cold.notes, *res_warm.notes]}), flush=True)
            continue
        cold.append(t_cold)
        warm.append(t_warm)
    fm, cm, wm = statistics.median(floors), statistics.median(cold), statistics.median(warm)
    um = statistics.median(raw_floors)
    assert res_cold.phases is not None
    return {"floor_s": round(fm, 4), "cold_s": round(cm, 4), "warm_s": round(wm, 4),
            "ratio_cold_median": round(cm / fm, 2), "ratio_warm_median": round(wm / fm, 2),
            "floor_urllib3_s": round(um, 4), "ratio_cold_vs_urllib3_median": round(cm / um, 2),
            "ratio_warm_vs_urllib3_median": round(wm / um, 2),
            "ratio_cold_best": round(min(cold) / min(floors), 2), "ratio_warm_best": round(min(warm) / min(floors), 2),
            "signatures_cold": signatures(res_cold), "signatures_warm": signatures(res_warm),
            "credentials_verified": res_cold.verifications,
            "replay_blobs_per_credential": res_cold.phases["replay"]["blobs"], "phases_cold": res_cold.phases}


def measure_log(host: str, repo: str, subject: str, trust: Trust, rounds: int, tmp: Path) -> dict[str, Any]:
    """Cold resolves of logged attestations with the log checked and with ``--no-log``, interleaved per round."""
    on, off = [], []
    for r in range(rounds):
        t_off, _ = resolve_once(host, repo, subject, trust, tmp / f"log-off-{r}", log=False)
        t_on, res = resolve_once(host, repo, subject, trust, tmp / f"log-on-{r}")
        assert not any("not_logged" in rej.codes for c in res.capabilities for rej in c.rejected), res
        on.append(t_on)
        off.append(t_off)
    return {"log_s": round(statistics.median(on), 4), "no_log_s": round(statistics.median(off), 4),
            "ratio_log_vs_no_log_median": round(statistics.median(on) / statistics.median(off), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,100,1000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--log-n", type=int, default=1000, help="attestations for the log-check row (0: skip)")
    args = parser.parse_args()
    reg = start_registry()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for n in [int(x) for x in args.sizes.split(",")]:
                repo = f"bench/resolve-{n}"
                t0 = time.perf_counter()
                subject, trust = populate(reg.host, repo, n, work)
                setup = time.perf_counter() - t0
                row = measure(reg.host, repo, subject, trust, args.rounds, work)
                print(json.dumps({"n": n, "layout": "one records layer", **row, "setup_s": round(setup, 1)}),
                      flush=True)
            if args.log_n:
                subject, trust = populate(reg.host, "bench/resolve-logged", args.log_n, work, logged=True)
                row = measure_log(reg.host, "bench/resolve-logged", subject, trust, args.rounds, work)
                print(json.dumps({"n": args.log_n, "layout": "logged (log check vs --no-log)", **row}), flush=True)
            subject, trust = populate(reg.host, "bench/resolve-old", 100, work, per_record=True)
            row = measure(reg.host, "bench/resolve-old", subject, trust, 1, work)
            print(json.dumps({"n": 100, "layout": "one layer per record (old)", **row}), flush=True)
    finally:
        reg.stop()


if __name__ == "__main__":
    main()
