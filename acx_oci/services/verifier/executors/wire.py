"""What the verifier accepts back from a Dask worker: plain data, never a pickle it would run.

Dask's client unpickles what workers send: a task's result (with the default deserializers) and, whatever
the deserializers, a failed task's exception (``distributed``'s ``clean_exception`` calls ``pickle.loads``
on receipt). A hostile worker's pickle runs code in the verifier's process, where the signing key is. So the
client is opened with ``deserializers=["msgpack"]`` (results are plain data, see
:func:`acx_oci.solvers.remote.play_game`), results are checked field by field before they become a
:class:`SolverResult`, and exceptions are unpickled by an allow-list of exception types and the ``tblib``
helpers that rebuild them; anything else becomes a plain ``Exception`` naming what was refused.

A worker's own record fields are dropped, except how its exam was graded (``grading``, :func:`grading_record`:
a known mode and bounded names) and a model game's ``model`` counts (:func:`model_record`):
exactly the proxy's seven fields, the run's declared model, bounded integers, and a ``transcriptDigest``
the verifier recomputes from the model transcript that came back inside the (bounded) game transcript.
"""

from __future__ import annotations

import builtins
import io
import json
import pickle
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import WorkerAnswerRefused
from acx_oci.model import CERTIFIED_PASS, MODEL_FAIL
from acx_oci.model import grading as gm
from acx_oci.model import modelapi as ma
from acx_oci.rating import SolverResult

CLIENT_DESERIALIZERS = ["msgpack"]
_ALLOWED = frozenset({
    ("distributed.scheduler", "KilledWorker"),
    ("distributed.comm.core", "CommClosedError"),
    ("distributed.client", "FutureCancelledError"),
    ("tblib.pickling_support", "unpickle_exception"),
    ("tblib.pickling_support", "unpickle_exception_with_attrs"),
    ("tblib.pickling_support", "unpickle_traceback"),
    ("tblib", "Frame"),
    ("tblib", "Code"),
    ("tblib", "Traceback"),
})


_DATA_TYPES = frozenset({"dict", "list", "tuple", "set", "frozenset", "str", "bytes", "bytearray", "int", "float",
                         "complex", "bool"})


class _ExceptionUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        found = getattr(builtins, name, None) if module == "builtins" else None
        if isinstance(found, type) and (issubclass(found, Exception) or name in _DATA_TYPES):
            return found  # exception and warning classes, plain data types: never a function such as exec
        raise pickle.UnpicklingError(f"{module}.{name} is not an allowed type")


def safe_loads(data: bytes | bytearray, **_: object) -> Any:
    """``pickle.loads`` restricted to the allow-list (what ``distributed``'s client unpickles from workers: a
    result's type, a warning and its category, an RPC error); anything else raises ``UnpicklingError``."""
    return _ExceptionUnpickler(io.BytesIO(bytes(data))).load()


def load_exception(data: bytes | bytearray) -> BaseException:
    """A worker's pickled exception, if it is built only from allowed types; else a plain one saying so."""
    try:
        exc = safe_loads(data)
    except Exception as err:  # whatever a hostile pickle makes the unpickler raise
        return Exception(f"a worker sent an exception that was not unpickled ({str(err)[:120]})")
    return exc if isinstance(exc, BaseException) else Exception("a worker sent a non-exception as its error")


def _handle_warn(event: Any) -> None:
    """A ``warn`` event from a worker, shown only if it unpickles from the allow-list (Dask's own handler
    unpickles message and category as they come)."""
    import warnings

    payload = event[1] if isinstance(event, tuple) and len(event) == 2 else event
    try:
        message = safe_loads(payload["message"])
        category = safe_loads(payload["category"]) if "category" in payload else None
    except Exception:
        return
    if isinstance(category, type) and issubclass(category, Warning) and isinstance(message, str | Warning):
        warnings.warn(message, category=category, stacklevel=1)


def install_safe_exceptions() -> None:
    """Route every unpickling ``distributed``'s client does of what workers send through the allow-list:
    exceptions (client and rpc replies, :func:`load_exception`), a result's reported type, ``client.run``'s
    pickled RPC errors and ``warn`` events (:func:`safe_loads`).

    Process-wide and idempotent; tracebacks from workers are dropped, not unpickled."""
    import distributed.client
    import distributed.core

    original = distributed.core.clean_exception
    if getattr(original, "_acx_safe", False):
        return
    distributed.client.loads = safe_loads  # type: ignore[attr-defined,assignment]
    distributed.client.Client._default_event_handlers = {
        **distributed.client.Client._default_event_handlers, "warn": _handle_warn}

    def clean_exception(exception: Any, traceback: Any = None, **kwargs: object) -> Any:
        if isinstance(exception, bytes | bytearray):
            exception = load_exception(exception)
        return original(exception, None if isinstance(traceback, bytes | bytearray) else traceback, **kwargs)

    clean_exception._acx_safe = True  # type: ignore[attr-defined]
    distributed.core.clean_exception = clean_exception
    distributed.client.clean_exception = clean_exception  # type: ignore[attr-defined]


#: A game transcript larger than this is refused (the proxy keeps at most 96 MiB of base64 bodies per game).
MAX_WIRE_TRANSCRIPT = 256 * 1024 * 1024
_MODEL_COUNTS = {"requests": ma.MAX_EXCHANGES, "refused": 10**9, "inputTokens": 10**12, "outputTokens": 10**12}
_MODEL_FIELDS = frozenset({"id", "api", "transcriptDigest", *_MODEL_COUNTS})


def result_to_wire(res: SolverResult) -> dict[str, Any]:
    """A result as plain data (what :func:`result_from_wire` reads back)."""
    return {"outcome": res.outcome, "detail": res.detail, "transcript": res.transcript, "facts": dict(res.facts)}


def model_record(obj: Any, model: ma.DeclaredModel, transcript: bytes | None) -> dict[str, Any]:
    """A worker's ``model`` record field, checked against the run's declared model and the transcript it
    came with (its ``model`` part must digest to ``transcriptDigest``); else :class:`WorkerAnswerRefused`."""
    if not isinstance(obj, dict) or set(obj) != _MODEL_FIELDS:
        raise WorkerAnswerRefused(f"the model record must have exactly the fields {sorted(_MODEL_FIELDS)}")
    if (obj["api"], obj["id"]) != (model.api, model.id):
        raise WorkerAnswerRefused("the model record names another model than the ROM's")
    for name, bound in _MODEL_COUNTS.items():
        n = obj[name]
        if type(n) is not int or not 0 <= n <= bound:
            raise WorkerAnswerRefused(f"the model record's {name} must be an integer in [0, {bound}]")
    try:
        doc = json.loads(transcript) if transcript is not None else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        doc = None
    part = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(part, dict) or obj["transcriptDigest"] != sha256_digest(canonical(part)):
        raise WorkerAnswerRefused("the model record's transcriptDigest is not the digest of the model transcript "
                                  "that came back")
    return {k: obj[k] for k in ("id", "api", "requests", "refused", "inputTokens", "outputTokens",
                                "transcriptDigest")}


_GRADING_FIELDS = frozenset({"mode", "tamperChecks", "relaxations"})


def grading_record(obj: Any) -> dict[str, Any]:
    """A worker's ``grading`` record field (how its game's exam was graded, issue 46), checked field by field:
    a known mode, and at most 16 short names of tamper checks and relaxations (msgpack may give tuples)."""
    if not isinstance(obj, dict) or not set(obj) <= _GRADING_FIELDS or "mode" not in obj:
        raise WorkerAnswerRefused(f"the grading record must have a mode and only the fields {sorted(_GRADING_FIELDS)}")
    if obj["mode"] not in (gm.IN_PROCESS, gm.OUT_OF_PROCESS):
        raise WorkerAnswerRefused(f"the grading record's mode must be {gm.IN_PROCESS} or {gm.OUT_OF_PROCESS}")
    out: dict[str, Any] = {"mode": obj["mode"]}
    for key in ("tamperChecks", "relaxations"):
        names = obj.get(key, [])
        if not isinstance(names, list | tuple) or len(names) > 16 or not all(
                isinstance(n, str) and 0 < len(n) <= 64 for n in names):
            raise WorkerAnswerRefused(f"the grading record's {key} must be at most 16 names")
        if key in obj:
            out[key] = list(names)
    return out


def result_from_wire(obj: Any, model: ma.DeclaredModel | None = None) -> SolverResult:
    """A worker's game result, type by type (msgpack gives lists for tuples; bytes stay bytes).

    The worker's ``facts["record"]`` is dropped but for two fields: ``grading`` once :func:`grading_record`
    accepts it, and for a ROM that calls a model (``model``) its ``model`` field once :func:`model_record`
    accepts it (a rated model game without one is refused)."""
    if not isinstance(obj, dict):
        raise WorkerAnswerRefused(f"expected a result object, found {type(obj).__name__}")
    outcome, detail, transcript, facts = (obj.get(k) for k in ("outcome", "detail", "transcript", "facts"))
    if not isinstance(outcome, str) or not isinstance(detail, str):
        raise WorkerAnswerRefused("result outcome and detail must be strings")
    if transcript is not None and not isinstance(transcript, bytes):
        raise WorkerAnswerRefused("result transcript must be bytes")
    if transcript is not None and len(transcript) > MAX_WIRE_TRANSCRIPT:
        raise WorkerAnswerRefused(f"result transcript over {MAX_WIRE_TRANSCRIPT} bytes")
    if not isinstance(facts, dict) or not all(isinstance(k, str) for k in facts):
        raise WorkerAnswerRefused("result facts must be an object")
    record = facts.get("record")
    facts = {k: v for k, v in facts.items() if k != "record"}
    if model is not None and isinstance(record, dict) and "model" in record:
        facts["record"] = {"model": model_record(record["model"], model, transcript)}
    elif model is not None and outcome in (CERTIFIED_PASS, MODEL_FAIL):
        raise WorkerAnswerRefused("a model game was reported rated without its model record")
    if isinstance(record, dict) and "grading" in record:  # how the exam was graded: the record must say it
        facts["record"] = {**facts.get("record", {}), "grading": grading_record(record["grading"])}
    return SolverResult(outcome, detail, transcript, facts)
