"""One game's accounting: the budget its requests are counted against and the exchanges its transcript keeps.

Every piece of a game's proxy shares the one lock held here, so a count and the exchange it belongs to change
together (the accept loop's connection set is guarded by it too)."""

from __future__ import annotations

import threading
import time
from typing import Any

from acx_oci import reasons
from acx_oci.crypto import canonical, sha256_digest
from acx_oci.egress.recording import ModelRun, b64
from acx_oci.model import modelapi as ma


class GameTally:
    """The counters of the signed record and the transcript to seal, for one game's model traffic."""

    def __init__(self, entry: ma.ModelEntry, replay: bool) -> None:
        self.entry, self.api, self.replay = entry, ma.APIS[entry.api], replay
        self.budget = ma.Budget(entry.max_requests_per_game, entry.max_tokens_per_game)
        self.exchanges: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.probes = 0  # the verifier's own requests so far (see :class:`~acx_oci.egress.failure.FailureProbe`)
        self._t0 = time.monotonic()
        self._kept_refused = 0

    def ms(self) -> int:
        """Milliseconds since the game's proxy was made: the transcript's clock."""
        return int((time.monotonic() - self._t0) * 1000)

    def exchange(self, method: str, target: str, headers: list[tuple[str, str]]) -> dict[str, Any]:
        """A new exchange for a request just read (numbered again when it is kept)."""
        return {"n": len(self.exchanges) + 1, "ms": self.ms(),
                "request": {"method": method, "target": target[:4096], "headers": headers}}

    def refused(self, exchange: dict[str, Any], r: ma.Refusal, body: bytes) -> None:
        """Count a refusal (a divergent replay too) and keep its exchange, if within the bounds."""
        with self.lock:
            self.budget.refuse(r.code)
            if r.code == reasons.REPLAY_DIVERGENT:
                self.budget.divergent += 1
            exchange.update(refused=r.code, response={"status": r.status, "headers": [], "bodyB64": b64(body)})
            self._log(exchange)

    def admit(self) -> ma.Refusal | None:
        """Count one more forwarded request, or the refusal of a spent budget (then nothing is counted)."""
        with self.lock:
            spent = self.budget.exhausted()
            if spent is None:
                self.budget.requests += 1
            return spent

    def usage(self, status: int, body: bytes, streamed: bool, sent: bytes) -> tuple[int, int]:
        """The tokens an answer used (none for an error answer)."""
        return ma.usage_of(self.api, body, streamed, sent) if status < 400 else (0, 0)

    def provider_failed(self) -> None:
        """A failure found to be the provider's: the game ends a lane-error."""
        with self.lock:
            self.budget.upstream_failures += 1

    def cut(self, exchange: dict[str, Any], failed: bool, error: str, status: int, headers: list[tuple[str, str]],
            body: bytes, sent: bytes, streamed: bool) -> None:
        """Keep an exchange whose answer was cut (a deadline, a transport error, an oversized answer): what
        arrived of it, the tokens that already count, and whether the provider failed."""
        with self.lock:
            if failed:
                self.budget.upstream_failures += 1
            exchange["upstreamError"] = error
            if status:
                exchange["response"] = {"status": status, "headers": headers, "bodyB64": b64(body)}
                inp, outp = self.usage(status, body, streamed, sent)
                self.budget.input_tokens += inp
                self.budget.output_tokens += outp
            self._log(exchange)

    def answered(self, exchange: dict[str, Any], status: int, headers: list[tuple[str, str]], body: bytes,
                 streamed: bool, sent: bytes) -> None:
        """Count a whole answer's tokens and keep its exchange."""
        inp, out = self.usage(status, body, streamed, sent)
        with self.lock:
            self.budget.input_tokens += inp
            self.budget.output_tokens += out
            exchange.update(response={"status": status, "headers": headers, "bodyB64": b64(body)},
                            streamed=streamed, usage={"input": inp, "output": out}, doneMs=self.ms())
            self._log(exchange)

    def probed(self, probe: dict[str, Any]) -> None:
        """Keep a probe: bounded by its own count; not the agent's request, not in its counts."""
        with self.lock:
            self.exchanges.append(probe)

    def result(self) -> ModelRun:
        """The record fields, the transcript and the two game-ending conditions so far."""
        with self.lock:
            exchanges = list(self.exchanges)
            b = self.budget
            transcript = {"model": {"id": self.entry.id, "api": self.entry.api},
                          "replay": self.replay, "exchanges": exchanges}
            record = {"id": self.entry.id, "api": self.entry.api, "requests": b.requests, "refused": b.refused,
                      "inputTokens": b.input_tokens, "outputTokens": b.output_tokens,
                      "transcriptDigest": sha256_digest(canonical(transcript))}
            return ModelRun(record, transcript, b.upstream_failures > 0, b.divergent > 0)

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
