"""Answering from a recording: in replay mode nothing goes upstream, and a request the recording lacks is a
divergence (409, the game a lane-error ``replay_divergent``)."""

from __future__ import annotations

import base64
from typing import Any

from acx_oci import reasons
from acx_oci.egress.framing import AgentConnection
from acx_oci.egress.policy import refuse
from acx_oci.egress.recording import RecordedAnswers
from acx_oci.egress.tally import GameTally
from acx_oci.model import modelapi as ma


def answer_from_recording(tally: GameTally, replay: RecordedAnswers, agent: AgentConnection,
                          exchange: dict[str, Any], target: str, body: bytes) -> bool:
    """The recorded answer to this request, whole, accounted as the original was; else a refusal."""
    with tally.lock:
        answer = replay.take(ma.request_key(target, body))
    if answer is None:
        return refuse(tally, agent, exchange, ma.Refusal(
            409, reasons.REPLAY_DIVERGENT, "the recording holds no answer for this request"))
    data = base64.b64decode(str(answer.get("bodyB64") or ""))
    hs = [(str(n), str(v)) for n, v in answer.get("headers") or [] if str(n) in ma.RESPONSE_HEADERS]
    streamed = any(n == "content-type" and "text/event-stream" in v for n, v in hs)
    agent.answer(int(answer.get("status") or 502), data, hs)
    tally.answered(exchange, int(answer.get("status") or 502), hs, data, streamed, body)
    return True
