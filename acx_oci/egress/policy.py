"""What an agent's request must be before anything goes upstream, and how the proxy refuses it.

Each request is judged by :func:`acx_oci.model.modelapi.check_request` (one method, one path, the declared
model, no CONNECT, no absolute URI, no foreign Host, no upgrade) and bounded (header count, body bytes, a
per-request deadline); a refusal is answered by the proxy itself, counted and recorded."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import h11

from acx_oci import reasons
from acx_oci.egress.framing import AgentConnection, refusal_body
from acx_oci.egress.recording import b64
from acx_oci.egress.tally import GameTally
from acx_oci.model import modelapi as ma

_HOSTS = (f"127.0.0.1:{ma.MODEL_PORT}", f"localhost:{ma.MODEL_PORT}")


@dataclass(frozen=True)
class AdmittedRequest:
    """A request the policy lets through: its target, headers and body, and ``doc``, the allow-listed rebuild."""

    target: str
    headers: list[tuple[str, str]]
    body: bytes
    doc: dict[str, Any]


@dataclass(frozen=True)
class RefusedRequest:
    """A request the policy refuses; ``close`` when the connection cannot be trusted to frame another one."""

    refusal: ma.Refusal
    close: bool = False


class RequestPolicy:
    """Judges each request of one game's agent against its declared model (see the module docstring)."""

    def __init__(self, tally: GameTally, request_seconds: float) -> None:
        self.tally, self.entry, self.api = tally, tally.entry, tally.api
        self.request_seconds = request_seconds

    def judge(self, agent: AgentConnection, req: h11.Request
              ) -> tuple[dict[str, Any], AdmittedRequest | RefusedRequest]:
        """The request's exchange and verdict; the body is read only once the head is acceptable."""
        method, target = req.method.decode("ascii", "replace"), req.target.decode("latin-1")
        headers = [(n.decode("latin-1").lower(), v.decode("latin-1")) for n, v in req.headers]
        exchange = self.tally.exchange(method, target, headers)
        if len(headers) > ma.MAX_HEADERS:
            return exchange, RefusedRequest(ma.Refusal(431, reasons.HEADERS_REFUSED, "too many headers"), True)
        if method == "CONNECT" or not target.startswith("/"):
            verdict = ma.check_request(self.api, self.entry.id, method=method, target=target, headers=headers,
                                       host_ok=_HOSTS, body=b"")
            assert isinstance(verdict, ma.Refusal)
            return exchange, RefusedRequest(verdict, True)
        body = agent.body(self.request_seconds)
        if body is None:
            return exchange, RefusedRequest(ma.Refusal(413, reasons.BODY_REFUSED, "request body over the "
                                            f"{ma.MAX_REQUEST_BYTES}-byte bound, malformed or too slow"), True)
        exchange["request"]["bodyB64"] = b64(body)
        verdict = ma.check_request(self.api, self.entry.id, method=method, target=target, headers=headers,
                                   host_ok=_HOSTS, body=body)
        if isinstance(verdict, ma.Refusal):
            return exchange, RefusedRequest(verdict)
        return exchange, AdmittedRequest(target, headers, body, verdict)


def refuse(tally: GameTally, agent: AgentConnection, exchange: dict[str, Any], r: ma.Refusal,
           close: bool = False) -> bool:
    """Answer a refusal, count and record it; whether the connection may serve another request."""
    body = refusal_body(r)
    tally.refused(exchange, r, body)
    with contextlib.suppress(h11.LocalProtocolError):  # SDKs retry 429/409/5xx unless told not to
        agent.answer(r.status, body, [("x-should-retry", "false")], close=close)
    return not close
