"""Latency a pull through the policy gateway adds over the upstream, measured in one run.

Setup: a local CNCF Distribution registry (no Referrers API: the gateway's
fingerprint and resolution take the tag-schema fallback path) with a strong,
attested cartridge in ``acx/strong`` (competence 33, 90 games, status list
published), and gateways started in this process in front of it.

Measured, each as the median (and p90) of a manifest GET by tag over one
keep-alive ``httpx.Client``:

- floor:       the cartridge manifest straight from the upstream;
- proxy hop:   the same manifest through a gateway whose policy covers no repository (proxying alone);
- non-cartridge: a benchmark manifest in a covered repository (proxy + reading its type; no verdict);
- cached:      the cartridge through the gateway, verdict fresh in the cache (no upstream calls but the GET);
- revalidated: the cartridge, cached verdict but its fingerprint re-listed (``--fresh 0``);
- cold:        the cartridge, the gateway's verdict cache emptied before every request (full resolve +
               evaluate; the process's replay cache and the consumer verdict cache stay warm: the definition
               the figures before issue 25 used);
- cold, no cache: the same with every cache emptied (gateway verdicts, replay verdicts, ``verdicts.json``).

The warm measurements are interleaved (one request of each per round), so load from other processes on
the machine falls on all of them alike. Prints each against the floor as a ratio, and the two targets of
issue 14: the proxy hop <= 1.6x the floor, a cached verdict <= 1.25x the proxy hop.
Run: python benchmarks/gateway.py [--n 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acx_oci.evaluation.policy import load_policy  # noqa: E402
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread  # noqa: E402
from acx_oci.oci.model import MANIFEST_ACCEPT  # noqa: E402
from acx_oci.services.consumer import replay as replay_service  # noqa: E402
from acx_oci.services.consumer.statuscache import CACHE_ENV  # noqa: E402
from acx_oci.services.consumer.verdictcache import FILE as VERDICTS_FILE  # noqa: E402
from acx_oci.trust.trustfile import load_trust  # noqa: E402
from tests.support.policy_world import build_world  # noqa: E402
from tests.support.registry import start_registry  # noqa: E402


def once(client: httpx.Client, url: str, expect: int = 200) -> float:
    t = time.perf_counter()
    resp = client.get(url, headers={"Accept": MANIFEST_ACCEPT})
    elapsed = time.perf_counter() - t
    if resp.status_code != expect:
        raise SystemExit(f"{url}: HTTP {resp.status_code} {resp.text[:300]}")
    return elapsed


def measure(client: httpx.Client, url: str, n: int, before: Callable[[], None] | None = None) -> list[float]:
    times = []
    for _ in range(n):
        if before is not None:
            before()
        times.append(once(client, url))
    return times


def interleaved(client: httpx.Client, urls: list[str], n: int) -> list[list[float]]:
    """n rounds of one GET of each URL, in turn: every path sees the same background load."""
    times: list[list[float]] = [[] for _ in urls]
    for _ in range(n):
        for i, url in enumerate(urls):
            times[i].append(once(client, url))
    return times


def p90(xs: list[float]) -> float:
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


def report(rows: list[tuple[str, list[float]]], args: argparse.Namespace, run: int) -> None:
    meds = {name: statistics.median(xs) for name, xs in rows}
    floor = meds["floor (upstream direct)"]
    print(f"run {run + 1}: manifest GET of a cartridge with 1 attestation; n={args.n} interleaved"
          + (f" (cold n={args.n_cold})" if len(rows) > 5 else ""))
    print(f"{'path':32} {'median ms':>10} {'p90 ms':>8} {'ratio':>7} {'added ms':>9}")
    for name, xs in rows:
        med = meds[name]
        print(f"{name:32} {med * 1000:10.2f} {p90(xs) * 1000:8.2f} {med / floor:6.2f}x {(med - floor) * 1000:9.2f}")
    proxy, cached = meds["proxy hop (not covered)"], meds["cached verdict (fresh)"]
    print(f"targets: proxy hop {proxy / floor:.2f}x the floor (<= 1.6x), "
          f"cached verdict {cached / proxy:.2f}x the proxy hop (<= 1.25x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="requests per warm measurement")
    parser.add_argument("--n-cold", type=int, default=40, help="requests for the cold measurement")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the warm measurements (each printed)")
    args = parser.parse_args()
    reg = start_registry()
    gateways: list[RunningGateway] = []
    try:
        with tempfile.TemporaryDirectory(prefix="acx-bench-gw-") as tmp:
            os.environ[CACHE_ENV] = str(Path(tmp) / "consumer-cache")  # never the user's own cache
            print("building the world (keys, benchmark, 4 cartridges, attestations)...", file=sys.stderr)
            w = build_world(reg.host, Path(tmp))
            policy, trust = load_policy(w.policy), load_trust(w.trust)
            upstream = f"http://{reg.host}"
            fresh = start_in_thread(GatewayConfig(upstream=upstream, policy=policy, trust=trust,
                                                  fresh_seconds=3600.0, max_age_seconds=3600.0))
            reval = start_in_thread(GatewayConfig(upstream=upstream, policy=policy, trust=trust,
                                                  fresh_seconds=0.0, max_age_seconds=3600.0))
            nothing = Path(tmp) / "covers-nothing.yaml"
            nothing.write_text('apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: ["no-such-repo/*"]\n'
                               '    require: {signedBy: trusted-publisher}\n')
            plain = start_in_thread(GatewayConfig(upstream=upstream, policy=load_policy(nothing), trust=trust))
            gateways += [fresh, reval, plain]
            path = "/v2/acx/strong/manifests/1"
            names = ["floor (upstream direct)", "proxy hop (not covered)", "non-cartridge (covered)",
                     "cached verdict (fresh)", "cached verdict (revalidated)"]
            urls = [f"{upstream}{path}", f"http://{plain.address}{path}",
                    f"http://{fresh.address}/v2/acx/bench/manifests/2026.07.1",
                    f"http://{fresh.address}{path}", f"http://{reval.address}{path}"]
            with httpx.Client() as client:
                for url in urls:
                    measure(client, url, 20)  # warm connections, caches, the verdict
                for run in range(args.repeat):
                    rows = list(zip(names, interleaved(client, urls, args.n), strict=True))
                    if run == args.repeat - 1:
                        rows.append(("cold verdict (full resolve)",
                                     measure(client, urls[3], args.n_cold, fresh.gateway.cache.clear)))

                        def forget_all() -> None:
                            fresh.gateway.cache.clear()
                            replay_service.clear_cache()
                            (Path(os.environ[CACHE_ENV]) / VERDICTS_FILE).unlink(missing_ok=True)

                        rows.append(("cold verdict, no cache", measure(client, urls[3], args.n_cold, forget_all)))
                    report(rows, args, run)
            print(f"evaluations: fresh gateway {fresh.gateway.stats}, revalidating gateway {reval.gateway.stats}")
    finally:
        for g in gateways:
            g.stop()
        reg.stop()


if __name__ == "__main__":
    main()
