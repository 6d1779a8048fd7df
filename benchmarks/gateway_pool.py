"""CPU per proxied request of the gateway's upstream transport (``acx_oci.gateway.pool``), in isolation.

The proxy-hop target (``benchmarks/gateway.py``: a manifest through the gateway <= 1.6x straight from the
upstream) is measured in wall time and swings with the machine's load; the transport's own cost is better
seen as the CPU time this process spends per request. An upstream in a *separate process* answers every
GET with a ~1.6 KB manifest (``Content-Length``, keep-alive); this process sends ``--n`` sequential GETs over
one ``httpx.AsyncClient`` and reads each body, through

- ``pool``:     the gateway's transport (h11 framing on asyncio streams);
- ``httpcore``: httpx's default async transport, for scale;
- ``other``:    with ``--compare-file PATH``, the ``UpstreamTransport`` of another ``pool.py`` (an older version).

Prints the median CPU µs per request over ``--repeat`` rounds (interleaved) and the median wall ms.
Run: python benchmarks/gateway_pool.py [--n 2000] [--repeat 5] [--compare-file old_pool.py]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acx_oci.gateway.pool import NoCookieJar, UpstreamTransport  # noqa: E402

UPSTREAM = r"""
import asyncio, sys
BODY = b'{"schemaVersion":2,' + b'"x":"' + b'a' * 1600 + b'"}'
HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\n"
        b"Docker-Content-Digest: sha256:" + b"0" * 64 + b"\r\nContent-Length: %d\r\n\r\n" % len(BODY))
async def conn(r, w):
    try:
        while True:
            await r.readuntil(b"\r\n\r\n")
            w.write(HEAD + BODY)
            await w.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        w.close()
async def main():
    s = await asyncio.start_server(conn, "127.0.0.1", 0)
    print(s.sockets[0].getsockname()[1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
asyncio.run(main())
"""


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("compared_pool", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.UpstreamTransport


async def _round(url: str, transport: httpx.AsyncBaseTransport | None, n: int) -> tuple[float, float]:
    """(CPU µs per request, median wall ms) of ``n`` GETs, bodies read, on one client."""
    async with httpx.AsyncClient(transport=transport, cookies=NoCookieJar()) as client:
        for _ in range(20):  # warm: connection made, code paths hot
            await client.get(url)
        walls = []
        cpu0 = time.process_time()
        for _ in range(n):
            t0 = time.perf_counter()
            async with client.stream("GET", url) as resp:
                async for _chunk in resp.aiter_raw():
                    pass
            walls.append(time.perf_counter() - t0)
        cpu = time.process_time() - cpu0
    return cpu / n * 1e6, statistics.median(walls) * 1e3


def main() -> None:
    """Run the comparison (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="requests per round")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (interleaved across transports)")
    parser.add_argument("--compare-file", type=Path, help="another pool.py whose UpstreamTransport is measured too")
    args = parser.parse_args()
    proc = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        url = f"http://127.0.0.1:{int(proc.stdout.readline())}/v2/acx/strong/manifests/1"
        other = _load(args.compare_file) if args.compare_file else None
        makers: dict[str, Any] = {"pool": lambda: UpstreamTransport(), "httpcore": lambda: None}
        if other is not None:
            makers["other"] = lambda: other()
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in makers}
        for _ in range(args.repeat):
            for name, make in makers.items():
                results[name].append(asyncio.run(_round(url, make(), args.n)))
        print(f"{'transport':<10} {'CPU µs/req':>11} {'wall ms':>8}   (median of {args.repeat} x {args.n})")
        for name, rows in results.items():
            print(f"{name:<10} {statistics.median(r[0] for r in rows):>11.0f} "
                  f"{statistics.median(r[1] for r in rows):>8.3f}")
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
