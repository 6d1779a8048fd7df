"""What the verifier accepts back from a Dask worker: plain data, never a pickle it would run.

Dask's client unpickles what workers send: a task's result (with the default deserializers) and, whatever
the deserializers, a failed task's exception (``distributed``'s ``clean_exception`` calls ``pickle.loads``
on receipt). A hostile worker's pickle runs code in the verifier's process, where the signing key is. So the
client is opened with ``deserializers=["msgpack"]`` (results are plain data, see
:func:`acx_oci.solvers.remote.play_game`), results are checked field by field before they become a
:class:`SolverResult`, and exceptions are unpickled by an allow-list of exception types and the ``tblib``
helpers that rebuild them; anything else becomes a plain ``Exception`` naming what was refused.
"""

from __future__ import annotations

import builtins
import io
import pickle
from typing import Any

from acx_oci.errors import WorkerAnswerRefused
from acx_oci.evaluation.solver import SolverResult

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


def safe_loads(data: bytes | bytearray, **_: Any) -> Any:
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

    def clean_exception(exception: Any, traceback: Any = None, **kwargs: Any) -> Any:
        if isinstance(exception, bytes | bytearray):
            exception = load_exception(exception)
        return original(exception, None if isinstance(traceback, bytes | bytearray) else traceback, **kwargs)

    clean_exception._acx_safe = True  # type: ignore[attr-defined]
    distributed.core.clean_exception = clean_exception
    distributed.client.clean_exception = clean_exception  # type: ignore[attr-defined]


def result_to_wire(res: SolverResult) -> dict[str, Any]:
    return {"outcome": res.outcome, "detail": res.detail, "transcript": res.transcript, "facts": dict(res.facts)}


def result_from_wire(obj: Any) -> SolverResult:
    """A worker's game result, type by type (msgpack gives lists for tuples; bytes stay bytes)."""
    if not isinstance(obj, dict):
        raise WorkerAnswerRefused(f"expected a result object, found {type(obj).__name__}")
    outcome, detail, transcript, facts = (obj.get(k) for k in ("outcome", "detail", "transcript", "facts"))
    if not isinstance(outcome, str) or not isinstance(detail, str):
        raise WorkerAnswerRefused("result outcome and detail must be strings")
    if transcript is not None and not isinstance(transcript, bytes):
        raise WorkerAnswerRefused("result transcript must be bytes")
    if not isinstance(facts, dict) or not all(isinstance(k, str) for k in facts):
        raise WorkerAnswerRefused("result facts must be an object")
    return SolverResult(outcome, detail, transcript, facts)
