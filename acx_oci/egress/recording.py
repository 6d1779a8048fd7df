"""What one game's proxy leaves behind: the run's counters and transcript, and the recording a replay answers
from (matched by :func:`acx_oci.model.modelapi.request_key`, each answer used once, in order)."""

from __future__ import annotations

import base64
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from acx_oci.model import modelapi as ma


def b64(data: bytes) -> str:
    """Bodies are recorded as base64: exact bytes inside a JSON transcript."""
    return base64.b64encode(data).decode("ascii")


@dataclass
class RecordedAnswers:
    """Recorded answers, matched by :func:`acx_oci.model.modelapi.request_key`, each used once, in order."""

    answers: dict[str, deque[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def from_transcript(cls, transcript: dict[str, Any]) -> RecordedAnswers:
        """The forwarded exchanges of one game's model transcript (refusals are re-derived, not replayed)."""
        out = cls()
        for ex in transcript.get("exchanges") or []:
            if not isinstance(ex, dict) or ex.get("refused") or ex.get("probe") or not isinstance(ex.get("response"),
                                                                                                dict):
                continue
            req = ex.get("request") or {}
            key = ma.request_key(str(req.get("target")), base64.b64decode(str(req.get("bodyB64") or "")))
            out.answers.setdefault(key, deque()).append(ex["response"])
        return out

    def take(self, key: str) -> dict[str, Any] | None:
        """The next recorded answer for this request, or None (the run diverged)."""
        q = self.answers.get(key)
        return q.popleft() if q else None


@dataclass(frozen=True)
class ModelRun:
    """What one game's proxy saw: the counters for the signed record and the transcript to seal."""

    record: dict[str, Any]
    transcript: dict[str, Any]
    upstream_failed: bool
    divergent: bool
