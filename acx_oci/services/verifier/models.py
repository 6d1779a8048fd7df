"""The verifier's models file and what a run of a model-calling ROM takes from it.

The verifier, not the author, says where a model lives, which key pays for it and what its training
cutoff is: a ROM names only ``runtime.model {api, id}``. Keys are read where the games are played, once,
and handed to the proxy (``acx_oci.egress``) — never to a sandbox, a record or a message: here for local
games; for ``--executor`` (Dask) by each worker from its own environment or file (``apiKeyEnv`` names the
variable, ``apiKeyFile`` the path, on the worker), so the key never crosses the network.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acx_oci import reasons
from acx_oci.egress import ModelSetup, model_key
from acx_oci.errors import UsageError
from acx_oci.files import load_yaml_or_json_file
from acx_oci.jsonio import validate
from acx_oci.model import modelapi as ma

__all__ = ["MODEL_UNAVAILABLE", "Models", "credential_fields", "load_models", "model_key", "select", "setup",
           "setup_for"]

MODEL_UNAVAILABLE = reasons.MODEL_UNAVAILABLE

Models = dict[tuple[str, str], ma.ModelEntry]


def load_models(path: Path) -> Models:
    """Read and validate ``models.yaml`` (or JSON); one line naming the problem otherwise (exit 2)."""
    doc = load_yaml_or_json_file(path, "models file")
    validate(doc, "models.schema.json", f"models file ({path})")
    try:
        return ma.parse_models(doc)
    except ValueError as exc:
        raise UsageError(f"models file ({path}): {exc}") from None


def select(models: Models | None, declared: ma.DeclaredModel | None) -> tuple[ma.ModelEntry | None, str | None]:
    """The entry for the ROM's declared model, or the NOT ISSUED reason when the verifier has none."""
    if declared is None:
        return None, None
    entry = (models or {}).get((declared.api, declared.id))
    if entry is None:
        where = "no --models file was given" if models is None else "the models file has no entry for it"
        return None, (f"{MODEL_UNAVAILABLE}: the ROM calls model {declared.id} over {declared.api}, and {where}; "
                      "nothing was played")
    return entry, None


def setup(entry: ma.ModelEntry | None, executor: Any = None) -> ModelSetup | None:
    """The run's model egress. Local games: the key read now, so a missing one is bad input before any
    attempt. With ``executor`` (a Dask cluster) the verifier reads no key: the entry's public fields and the
    key's *name* travel, and each worker reads its own key before it proves containment (a worker without
    one proves nothing, so it plays nothing)."""
    if entry is None:
        return None
    if executor is not None:
        return ModelSetup(entry)
    return ModelSetup(entry, model_key(entry))


def setup_for(models: Models | None, runtime: dict[str, Any] | None, executor: Any = None) -> ModelSetup | None:
    """The egress of another ROM of the same run (a regression baseline): its own declared model's entry."""
    entry, problem = select(models, ma.declared_model(runtime))
    if problem:
        raise UsageError(f"baseline: {problem}")
    return setup(entry, executor)


def credential_fields(entry: ma.ModelEntry | None, predicates: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What the credential says of the model: which one, the provider's data terms, the run's totals."""
    if entry is None:
        return {}
    totals = {"requests": 0, "refused": 0, "inputTokens": 0, "outputTokens": 0}
    for p in predicates:
        m = p.get("model") or {}
        for k in totals:
            totals[k] += int(m.get(k) or 0)
    return {"acx:model": {"id": entry.id, "api": entry.api}, "acx:modelUsage": totals,
            "acx:modelDataUse": entry.data_use}
