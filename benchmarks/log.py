"""The transparency log at 10,000 entries: build, publish to a real registry, verify fully, prove inclusion.

Builds a log of N entries (default 10,000, appended in batches of 100, so 100 checkpoints and
100 publications), publishes each batch to a local CNCF Distribution registry (started here,
or ``--registry HOST:PORT``), runs ``acx-oci log verify`` on it (every tile and bundle fetched
and checked), then proves inclusion of sampled entries from the registry with a fresh
:class:`LogReader` each, and prints the tile fetches of each proof against the bound
⌈log₂ n / 8⌉ + 2 and the time per proof (the three head requests — tag, note, tile index —
included and also shown apart). Run: python benchmarks/log.py [--entries N] [--registry HOST:PORT]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

from acx_oci.crypto.jcs import canonical  # noqa: E402
from acx_oci.oci.open import open_store  # noqa: E402
from acx_oci.services.artifacts.log_reader import LogReader  # noqa: E402
from acx_oci.services.verifier.log_publish import publish  # noqa: E402
from acx_oci.services.verifier.log_tree import TransLog  # noqa: E402
from tests.support.cli import cli  # noqa: E402
from tests.support.registry import start_registry  # noqa: E402

DIGEST = "sha256:" + "ab" * 32
BATCH = 100


def entry(i: int) -> dict[str, Any]:
    """An attempt entry of typical size (about 400 bytes of canonical JSON)."""
    return {"kind": "attempt", "time": "2026-12-02T01:00:00Z", "cartridgeId": f"io.github.acme/agent-{i % 97}",
            "romDigest": DIGEST, "benchmarkDigest": DIGEST, "capability": "build-dag@data-engineering",
            "verdict": "issued", "reasons": [], "mu": 31.25, "sigma": 1.1, "level": 28,
            "recordDigest": f"sha256:{i:064x}"}


def build(state: Path, repo: str, n: int) -> tuple[TransLog, float, float]:
    """Append ``n`` entries in batches, publishing after each; (log, append seconds, publish seconds)."""
    log = TransLog(state, Ed25519PrivateKey.generate())
    t_append = t_publish = 0.0
    with open_store(repo) as store:
        for lo in range(0, n, BATCH):
            t0 = time.perf_counter()
            log.append([entry(i) for i in range(lo, min(n, lo + BATCH))])
            t1 = time.perf_counter()
            publish(log, store)
            t_publish += time.perf_counter() - t1
            t_append += t1 - t0
    return log, t_append, t_publish


def prove_samples(log: TransLog, repo: str, n: int) -> list[tuple[int, int, float, float]]:
    """(index, tile fetches, seconds with the head, seconds of the proof alone) for sampled entries."""
    out = []
    with open_store(repo) as store:
        for i in sorted({0, 1, 255, 256, n // 2, n - 257, n - 2, n - 1} | set(range(3, n, max(1, n // 25)))):
            data = canonical({"schemaVersion": "acx.log-entry/1", **entry(i)})
            t0 = time.perf_counter()
            reader = LogReader(store)
            cp = reader.verify(log.verifier).checkpoint
            t1 = time.perf_counter()
            _, fetches = reader.prove(i, data, cp)
            t2 = time.perf_counter()
            out.append((i, fetches, t2 - t0, t2 - t1))
    return out


def main() -> None:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--registry", help="HOST:PORT of a registry to use (default: start a local one)")
    args = ap.parse_args()
    reg = None if args.registry else start_registry()
    host = args.registry or (reg.host if reg else "")
    try:
        repo = f"{host}/bench/log-{uuid.uuid4().hex[:8]}"
        with tempfile.TemporaryDirectory() as tmp:
            n = args.entries
            log, t_append, t_publish = build(Path(tmp), repo, n)
            print(f"log of {n} entries: append {t_append:.2f} s, publish {t_publish:.2f} s "
                  f"({n // BATCH} checkpoints, {len(log.paths())} tiles and bundles)")
            t0 = time.perf_counter()
            res = cli("log", "verify", repo, "--key", log.verifier.vkey(), "--json")
            t_verify = time.perf_counter() - t0
            assert res.exit_code == 0, res.output
            print(f"log verify (every tile and bundle fetched and checked): {t_verify:.2f} s, exit {res.exit_code}")
            with open_store(repo) as store:
                index = store.fetch_manifest("checkpoint").layers[1]
            print(f"tile index: {index.size} bytes for {len(log.paths())} tiles and bundles "
                  f"({index.size / len(log.paths()):.0f} bytes each; one GET per reader)")
            samples = prove_samples(log, repo, n)
            bound = math.ceil(math.log2(n) / 8) + 2
            worst = max(f for _, f, _, _ in samples)
            print(f"inclusion proofs of {len(samples)} entries: tile fetches max {worst}, bound "
                  f"ceil(log2 {n} / 8) + 2 = {bound}: {'within' if worst <= bound else 'OVER'} the bound")
            for i, f, whole, proof in samples[:6] + samples[-3:]:
                print(f"  entry {i:>6}: {f} tile fetches, {whole * 1000:.1f} ms with the head "
                      f"(3 requests), {proof * 1000:.1f} ms for the proof")
            print(f"time per proof: median {statistics.median(s[2] for s in samples) * 1000:.1f} ms with the head, "
                  f"{statistics.median(s[3] for s in samples) * 1000:.1f} ms for the tiles alone")
    finally:
        if reg is not None:
            reg.stop()


if __name__ == "__main__":
    main()
