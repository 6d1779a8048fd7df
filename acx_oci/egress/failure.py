"""Whose failure an answer that went wrong was: the provider's (the game a lane-error) or the agent's doing.

The agent chooses its requests: one asking for a generation longer than the deadline, or a crafted input the
provider answers 5xx, would let it turn any game it is losing into an unrated lane-error. So the verifier asks
the provider a request of its own (the smallest valid one, recorded as a ``probe``): the provider failed only
if that fails too."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx

from acx_oci.egress.recording import b64
from acx_oci.egress.tally import GameTally
from acx_oci.egress.upstream import TrackingBackend
from acx_oci.model import modelapi as ma

MAX_PROBES = 8  # the verifier's own requests per game, each asking whether a failure was the provider's
PROBE_SECONDS = 30.0


class FailureProbe:
    """Asks the provider, with the verifier's own request, whether a failure was its own (see the module)."""

    def __init__(self, tally: GameTally, key: str | None, client: httpx.Client, backend: TrackingBackend,
                 stopping: threading.Event, request_seconds: float, game_end: float | None) -> None:
        self.tally, self.entry, self.api = tally, tally.entry, tally.api
        self._key, self._client, self._backend = key, client, backend
        self._stopping, self.request_seconds, self.game_end = stopping, request_seconds, game_end

    def provider_failed(self, status: int) -> bool:
        """Whether an answer that went wrong (a 5xx, a timeout, a cut or oversized answer) is the provider's
        failure. Never during a stop (the game is over) nor in a replay, at most :data:`MAX_PROBES` per game."""
        if self._stopping.is_set() or self.tally.replay:
            return False
        with self.tally.lock:
            if self.tally.budget.upstream_failures:
                return True  # already the examiner's: no need to ask again
            if self.tally.probes >= MAX_PROBES:
                return False
            self.tally.probes += 1
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
        url = ma.upstream_url(self.entry, self.api)
        probe: dict[str, Any] = {"ms": self.tally.ms(), "probe": True, "cause": status or "transport",
                                 "forwarded": {"url": url, "bodyB64": b64(body)}}
        left = self.game_end - time.monotonic() if self.game_end is not None else PROBE_SECONDS
        seconds = max(1.0, min(self.request_seconds, PROBE_SECONDS, left))
        with self._backend.deadline(seconds) as passed:  # whole-request: a trickling answer is cut too
            try:
                r = self._client.post(url, content=body, headers=headers,
                                      timeout=httpx.Timeout(seconds, connect=10.0))
                probe["response"] = {"status": r.status_code}
                failed = r.status_code >= 500
            except httpx.HTTPError as exc:
                probe["upstreamError"] = "deadline" if passed.is_set() else type(exc).__name__
                failed = True
        self.tally.probed(probe)  # bounded by MAX_PROBES
        return failed and not self._stopping.is_set()

    def upstream_seconds(self) -> float:
        """The whole-request deadline of the next forwarded request: ``request_seconds``, and within the game's
        time limit all but a probe's share of what is left of it (a sixth, at most PROBE_SECONDS), so that a
        provider cut at its deadline is probed, and found failed, before the game ends — a provider that
        stalls is a lane error, never the agent's timeout."""
        if self.game_end is None:
            return self.request_seconds
        left = self.game_end - time.monotonic()
        return max(1.0, min(self.request_seconds, left - min(PROBE_SECONDS, left / 6)))
