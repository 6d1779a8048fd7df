"""What a run of a model-calling ROM needs per game: the verifier's model entry, its key, and (for a
replay) the recording each game answers from. The key stays on the verifier's side of the socket.

:func:`model_key` reads the key where it is played: on the verifier for local games, and on each Dask
worker for a cluster run (the worker's own environment or file; the key never crosses the network).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.egress.proxy import ModelProxy
from acx_oci.egress.recording import RecordedAnswers
from acx_oci.errors import UsageError
from acx_oci.files import read_bytes
from acx_oci.model import modelapi as ma

MAX_KEY_BYTES = 16 * 1024


def model_key(entry: ma.ModelEntry) -> str:
    """The key that pays for ``entry``: from its environment variable or file here, checked printable ASCII
    (a :class:`UsageError` naming the variable or file, never a value, when it is missing or unusable)."""
    if entry.api_key_env:
        value = os.environ.get(entry.api_key_env)
        if not value:
            raise UsageError(f"models file: model {entry.id} names apiKeyEnv {entry.api_key_env}, which is not set")
    else:
        assert entry.api_key_file
        value = read_bytes(entry.api_key_file, f"model {entry.id} apiKeyFile", MAX_KEY_BYTES).decode(
            "utf-8", "replace").strip()
    if not value or not value.isprintable() or not value.isascii():
        raise UsageError(f"models file: the key for model {entry.id} is empty or not printable ASCII")
    return value


@dataclass(frozen=True)
class ModelSetup:
    """One run's model egress. ``key`` is None in a replay (which never calls upstream) and on the verifier
    of a Dask run (each worker reads its own key and builds its own setup: :mod:`acx_oci.solvers.remote`)."""

    entry: ma.ModelEntry
    key: str | None = field(default=None, repr=False)
    replays: Mapping[str, dict[str, Any]] | None = field(default=None, repr=False)  # task id -> transcript

    @property
    def declared(self) -> ma.DeclaredModel:
        """The model the games call (the ROM's declaration, matched to this entry)."""
        return ma.DeclaredModel(self.entry.api, self.entry.id)

    def proxy(self, socket_path: Path, owner: tuple[int, int] | None, task_id: str,
              game_seconds: float | None = None) -> ModelProxy:
        """A started proxy for one game; in a replay, one that answers from that game's recording only.
        ``game_seconds`` (the agent's time limit) bounds each upstream request, so the proxy can still say
        whose failure a stalled provider was before the game ends."""
        replay = None
        if self.replays is not None:
            replay = RecordedAnswers.from_transcript(self.replays.get(task_id) or {})
        return ModelProxy(self.entry, self.key, socket_path, replay=replay, owner=owner,
                          game_seconds=game_seconds).start()
