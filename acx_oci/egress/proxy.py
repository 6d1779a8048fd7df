"""The verifier's model proxy: the only trusted thing between a sandboxed agent and a provider.

One proxy per game, listening on a Unix socket that is bound into that game's sandbox and nowhere else.
Each request is parsed with ``h11`` (no hand-written HTTP framing), judged by
:func:`acx_oci.model.modelapi.check_request` (one method, one path, the declared model, no CONNECT, no
absolute URI, no foreign Host, no upgrade), bounded (header bytes and count, body bytes, a per-request
deadline), counted against the game's budgets, and only then forwarded with the verifier's key injected.
Responses — streamed ones chunk by chunk as they arrive — go back to the agent and into the game's model
transcript, which the caller seals. In replay mode nothing goes upstream: answers come from a recording.
"""

from __future__ import annotations

import base64
import contextlib
import http.cookiejar
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h11
import httpx

from acx_oci import reasons
from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.jcs import canonical
from acx_oci.egress.recording import ModelRun, RecordedAnswers, b64
from acx_oci.egress.upstream import KeyScrubber, NoCookiePolicy, TrackingBackend, upstream_transport
from acx_oci.model import modelapi as ma

_HOSTS = (f"127.0.0.1:{ma.MODEL_PORT}", f"localhost:{ma.MODEL_PORT}")
_CHUNK = 65536
MAX_CONNECTIONS = 64  # open at once per game; the relay opens one per agent connection
MAX_IN_FLIGHT = 4  # answers being relayed at once per game (each up to MAX_RESPONSE_BYTES, held for the record)
MAX_PROBES = 8  # the verifier's own requests per game, each asking whether a failure was the provider's
PROBE_SECONDS = 30.0
class _AgentSide:
    """Writes to the agent that never raise: an agent that hangs up or stops reading (its write times out) is
    its own doing — never the provider's failure — and the answer is still read to its end and recorded."""

    def __init__(self, conn: h11.Connection, sock: socket.socket) -> None:
        self.conn, self.sock, self.gone = conn, sock, False

    def send(self, event: Any) -> None:
        if self.gone:
            return
        try:
            data = self.conn.send(event)
            if data:
                self.sock.sendall(data)
        except (OSError, h11.LocalProtocolError):
            self.gone = True


class ModelProxy:
    """Serve one game's agent on ``socket_path`` until :meth:`stop`; see the module docstring."""

    def __init__(self, entry: ma.ModelEntry, key: str | None, socket_path: Path, *,
                 replay: RecordedAnswers | None = None, owner: tuple[int, int] | None = None,
                 request_seconds: float = ma.REQUEST_SECONDS, game_seconds: float | None = None) -> None:
        self.entry, self.api = entry, ma.APIS[entry.api]
        self._key = key
        self.socket_path = socket_path
        self.replay = replay
        self.owner = owner
        self.request_seconds = request_seconds
        self.budget = ma.Budget(entry.max_requests_per_game, entry.max_tokens_per_game)
        self.exchanges: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self._game_end = self._t0 + game_seconds if game_seconds else None
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        self._server: socket.socket | None = None
        self._backend = TrackingBackend()
        self._client = httpx.Client(timeout=httpx.Timeout(request_seconds, connect=10.0), follow_redirects=False,
                                    trust_env=False, transport=upstream_transport(self._backend),
                                    cookies=http.cookiejar.CookieJar(policy=NoCookiePolicy()))
        self._probes = 0
        self._in_flight = threading.BoundedSemaphore(1 if entry.max_tokens_per_game else MAX_IN_FLIGHT)
        self._kept_refused = 0

    # --- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> ModelProxy:
        """Listen on the socket (0600, owned by the sandbox's host uid when the verifier drops to it)."""
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o600)
        if self.owner is not None:
            os.chown(self.socket_path, *self.owner)
        srv.listen(64)
        self._server = srv
        t = threading.Thread(target=self._accept, name="acx-model-proxy", daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def stop(self) -> ModelRun:
        """Stop serving (open connections are cut) and return what was seen."""
        self._stopping.set()
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
        self._backend.cut_all()  # requests still waiting on the provider end now, not at their deadline
        deadline = time.monotonic() + 5
        for t in list(self._threads):
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        self._client.close()
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)
        return self.result()

    def __enter__(self) -> ModelProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if not self._stopping.is_set():
            self.stop()

    def result(self) -> ModelRun:
        """The record fields, the transcript and the two game-ending conditions so far."""
        with self._lock:
            exchanges = list(self.exchanges)
            b = self.budget
            transcript = {"model": {"id": self.entry.id, "api": self.entry.api},
                          "replay": self.replay is not None, "exchanges": exchanges}
            record = {"id": self.entry.id, "api": self.entry.api, "requests": b.requests, "refused": b.refused,
                      "inputTokens": b.input_tokens, "outputTokens": b.output_tokens,
                      "transcriptDigest": sha256_digest(canonical(transcript))}
            return ModelRun(record, transcript, b.upstream_failures > 0, b.divergent > 0)

    # --- serving ---------------------------------------------------------------------------------------

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()]
                if len(self._conns) >= MAX_CONNECTIONS:  # a connection flood: refused, never a thread per attempt
                    conn.close()
                    continue
                self._conns.add(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(self.request_seconds)
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=ma.MAX_HEADER_BYTES)
        try:
            while not self._stopping.is_set():
                req = self._next(conn, sock)
                if not isinstance(req, h11.Request):
                    return
                if not self._handle(conn, sock, req) or conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (OSError, h11.ProtocolError):
            return
        finally:
            with self._lock:
                self._conns.discard(sock)
            sock.close()

    def _next(self, conn: h11.Connection, sock: socket.socket) -> Any:
        while True:
            ev = conn.next_event()
            if ev is h11.NEED_DATA:
                data = sock.recv(_CHUNK)
                conn.receive_data(data)
                continue
            return ev

    def _body(self, conn: h11.Connection, sock: socket.socket) -> bytes | None:
        parts: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self.request_seconds
        while True:
            if time.monotonic() > deadline:
                return None
            ev = self._next(conn, sock)
            if isinstance(ev, h11.Data):
                size += len(ev.data)
                if size > ma.MAX_REQUEST_BYTES:
                    return None
                parts.append(bytes(ev.data))
            elif isinstance(ev, h11.EndOfMessage):
                return b"".join(parts)
            else:
                return None

    def _answer(self, conn: h11.Connection, sock: socket.socket, status: int, body: bytes,
                headers: list[tuple[str, str]] | None = None, close: bool = False) -> None:
        """A whole response; ``headers`` may name the content-type (JSON otherwise)."""
        given = [h for h in headers or [] if h[0] not in ("content-length", "transfer-encoding", "connection")]
        if not any(n == "content-type" for n, _ in given):
            given.insert(0, ("content-type", "application/json"))
        hs = [*given, ("content-length", str(len(body)))]
        if close:
            hs.append(("connection", "close"))
        sock.sendall(b"".join(conn.send(ev) or b"" for ev in (h11.Response(status_code=status, headers=hs),
                                                              h11.Data(data=body), h11.EndOfMessage())))

    def _refuse(self, conn: h11.Connection, sock: socket.socket, exchange: dict[str, Any], r: ma.Refusal,
                close: bool = False) -> bool:
        body = json.dumps({"error": {"type": "acx_proxy", "code": r.code, "message": r.message}}).encode()
        with self._lock:
            self.budget.refuse(r.code)
            if r.code == reasons.REPLAY_DIVERGENT:
                self.budget.divergent += 1
            exchange.update(refused=r.code, response={"status": r.status, "headers": [], "bodyB64": b64(body)})
            self._log(exchange)
        with contextlib.suppress(h11.LocalProtocolError):  # SDKs retry 429/409/5xx unless told not to
            self._answer(conn, sock, r.status, body, [("x-should-retry", "false")], close=close)
        return not close

    def _log(self, exchange: dict[str, Any]) -> None:
        """Keep an exchange (caller holds the lock); refusals past the bounds are counted, not kept."""
        size = sum(len(str(part.get("bodyB64") or "")) for part in (exchange.get("request") or {},
                                                                     exchange.get("forwarded") or {},
                                                                     exchange.get("response") or {}))
        if exchange.get("refused") is not None:  # free for the agent: bounded apart, never at the answers' cost
            if self._kept_refused >= ma.MAX_EXCHANGES or self.budget.recorded_bytes >= ma.MAX_TRANSCRIPT_BYTES:
                return
            self._kept_refused += 1
        exchange["n"] = len(self.exchanges) + 1
        self.exchanges.append(exchange)
        self.budget.recorded_bytes += size

    def _handle(self, conn: h11.Connection, sock: socket.socket, req: h11.Request) -> bool:
        method, target = req.method.decode("ascii", "replace"), req.target.decode("latin-1")
        headers = [(n.decode("latin-1").lower(), v.decode("latin-1")) for n, v in req.headers]
        exchange: dict[str, Any] = {"n": len(self.exchanges) + 1, "ms": self._ms(),
                                    "request": {"method": method, "target": target[:4096], "headers": headers}}
        if len(headers) > ma.MAX_HEADERS:
            refusal = ma.Refusal(431, reasons.HEADERS_REFUSED, "too many headers")
            return self._refuse(conn, sock, exchange, refusal, True)
        if method == "CONNECT" or not target.startswith("/"):
            verdict = ma.check_request(self.api, self.entry.id, method=method, target=target, headers=headers,
                                       host_ok=_HOSTS, body=b"")
            assert isinstance(verdict, ma.Refusal)
            return self._refuse(conn, sock, exchange, verdict, True)
        body = self._body(conn, sock)
        if body is None:
            return self._refuse(conn, sock, exchange, ma.Refusal(413, reasons.BODY_REFUSED, "request body over the "
                                f"{ma.MAX_REQUEST_BYTES}-byte bound, malformed or too slow"), True)
        exchange["request"]["bodyB64"] = b64(body)
        verdict = ma.check_request(self.api, self.entry.id, method=method, target=target, headers=headers,
                                   host_ok=_HOSTS, body=body)
        if isinstance(verdict, ma.Refusal):
            return self._refuse(conn, sock, exchange, verdict)
        # At most MAX_IN_FLIGHT answers held at once (memory), and one when tokens are budgeted: usage is known
        # only once an answer ends, so concurrent requests started just under the budget would overshoot it.
        with self._in_flight:
            with self._lock:
                spent = self.budget.exhausted()
                if spent is None:
                    self.budget.requests += 1
            if spent is not None:
                return self._refuse(conn, sock, exchange, spent)
            fwd = ma.forwarded_body(self.api, verdict, body)
            if self.replay is not None:
                return self._answer_from_recording(conn, sock, exchange, target, body)
            return self._forward(conn, sock, exchange, headers, body, fwd)

    def _ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def _answer_from_recording(self, conn: h11.Connection, sock: socket.socket, exchange: dict[str, Any], target: str,
                  body: bytes) -> bool:
        assert self.replay is not None
        with self._lock:
            answer = self.replay.take(ma.request_key(target, body))
        if answer is None:
            return self._refuse(conn, sock, exchange, ma.Refusal(
                409, reasons.REPLAY_DIVERGENT, "the recording holds no answer for this request"))
        data = base64.b64decode(str(answer.get("bodyB64") or ""))
        hs = [(str(n), str(v)) for n, v in answer.get("headers") or [] if str(n) in ma.RESPONSE_HEADERS]
        streamed = any(n == "content-type" and "text/event-stream" in v for n, v in hs)
        self._answer(conn, sock, int(answer.get("status") or 502), data, hs)
        self._account(exchange, int(answer.get("status") or 502), hs, data, streamed, body)
        return True

    def _forward(self, conn: h11.Connection, sock: socket.socket, exchange: dict[str, Any],
                 headers: list[tuple[str, str]], body: bytes, fwd: bytes) -> bool:
        out_headers = {n: v for n, v in headers if n in self.api.forward_headers}
        out_headers["accept-encoding"] = "identity"
        recorded = dict(out_headers)
        out_headers[self.api.key_header] = self.api.key_prefix + (self._key or "")
        url = ma.upstream_url(self.entry, self.api)
        exchange["forwarded"] = {"url": url, "headers": sorted(recorded.items()),
                                 **({"bodyB64": b64(fwd)} if fwd != body else {"bodyAsReceived": True})}
        seconds = self._upstream_seconds()
        deadline = time.monotonic() + seconds
        scrub = KeyScrubber(self._key)
        agent = _AgentSide(conn, sock)
        status, hs, got, streamed = 0, [], [], False
        try:
            with self._backend.deadline(seconds) as passed, \
                    self._client.stream("POST", url, content=fwd, headers=out_headers) as r:
                status = r.status_code
                hs = [(n.lower(), scrub.text(v)) for n, v in r.headers.items() if n.lower() in ma.RESPONSE_HEADERS]
                streamed = "text/event-stream" in r.headers.get("content-type", "")
                held = status >= 500  # an error answer is held until the probe has said whose failure it is
                if not held:
                    agent.send(h11.Response(status_code=status, headers=hs))
                exchange["firstByteMs"] = self._ms()
                size = 0
                for chunk in self._chunks(r, deadline):
                    size += len(chunk)
                    if size > ma.MAX_RESPONSE_BYTES:
                        raise httpx.ReadError("response over the bound")
                    out = scrub.feed(chunk)
                    got.append(out)
                    if out and not held:
                        agent.send(h11.Data(data=out))  # once the agent is gone, read on: the tokens still count
                tail = scrub.end()
                got.append(tail)
                if tail and not held:
                    agent.send(h11.Data(data=tail))
                if not held:
                    agent.send(h11.EndOfMessage())
        except (httpx.HTTPError, TimeoutError) as exc:
            failed = self._provider_failed(status)
            with self._lock:
                if failed:
                    self.budget.upstream_failures += 1
                exchange["upstreamError"] = "deadline" if passed.is_set() else type(exc).__name__
                if status:
                    exchange["response"] = {"status": status, "headers": hs, "bodyB64": b64(b"".join(got))}
                    inp, outp = ma.usage_of(self.api, b"".join(got), streamed, fwd) if status < 400 else (0, 0)
                    self.budget.input_tokens += inp
                    self.budget.output_tokens += outp
                self._log(exchange)
            err = json.dumps({"error": {"type": "acx_proxy", "code": reasons.UPSTREAM_FAILED,
                                        "message": "the model provider did not answer in time or in bounds"}})
            if not agent.gone and status == 0:
                with contextlib.suppress(h11.LocalProtocolError, OSError):
                    self._answer(conn, sock, 502, err.encode(), [("x-should-retry", "false")], close=True)
            return False
        if status >= 500:
            if self._provider_failed(status):
                with self._lock:
                    self.budget.upstream_failures += 1
            with contextlib.suppress(h11.LocalProtocolError, OSError):
                self._answer(conn, sock, status, b"".join(got), hs)
        self._account(exchange, status, hs, b"".join(got), streamed, fwd)
        return not agent.gone

    def _upstream_seconds(self) -> float:
        """The whole-request deadline of the next forwarded request: ``request_seconds``, and within the game's
        time limit all but a probe's share of what is left of it (a sixth, at most PROBE_SECONDS), so that a
        provider cut at its deadline is probed, and found failed, before the game ends — a provider that
        stalls is a lane error, never the agent's timeout."""
        if self._game_end is None:
            return self.request_seconds
        left = self._game_end - time.monotonic()
        return max(1.0, min(self.request_seconds, left - min(PROBE_SECONDS, left / 6)))

    def _provider_failed(self, status: int) -> bool:
        """Whether an answer that went wrong (a 5xx, a timeout, a cut or oversized answer) is the provider's
        failure — the game a lane-error — or the agent's doing.

        The agent chooses its requests: one asking for a generation longer than the deadline, or a crafted input
        the provider answers 5xx, would let it turn any game it is losing into an unrated lane-error. So the
        verifier asks the provider a request of its own (the smallest valid one, recorded as a ``probe``): the
        provider failed only if that fails too. Never during a stop (the game is over), at most
        :data:`MAX_PROBES` per game."""
        if self._stopping.is_set() or self.replay is not None:
            return False
        with self._lock:
            if self.budget.upstream_failures:
                return True  # already the examiner's: no need to ask again
            if self._probes >= MAX_PROBES:
                return False
            self._probes += 1
        doc: dict[str, Any] = {"model": self.entry.id}
        headers = {"content-type": "application/json", "accept-encoding": "identity",
                   self.api.key_header: self.api.key_prefix + (self._key or "")}
        if self.api.name == "openai-responses":
            doc.update(input="ping", max_output_tokens=16)
        else:
            doc.update(messages=[{"role": "user", "content": "ping"}], max_tokens=1)
        if self.api.name == "anthropic-messages":
            headers["anthropic-version"] = "2023-06-01"
        body = json.dumps(doc).encode()
        probe: dict[str, Any] = {"ms": self._ms(), "probe": True, "cause": status or "transport",
                                 "forwarded": {"url": ma.upstream_url(self.entry, self.api),
                                               "bodyB64": b64(body)}}
        left = self._game_end - time.monotonic() if self._game_end is not None else PROBE_SECONDS
        seconds = max(1.0, min(self.request_seconds, PROBE_SECONDS, left))
        with self._backend.deadline(seconds) as passed:  # whole-request: a trickling answer is cut too
            try:
                r = self._client.post(ma.upstream_url(self.entry, self.api), content=body, headers=headers,
                                      timeout=httpx.Timeout(seconds, connect=10.0))
                probe["response"] = {"status": r.status_code}
                failed = r.status_code >= 500
            except httpx.HTTPError as exc:
                probe["upstreamError"] = "deadline" if passed.is_set() else type(exc).__name__
                failed = True
        with self._lock:
            self.exchanges.append(probe)  # bounded by MAX_PROBES; not the agent's request, not in its counts
        return failed and not self._stopping.is_set()

    def _chunks(self, r: httpx.Response, deadline: float) -> Iterator[bytes]:
        for chunk in r.iter_bytes():
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout("per-request deadline passed")
            if chunk:
                yield chunk

    def _account(self, exchange: dict[str, Any], status: int, headers: list[tuple[str, str]], body: bytes,
                 streamed: bool, sent: bytes) -> None:
        inp, out = ma.usage_of(self.api, body, streamed, sent) if status < 400 else (0, 0)
        with self._lock:
            self.budget.input_tokens += inp
            self.budget.output_tokens += out
            exchange.update(response={"status": status, "headers": headers, "bodyB64": b64(body)},
                            streamed=streamed, usage={"input": inp, "output": out}, doneMs=self._ms())
            self._log(exchange)
