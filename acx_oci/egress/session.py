"""What a run of a model-calling ROM needs per game: the verifier's model entry, its key, and (for a
replay) the recording each game answers from. The key stays on the verifier's side of the socket."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.egress.proxy import ModelProxy
from acx_oci.egress.recording import Replay
from acx_oci.model import modelapi as ma


@dataclass(frozen=True)
class ModelSetup:
    """One run's model egress: ``key`` is None only in a replay, which never calls upstream."""

    entry: ma.ModelEntry
    key: str | None = field(default=None, repr=False)
    replays: Mapping[str, dict[str, Any]] | None = field(default=None, repr=False)  # task id -> transcript

    @property
    def declared(self) -> ma.DeclaredModel:
        """The model the games call (the ROM's declaration, matched to this entry)."""
        return ma.DeclaredModel(self.entry.api, self.entry.id)

    def proxy(self, socket_path: Path, owner: tuple[int, int] | None, task_id: str) -> ModelProxy:
        """A started proxy for one game; in a replay, one that answers from that game's recording only."""
        replay = None
        if self.replays is not None:
            replay = Replay.from_transcript(self.replays.get(task_id) or {})
        return ModelProxy(self.entry, self.key, socket_path, replay=replay, owner=owner).start()
