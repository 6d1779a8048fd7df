"""The verifier's model proxy: the only trusted thing between a sandboxed agent and a provider.

One proxy per game, listening on a Unix socket that is bound into that game's sandbox and nowhere else.
Each request is framed (:mod:`acx_oci.egress.framing`), judged and bounded (:mod:`acx_oci.egress.policy`),
counted against the game's budgets (:mod:`acx_oci.egress.tally`), and only then forwarded with the verifier's
key injected (:mod:`acx_oci.egress.relay`). Responses go back to the agent and into the game's model
transcript, which the caller seals. In replay mode nothing goes upstream: answers come from a recording
(:mod:`acx_oci.egress.replay`). This module holds the serving itself: the socket, the accept loop, one
thread per connection, and the stop that cuts them all.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import h11

from acx_oci.egress.framing import AgentConnection
from acx_oci.egress.policy import RefusedRequest, RequestPolicy, refuse
from acx_oci.egress.recording import ModelRun, RecordedAnswers
from acx_oci.egress.relay import UpstreamRelay
from acx_oci.egress.replay import answer_from_recording
from acx_oci.egress.tally import GameTally
from acx_oci.model import modelapi as ma

MAX_CONNECTIONS = 64  # open at once per game; the relay opens one per agent connection
MAX_IN_FLIGHT = 4  # answers being relayed at once per game (each up to MAX_RESPONSE_BYTES, held for the record)


class ModelProxy:
    """Serve one game's agent on ``socket_path`` until :meth:`stop`; see the module docstring."""

    def __init__(self, entry: ma.ModelEntry, key: str | None, socket_path: Path, *,
                 replay: RecordedAnswers | None = None, owner: tuple[int, int] | None = None,
                 request_seconds: float = ma.REQUEST_SECONDS, game_seconds: float | None = None) -> None:
        self.entry, self.api = entry, ma.APIS[entry.api]
        self.socket_path = socket_path
        self.replay = replay
        self.owner = owner
        self.request_seconds = request_seconds
        self.tally = GameTally(entry, replay is not None)
        self._lock = self.tally.lock  # one lock: the connection set and the game's counts
        game_end = time.monotonic() + game_seconds if game_seconds else None
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        self._server: socket.socket | None = None
        self.policy = RequestPolicy(self.tally, request_seconds)
        self.relay = UpstreamRelay(self.tally, key, self._stopping, request_seconds, game_end)
        self._in_flight = threading.BoundedSemaphore(1 if entry.max_tokens_per_game else MAX_IN_FLIGHT)

    @property
    def budget(self) -> ma.Budget:
        """The game's counters so far (the tally's)."""
        return self.tally.budget

    @property
    def exchanges(self) -> list[dict[str, Any]]:
        """The exchanges kept so far (the tally's)."""
        return self.tally.exchanges

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
        self.relay.cut_all()  # requests still waiting on the provider end now, not at their deadline
        deadline = time.monotonic() + 5
        for t in list(self._threads):
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        self.relay.close()
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
        return self.tally.result()

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
        agent = AgentConnection(sock)
        try:
            while not self._stopping.is_set():
                req = agent.next_event()
                if not isinstance(req, h11.Request):
                    return
                if not self._handle(agent, req) or agent.conn.our_state is h11.MUST_CLOSE:
                    return
                agent.conn.start_next_cycle()
        except (OSError, h11.ProtocolError):
            return
        finally:
            with self._lock:
                self._conns.discard(sock)
            sock.close()

    def _handle(self, agent: AgentConnection, req: h11.Request) -> bool:
        exchange, verdict = self.policy.judge(agent, req)
        if isinstance(verdict, RefusedRequest):
            return refuse(self.tally, agent, exchange, verdict.refusal, verdict.close)
        # At most MAX_IN_FLIGHT answers held at once (memory), and one when tokens are budgeted: usage is known
        # only once an answer ends, so concurrent requests started just under the budget would overshoot it.
        with self._in_flight:
            spent = self.tally.admit()
            if spent is not None:
                return refuse(self.tally, agent, exchange, spent)
            fwd = ma.forwarded_body(self.api, verdict.doc, verdict.body)
            if self.replay is not None:
                return answer_from_recording(self.tally, self.replay, agent, exchange, verdict.target, verdict.body)
            return self.relay.forward(agent, exchange, verdict.headers, verdict.body, fwd)
