"""What the verifier's model proxy costs an agent, measured against a direct call in the same run.

Setup: a local upstream in this process (stdlib ``ThreadingHTTPServer``, HTTP/1.1 keep-alive, Nagle off)
that answers ``POST /v1/chat/completions`` with a fixed chat-completion JSON (with ``usage``), or, for
``"stream": true``, an SSE stream whose first chunk goes out with the headers and the rest after
``--gap-ms``. It does no work, so the difference between the two paths is the proxy's own.

Both paths use one keep-alive ``httpx.Client`` and the same request body (``--prompt-bytes`` of messages):

- floor:   the client straight to the upstream over TCP;
- proxied: the client over the Unix socket of an ``acx_oci.egress.proxy.ModelProxy`` (the sandbox's way
  out), which parses, checks, counts, records and forwards the request to the same upstream.

Measured (issue 22, "Must show"):

1. added latency per JSON request: median and p90 of (proxied - direct) over ``--n`` rounds, one request
   each way per round, the order alternating round by round (drift and load fall on both alike);
2. time to the first streamed byte (``--n-stream`` rounds, interleaved the same way): proxied / direct;
3. RSS at 8 concurrent games: 8 proxies (one per game, as the verifier runs them) in a child process,
   each driven by its own client thread in this process for ``--per-game`` requests (JSON and streamed
   alternating; ``--seconds`` caps the duration); the child's VmRSS peak over its baseline (Python + the
   proxy module imported), so the figure is the proxies' alone — clients and upstream live in this process
   and are not counted. The proxies keep every exchange in memory (the transcript they seal), so this
   figure grows with the requests made and their size, not with the number of games alone.

Prints each with its floor and the issue's target; nothing is asserted (figures vary with machine load).
Run: PYTHONPATH=. python benchmarks/model_proxy.py [--n 300] [--n-stream 100] [--per-game 200] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acx_oci.model import modelapi as ma  # noqa: E402

MODEL = "bench-model-2026-06"
PROXY_BASE = f"http://127.0.0.1:{ma.MODEL_PORT}"
PATH = "/v1/chat/completions"
GAMES = 8
TARGET_ADDED_MS = 2.0
TARGET_TTFB_RATIO = 1.2
TARGET_RSS_MIB = 64.0

# --- the upstream ----------------------------------------------------------------------------------------

_JSON_BODY = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 1780000000, "model": MODEL,
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "move e2e4; " * 24}}],
    "usage": {"prompt_tokens": 512, "completion_tokens": 64, "total_tokens": 576},
}, separators=(",", ":")).encode()
_JSON_RESPONSE = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-request-id: bench\r\n"
                  b"content-length: " + str(len(_JSON_BODY)).encode() + b"\r\n\r\n" + _JSON_BODY)


def _sse(doc: dict[str, Any] | str) -> bytes:
    data = doc if isinstance(doc, str) else json.dumps(doc, separators=(",", ":"))
    event = f"data: {data}\n\n".encode()
    return f"{len(event):x}\r\n".encode() + event + b"\r\n"  # one HTTP chunk per SSE event


def _chunk(delta: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": MODEL,
            "choices": [{"index": 0, "delta": delta}]}


_SSE_HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
             + _sse(_chunk({"role": "assistant", "content": ""})))
_SSE_REST = (b"".join(_sse(_chunk({"content": "tok "})) for _ in range(24))
             + _sse({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": MODEL, "choices": [],
                     "usage": {"prompt_tokens": 512, "completion_tokens": 24, "total_tokens": 536}})
             + _sse("[DONE]") + b"0\r\n\r\n")


class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    gap_s = 0.005
    first_byte_s = 0.0

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        streamed = b'"stream":true' in body.replace(b" ", b"")
        if self.first_byte_s:
            time.sleep(self.first_byte_s)
        if not streamed:
            self.wfile.write(_JSON_RESPONSE)  # status, headers and body in one write
            return
        self.wfile.write(_SSE_HEAD)
        self.wfile.flush()
        time.sleep(self.gap_s)
        self.wfile.write(_SSE_REST)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def start_upstream(gap_s: float, first_byte_s: float) -> ThreadingHTTPServer:
    handler = type("Upstream", (_Upstream,), {"gap_s": gap_s, "first_byte_s": first_byte_s})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, name="bench-upstream", daemon=True).start()
    return srv


def entry_for(srv: ThreadingHTTPServer) -> ma.ModelEntry:
    return ma.ModelEntry(id=MODEL, api="openai-chat", base_url=f"http://127.0.0.1:{srv.server_address[1]}/v1",
                         api_key_env="ACX_BENCH_KEY")


# --- requests --------------------------------------------------------------------------------------------


def request_body(prompt_bytes: int, stream: bool) -> bytes:
    doc: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "messages": [
        {"role": "system", "content": "You play chess. Answer with one move."},
        {"role": "user", "content": ("1. e4 e5 2. Nf3 Nc6 " * (prompt_bytes // 20 + 1))[:prompt_bytes]}]}
    if stream:
        doc["stream"] = True
    return json.dumps(doc).encode()


HEADERS = {"content-type": "application/json", "authorization": f"Bearer {ma.PLACEHOLDER_KEY}"}


def json_once(client: httpx.Client, body: bytes) -> float:
    t = time.perf_counter()
    resp = client.post(PATH, content=body, headers=HEADERS)
    elapsed = time.perf_counter() - t
    if resp.status_code != 200 or not resp.json().get("usage"):
        raise SystemExit(f"JSON request: HTTP {resp.status_code} {resp.text[:300]}")
    return elapsed


def first_byte_once(client: httpx.Client, body: bytes) -> float:
    """Seconds from sending to the first body byte of a streamed answer (the rest is read, not timed)."""
    t = time.perf_counter()
    with client.stream("POST", PATH, content=body, headers=HEADERS) as resp:
        raw = resp.iter_raw()
        first = next(raw, b"")
        elapsed = time.perf_counter() - t
        rest = b"".join(raw)
    if resp.status_code != 200 or not first or b"[DONE]" not in first + rest:
        raise SystemExit(f"streamed request: HTTP {resp.status_code} {(first + rest)[:300]!r}")
    return elapsed


def interleaved(once: Callable[[httpx.Client, bytes], float], direct: httpx.Client, proxied: httpx.Client,
                body: bytes, n: int) -> tuple[list[float], list[float]]:
    """n rounds of one request each way; the order alternates so neither path always goes first."""
    d, p = [], []
    for i in range(n):
        if i % 2:
            p.append(once(proxied, body))
            d.append(once(direct, body))
        else:
            d.append(once(direct, body))
            p.append(once(proxied, body))
    return d, p


def p90(xs: list[float]) -> float:
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


def uds_client(sock: Path) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url=PROXY_BASE, trust_env=False,
                        timeout=30.0)


def verdict(ok: bool) -> str:
    return "within target" if ok else "OVER target"


# --- RSS: the proxies in a child process -----------------------------------------------------------------


def _rss_kib(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _proxy_child(conn: Any, entry: ma.ModelEntry, sock_dir: str, games: int) -> None:
    """Run ``games`` proxies until told to stop; report VmRSS baseline, idle, peak and after the load."""
    from acx_oci.egress.proxy import ModelProxy

    baseline = _rss_kib()
    proxies = [ModelProxy(entry, "sk-bench-secret", Path(sock_dir) / f"game{i}.sock").start()
               for i in range(games)]
    idle = _rss_kib()
    peak = [idle, threading.active_count()]
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(0.02):
            peak[0] = max(peak[0], _rss_kib())
            peak[1] = max(peak[1], threading.active_count())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    conn.send([str(p.socket_path) for p in proxies])
    conn.recv()  # the clients are done
    sampling.set()
    sampler.join()
    loaded = _rss_kib()
    runs = [p.stop() for p in proxies]
    exchanges = sum(len(r.transcript["exchanges"]) for r in runs)
    transcript_bytes = sum(len(json.dumps(r.transcript)) for r in runs)
    conn.send({"baseline": baseline, "idle": idle, "peak": max(peak[0], loaded), "loaded": loaded,
               "threads": peak[1], "exchanges": exchanges, "transcript_bytes": transcript_bytes,
               "requests": sum(r.record["requests"] for r in runs),
               "refused": sum(r.record["refused"] for r in runs)})


def rss_at_games(entry: ma.ModelEntry, prompt_bytes: int, per_game: int, seconds: float,
                 games: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")  # a fresh interpreter: nothing of this process's heap is counted
    parent, child = ctx.Pipe()
    with tempfile.TemporaryDirectory(prefix="acx-bench-mp-") as tmp:
        proc = ctx.Process(target=_proxy_child, args=(child, entry, tmp, games), daemon=True)
        proc.start()
        socks = parent.recv()
        bodies = (request_body(prompt_bytes, False), request_body(prompt_bytes, True))
        counts = [0] * games
        errors: list[str] = []
        stop_at = time.monotonic() + seconds

        def game(i: int) -> None:
            try:
                with uds_client(Path(socks[i])) as client:
                    while counts[i] < per_game and time.monotonic() < stop_at:
                        (json_once if counts[i] % 2 == 0 else first_byte_once)(client, bodies[counts[i] % 2])
                        counts[i] += 1
            except BaseException as exc:  # SystemExit from a bad answer included
                errors.append(f"game {i}: {exc!r}")

        threads = [threading.Thread(target=game, args=(i,)) for i in range(games)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        parent.send("stop")
        out: dict[str, Any] = parent.recv()
        proc.join(timeout=30)
    out["client_requests"] = sum(counts)
    out["errors"] = errors
    out["seconds"] = elapsed
    return out


# --- main ------------------------------------------------------------------------------------------------


def machine() -> str:
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"machine: {os.cpu_count()} cores ({model}), Python {platform.python_version()}, "
            f"httpx {httpx.__version__}; load average {load}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="JSON rounds (one request each way per round)")
    parser.add_argument("--n-stream", type=int, default=100, help="streamed rounds")
    parser.add_argument("--per-game", type=int, default=200, help="requests each game makes in the RSS measure")
    parser.add_argument("--seconds", type=float, default=15.0, help="cap on the RSS measure's load duration")
    parser.add_argument("--prompt-bytes", type=int, default=4096, help="size of the messages in each request")
    parser.add_argument("--gap-ms", type=float, default=5.0, help="upstream pause after the first SSE chunk")
    parser.add_argument("--first-byte-ms", type=float, default=0.0,
                        help="upstream think time before answering (0: the proxy's overhead dominates)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of measures 1 and 2 (each printed)")
    args = parser.parse_args()
    from acx_oci.egress.proxy import ModelProxy

    print(machine())
    print("figures vary with load from other processes; ratios are against a floor measured in the same run")
    print(f"upstream: local, no work (first byte after {args.first_byte_ms:g} ms, SSE rest after "
          f"{args.gap_ms:g} ms); request messages {args.prompt_bytes} bytes; keep-alive httpx clients")
    srv = start_upstream(args.gap_ms / 1000, args.first_byte_ms / 1000)
    entry = entry_for(srv)
    try:
        with tempfile.TemporaryDirectory(prefix="acx-bench-proxy-") as tmp:
            proxy = ModelProxy(entry, "sk-bench-secret", Path(tmp) / "model.sock").start()
            try:
                with httpx.Client(base_url=entry.base_url.removesuffix("/v1"), trust_env=False,
                                  timeout=30.0) as direct, uds_client(proxy.socket_path) as proxied:
                    plain, streamed = request_body(args.prompt_bytes, False), request_body(args.prompt_bytes, True)
                    interleaved(json_once, direct, proxied, plain, 30)  # warm connections and code paths
                    interleaved(first_byte_once, direct, proxied, streamed, 10)
                    for run in range(args.repeat):
                        d, p = interleaved(json_once, direct, proxied, plain, args.n)
                        added = [b - a for a, b in zip(d, p, strict=True)]
                        med = statistics.median(added) * 1000
                        print(f"[run {run + 1}] 1. added latency per JSON request (n={args.n} interleaved): "
                              f"median {med:.2f} ms, p90 {p90(added) * 1000:.2f} ms; "
                              f"floor: direct median {statistics.median(d) * 1000:.2f} ms "
                              f"(proxied {statistics.median(p) * 1000:.2f} ms); "
                              f"target <= {TARGET_ADDED_MS:g} ms median [{verdict(med <= TARGET_ADDED_MS)}]")
                        d, p = interleaved(first_byte_once, direct, proxied, streamed, args.n_stream)
                        ratio = statistics.median(p) / statistics.median(d)
                        added = [b - a for a, b in zip(d, p, strict=True)]
                        extra = statistics.median(added)
                        print(f"[run {run + 1}] 2. time to first streamed byte (n={args.n_stream} interleaved): "
                              f"proxied {statistics.median(p) * 1000:.2f} ms = {ratio:.2f}x; "
                              f"floor: direct {statistics.median(d) * 1000:.2f} ms; added median "
                              f"{extra * 1000:.2f} ms, p90 {p90(added) * 1000:.2f} ms; "
                              f"target <= {TARGET_TTFB_RATIO:g}x [{verdict(ratio <= TARGET_TTFB_RATIO)}]")
                        if not args.first_byte_ms:
                            print(f"   (the floor is a local upstream that does no work; the same added "
                                  f"{extra * 1000:.2f} ms on a provider whose first byte takes 100 ms would be "
                                  f"{(0.1 + extra) / 0.1:.3f}x — rerun with --first-byte-ms to measure that)")
            finally:
                run_record = proxy.stop().record
            if run_record["refused"]:
                raise SystemExit(f"the proxy refused requests: {run_record}")
        r = rss_at_games(entry, args.prompt_bytes, args.per_game, args.seconds, GAMES)
        if r["errors"] or r["refused"]:
            raise SystemExit(f"RSS load failed: {r['errors'][:3]} refused={r['refused']}")
        mib = 1024.0
        rise = (r["peak"] - r["baseline"]) / mib
        held = (r["loaded"] - r["idle"]) / max(r["exchanges"], 1)
        print(f"3. RSS at {GAMES} concurrent games ({r['client_requests']} requests in {r['seconds']:.1f} s, "
              f"JSON and streamed alternating): peak +{rise:.1f} MiB; floor: the child's baseline "
              f"{r['baseline'] / mib:.1f} MiB (Python + proxy module); "
              f"target <= {TARGET_RSS_MIB:g} MiB [{verdict(rise <= TARGET_RSS_MIB)}]")
        print(f"   counted: a child process running only the {GAMES} proxies (clients and upstream are in this one); "
              f"{GAMES} idle proxies +{(r['idle'] - r['baseline']) / mib:.1f} MiB; after the load "
              f"+{(r['loaded'] - r['baseline']) / mib:.1f} MiB with {r['exchanges']} exchanges recorded "
              f"({r['transcript_bytes'] / mib / mib:.1f} MiB of transcript JSON, ~{held:.0f} KiB RSS each); "
              f"{r['threads']} threads at most. The transcripts are kept in memory, so the figure grows with "
              f"requests x body size, not with the number of games alone.")
    finally:
        srv.shutdown()
        srv.server_close()


if __name__ == "__main__":
    main()
