"""Forwarding one admitted request to the provider with the verifier's key injected, and relaying the answer —
streamed ones chunk by chunk as they arrive — back to the agent and into the game's transcript."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import h11
import httpx

from acx_oci import reasons
from acx_oci.egress.failure import FailureProbe
from acx_oci.egress.framing import AgentConnection
from acx_oci.egress.recording import b64
from acx_oci.egress.tally import GameTally
from acx_oci.egress.upstream import KeyScrubber, NoCookiePolicy, TrackingBackend, upstream_transport
from acx_oci.model import modelapi as ma


class UpstreamRelay:
    """One game's client towards the provider: no cookies, connections :meth:`cut_all` can cut at a stop."""

    def __init__(self, tally: GameTally, key: str | None, stopping: threading.Event, request_seconds: float,
                 game_end: float | None) -> None:
        self.tally, self.entry, self.api = tally, tally.entry, tally.api
        self._key = key
        self._backend = TrackingBackend()
        self._client = httpx.Client(timeout=httpx.Timeout(request_seconds, connect=10.0), follow_redirects=False,
                                    trust_env=False, transport=upstream_transport(self._backend),
                                    cookies=http.cookiejar.CookieJar(policy=NoCookiePolicy()))
        self.probe = FailureProbe(tally, key, self._client, self._backend, stopping, request_seconds, game_end)

    def cut_all(self) -> None:
        """End requests still waiting on the provider now, not at their deadline."""
        self._backend.cut_all()

    def close(self) -> None:
        """Close the client (after :meth:`cut_all` and the serving threads' end)."""
        self._client.close()

    def forward(self, agent: AgentConnection, exchange: dict[str, Any], headers: list[tuple[str, str]],
                body: bytes, fwd: bytes) -> bool:
        """Send ``fwd`` upstream and relay the answer; an error answer is held until the probe has said whose
        failure it is. Whether the agent's connection may serve another request."""
        out_headers = {n: v for n, v in headers if n in self.api.forward_headers}
        out_headers["accept-encoding"] = "identity"
        recorded = dict(out_headers)
        out_headers[self.api.key_header] = self.api.key_prefix + (self._key or "")
        url = ma.upstream_url(self.entry, self.api)
        exchange["forwarded"] = {"url": url, "headers": sorted(recorded.items()),
                                 **({"bodyB64": b64(fwd)} if fwd != body else {"bodyAsReceived": True})}
        seconds = self.probe.upstream_seconds()
        deadline = time.monotonic() + seconds
        scrub = KeyScrubber(self._key)
        side = agent.relay()
        status, hs, got, streamed = 0, [], [], False
        try:
            with self._backend.deadline(seconds) as passed, \
                    self._client.stream("POST", url, content=fwd, headers=out_headers) as r:
                status = r.status_code
                hs = [(n.lower(), scrub.text(v)) for n, v in r.headers.items() if n.lower() in ma.RESPONSE_HEADERS]
                streamed = "text/event-stream" in r.headers.get("content-type", "")
                held = status >= 500  # an error answer is held until the probe has said whose failure it is
                if not held:
                    side.send(h11.Response(status_code=status, headers=hs))
                exchange["firstByteMs"] = self.tally.ms()
                size = 0
                for chunk in _chunks(r, deadline):
                    size += len(chunk)
                    if size > ma.MAX_RESPONSE_BYTES:
                        raise httpx.ReadError("response over the bound")
                    out = scrub.feed(chunk)
                    got.append(out)
                    if out and not held:
                        side.send(h11.Data(data=out))  # once the agent is gone, read on: the tokens still count
                tail = scrub.end()
                got.append(tail)
                if tail and not held:
                    side.send(h11.Data(data=tail))
                if not held:
                    side.send(h11.EndOfMessage())
        except (httpx.HTTPError, TimeoutError) as exc:
            failed = self.probe.provider_failed(status)
            self.tally.cut(exchange, failed, "deadline" if passed.is_set() else type(exc).__name__, status, hs,
                           b"".join(got), fwd, streamed)
            err = json.dumps({"error": {"type": "acx_proxy", "code": reasons.UPSTREAM_FAILED,
                                        "message": "the model provider did not answer in time or in bounds"}})
            if not side.gone and status == 0:
                with contextlib.suppress(h11.LocalProtocolError, OSError):
                    agent.answer(502, err.encode(), [("x-should-retry", "false")], close=True)
            return False
        if status >= 500:
            if self.probe.provider_failed(status):
                self.tally.provider_failed()
            with contextlib.suppress(h11.LocalProtocolError, OSError):
                agent.answer(status, b"".join(got), hs)
        self.tally.answered(exchange, status, hs, b"".join(got), streamed, fwd)
        return not side.gone


def _chunks(r: httpx.Response, deadline: float) -> Iterator[bytes]:
    """The answer's bytes, cut when the whole-request deadline passes (a trickle would otherwise go on)."""
    for chunk in r.iter_bytes():
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("per-request deadline passed")
        if chunk:
            yield chunk
