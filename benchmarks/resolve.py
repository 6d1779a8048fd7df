"""Time ``resolve`` against a floor measured in the same run.

For N = 1, 100 and 1,000 valid attestations on one cartridge in a local CNCF
Distribution registry (no Referrers API, so the tag-schema fallback path):

- floor: the same GETs resolve needs — the fallback index, every attestation
  manifest, every credential blob, the status list — with one keep-alive
  requests.Session and 8 threads, no verification;
- acx-oci: ``resolve_cartridge`` (load + verify the cartridge, list referrers,
  fetch, verify every credential and the status list).

Five alternating rounds; prints acx-oci / floor for the best and the median
round at each N. Each round is a fresh store (no cache carried over). Run:
python benchmarks/resolve.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acx_oci.crypto.digest import sha256_digest  # noqa: E402
from acx_oci.crypto.jcs import canonical  # noqa: E402
from acx_oci.crypto.keys import generate_identity  # noqa: E402
from acx_oci.model import gamerecords, statuslist  # noqa: E402
from acx_oci.model import rating as ts  # noqa: E402
from acx_oci.model.capability import parse_capability  # noqa: E402
from acx_oci.model.credential import evidence_item, issue  # noqa: E402
from acx_oci.oci.model import MANIFEST_ACCEPT, MEDIA_MANIFEST, Descriptor  # noqa: E402
from acx_oci.oci.open import open_store  # noqa: E402
from acx_oci.oci.referrers import fallback_tag, referrer_tag  # noqa: E402
from acx_oci.services.attestation import build_attestation, publish_status_list  # noqa: E402
from acx_oci.services.cartridge import init_directory, push_directory  # noqa: E402
from acx_oci.services.resolve import resolve_cartridge  # noqa: E402
from acx_oci.trust.trustfile import AcceptedBenchmark, Party, Trust  # noqa: E402
from tests.support.registry import start_registry  # noqa: E402

BENCH_DIGEST = "sha256:" + "b" * 64
HELD_OUT = "sha256:" + "c" * 64


def populate(host: str, repo: str, n: int, workdir: Path) -> tuple[str, Trust]:
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

    def one(i: int) -> None:
        before, after = ts.Rating(25.0, 25 / 3), ts.Rating(33.0, 1.2)
        game = gamerecords.sign_game(gamerecords.predicate(
            game=1, task_commitment="hmac-sha256:" + "0" * 64, difficulty=30.0, outcome="certified-pass",
            rating_before=before, rating_after=after, rom_digest=pushed.rom_digest, benchmark_digest=BENCH_DIGEST,
            solver={"kind": "reference"}), verifier)
        idx = statuslist.allocate_index(statuslist.MIN_ENTRIES, used)
        used.add(idx)
        cred = issue(signer=verifier, issuer_did=verifier.did, subject_id=f"urn:acx:cartridge:{pushed.rom_digest}",
                     capability_id=cap.id, rating_mu=33.0 + i * 1e-6, rating_sigma=1.2, games_played=90, acx_level=29,
                     career_tier="principal", pass_rate=0.55, rom_digest=pushed.rom_digest,
                     manifest_digest=pushed.manifest_digest, benchmark_id="acx-bench-dag-de",
                     benchmark_version="2026.07.1", benchmark_digest=BENCH_DIGEST, held_out_slice_digest=HELD_OUT,
                     evidence=[evidence_item(game.raw, game=1)], status_entry=statuslist.status_entry(url, idx),
                     valid_from=now - timedelta(seconds=i), valid_until=now + timedelta(days=365),
                     achievement_name="ACX Level — build-dag")
        built.append(build_attestation(store, subject, canonical(cred), [game.raw]))

    built: list[tuple[bytes, Descriptor]] = []
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(n)))
    # Bulk setup: push every manifest under its own tag, then write the fallback index once
    # (push_attestation would rewrite the growing index per attestation: O(n^2) setup).
    for raw, _ in built:
        store.push_manifest(raw, MEDIA_MANIFEST, referrer_tag(sha256_digest(raw), subject.digest))
    store.write_referrers_index(subject.digest, [d for _, d in built])  # type: ignore[attr-defined]
    trust = Trust(verifiers=[Party(verifier.did)],
                  benchmarks=[AcceptedBenchmark("acx-bench-dag-de", "2026.07.1", BENCH_DIGEST, HELD_OUT)],
                  solvers=("rom", "reference"))
    return pushed.manifest_digest, trust


def floor(host: str, repo: str, subject: str) -> float:
    base = f"http://{host}/v2/{repo}"
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=16, pool_maxsize=16)
    session.mount("http://", adapter)
    hdr = {"Accept": MANIFEST_ACCEPT}
    start = time.perf_counter()
    cart = session.get(f"{base}/manifests/{subject}", headers=hdr).json()
    for layer in cart["layers"]:
        if layer["mediaType"] != "application/vnd.acx.cartridge.file.v1":
            _ = session.get(f"{base}/blobs/{layer['digest']}").content
    index = session.get(f"{base}/manifests/{fallback_tag(subject)}", headers=hdr).json()
    _ = session.get(f"{base}/tags/list").content
    status_tags = [t for t in session.get(f"{base}/tags/list").json()["tags"] if t.startswith("acx-status-")]
    status = session.get(f"{base}/manifests/{status_tags[0]}", headers=hdr).json()
    _ = session.get(f"{base}/blobs/{status['layers'][0]['digest']}").content

    def fetch(desc: dict[str, str]) -> None:
        m = session.get(f"{base}/manifests/{desc['digest']}", headers=hdr).json()
        vc = next(layer for layer in m["layers"] if layer["mediaType"] == "application/vc")
        _ = session.get(f"{base}/blobs/{vc['digest']}").content

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(fetch, index["manifests"]))
    return time.perf_counter() - start


def main() -> None:
    reg = start_registry()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in (1, 100, 1000):
                repo = f"bench/resolve-{n}"
                t0 = time.perf_counter()
                subject, trust = populate(reg.host, repo, n, Path(tmp))
                setup = time.perf_counter() - t0
                floors, ours = [], []
                for _ in range(5):
                    floors.append(floor(reg.host, repo, subject))
                    t = time.perf_counter()
                    res = resolve_cartridge(open_store(f"{reg.host}/{repo}@{subject}"), subject, trust,
                                            now=datetime.now(UTC))
                    ours.append(time.perf_counter() - t)
                    cap = res.capabilities[0]
                    assert cap.effective == "VERIFIED" and not res.partial, (cap, res.notes)
                    assert len(cap.rejected) == 0, cap.rejected[:3]
                f, o = min(floors), min(ours)
                fm, om = statistics.median(floors), statistics.median(ours)
                print(json.dumps({"n": n, "floor_s": round(f, 4), "resolve_s": round(o, 4),
                                  "ratio_best": round(o / f, 2), "ratio_median": round(om / fm, 2),
                                  "partial": res.partial, "setup_s": round(setup, 1)}))
    finally:
        reg.stop()


if __name__ == "__main__":
    main()
