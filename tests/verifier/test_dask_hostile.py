"""A hostile Dask worker must not run code in the verifier, where the signing key is.

Dask's client unpickles a task's result (default deserializers) and, whatever the deserializers, a failed
task's exception. Measured before the fix, against a real ``dask scheduler`` and ``dask worker``: a result
whose pickle calls ``exec`` and an exception whose pickle calls ``eval`` each ran in the verifier's process.
Now results come back as plain data (``msgpack`` only) and exceptions through an allow-list.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci.errors import WorkerAnswerRefused
from acx_oci.rating import SolverResult
from acx_oci.services.verifier.executors.dask_cluster import _checked
from acx_oci.services.verifier.executors.wire import load_exception, result_from_wire, safe_loads

MARK = "import os; open({where!r} + '/ran-in-%d' % os.getpid(), 'w').close()"


class EvilResult:
    def __init__(self, where: str) -> None:
        self.where = where

    def __reduce__(self) -> Any:
        return exec, (MARK.format(where=self.where),)


class EvilError(Exception):
    """Round-trips on the worker (so Dask sends it as is) and runs code wherever it is unpickled."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where

    def __reduce__(self) -> Any:
        return eval, (f"(exec({MARK.format(where=self.where)!r}), ValueError('x'))[1]",)


def hostile_result(where: str) -> Any:
    return {"status": "played", "worker": "w", "address": "a", "containment": {}, "result": EvilResult(where)}


def hostile_error(where: str) -> Any:
    raise EvilError(where)


def hostile_event(where: str) -> Any:
    """An event whose payload Dask would pickle (``ToPickle``) on the way to the subscribed verifier."""
    from distributed import get_worker
    from distributed.protocol.serialize import ToPickle

    get_worker().log_event("acx-hostile-topic", {"game": ToPickle(EvilResult(where))})
    return {"sent": True}


def hostile_warning(where: str) -> Any:
    """Dask's client unpickles a ``warn`` event's message and category as they come."""
    from distributed import get_worker

    get_worker().log_event("warn", {"message": pickle.dumps(EvilResult(where))})
    return {"sent": True}


def ran_here(where: Path) -> bool:
    return (where / f"ran-in-{os.getpid()}").exists()


def test_a_pickled_exception_that_runs_code_is_not_unpickled(tmp_path: Path) -> None:
    data = pickle.dumps(EvilError(str(tmp_path)))
    exc = load_exception(data)
    assert not ran_here(tmp_path)
    assert type(exc) is Exception and "not unpickled" in str(exc)
    assert isinstance(load_exception(pickle.dumps(ValueError("fine"))), ValueError)


def test_safe_loads_takes_types_and_data_never_a_call(tmp_path: Path) -> None:
    assert safe_loads(pickle.dumps(dict)) is dict
    assert safe_loads(pickle.dumps({"a": [1, "b", b"c"]})) == {"a": [1, "b", b"c"]}
    assert safe_loads(pickle.dumps(UserWarning)) is UserWarning
    for bad in (EvilResult(str(tmp_path)), EvilError(str(tmp_path)), os.system):
        with pytest.raises(pickle.UnpicklingError):
            safe_loads(pickle.dumps(bad))
    assert not ran_here(tmp_path)


def test_killed_worker_still_comes_back_as_itself() -> None:
    from distributed.protocol import pickle as dpickle
    from distributed.scheduler import KilledWorker

    assert type(load_exception(dpickle.dumps(KilledWorker("k", "w", 1)))) is KilledWorker


@pytest.mark.parametrize("answer", [
    None, [], {"status": "played"},
    {"status": "played", "worker": "w", "address": "a", "containment": {}, "result": {"outcome": 1}},
    {"status": "played", "worker": "w", "address": "a", "containment": {},
     "result": {"outcome": "pass", "detail": "", "transcript": "not bytes", "facts": {}}},
    {"status": "odd", "worker": "w", "address": "a", "containment": {}},
    {"status": "played", "worker": "w", "address": "a", "containment": {"proven": False},
     "result": {"outcome": "pass", "detail": "", "transcript": None, "facts": {}}},
])
def test_malformed_answers_are_refused(answer: Any) -> None:
    with pytest.raises(WorkerAnswerRefused):
        _checked(answer)


def test_a_well_formed_answer_becomes_a_solver_result() -> None:
    res = result_from_wire({"outcome": "pass", "detail": "d", "transcript": b"t", "facts": {"a": [1]}})
    assert res == SolverResult("pass", "d", b"t", {"a": [1]})
    wire = {"outcome": "pass", "detail": "", "transcript": None, "facts": {}}
    assert _checked({"status": "played", "worker": "w", "address": "a", "containment": {"proven": True},
                     "result": wire}) == SolverResult("pass")
    assert _checked({"status": "unproven", "worker": "w", "address": "a", "containment": {"proven": False}}) is None


def test_a_workers_grading_record_is_kept_checked_field_by_field() -> None:
    """How a game's exam was graded (issue 46) comes back from a Dask worker: dropped with every other record
    field, the games of a Dask run carried no ``grading`` and differed from the same games played locally
    (test_dask_executor's local answer). Kept now, but only a known mode and bounded names."""
    grading = {"mode": "in-process", "tamperChecks": ["honeypots", "runnerIntegrity", "observer"]}
    res = result_from_wire({"outcome": "model-fail", "detail": "", "transcript": None,
                            "facts": {"record": {"grading": grading, "containment": {"forged": True}}}})
    assert res.facts == {"record": {"grading": grading}}
    as_sent = {"mode": "out-of-process", "tamperChecks": ("runnerIntegrity", "observer")}  # msgpack's tuples
    res = result_from_wire({"outcome": "model-fail", "detail": "", "transcript": None,
                            "facts": {"record": {"grading": as_sent}}})
    assert res.facts["record"]["grading"] == {"mode": "out-of-process", "tamperChecks": ["runnerIntegrity", "observer"]}
    for bad in ({"mode": "trust-me"}, {"mode": "in-process", "tamperChecks": "all"},
                {"mode": "in-process", "tamperChecks": ["x" * 65]}, {"mode": "in-process", "extra": 1},
                {"tamperChecks": []}, ["in-process"]):
        with pytest.raises(WorkerAnswerRefused, match="grading record"):
            result_from_wire({"outcome": "model-fail", "detail": "", "transcript": None,
                              "facts": {"record": {"grading": bad}}})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pytest.importorskip("distributed")
    from ..support.dask_cluster import start_cluster

    c = start_cluster(tmp_path_factory.mktemp("hostile-cluster"))
    try:
        c.add_worker("w1")
        yield c
    finally:
        c.stop()


@pytest.mark.slow
def test_a_hostile_worker_runs_nothing_in_the_verifier(cluster: Any, tmp_path: Path) -> None:
    from distributed import wait

    from acx_oci.services.verifier import open_executor, parse_executor

    executor = open_executor(parse_executor(cluster.url))
    assert executor is not None
    client = executor.client
    try:
        bad = client.submit(hostile_result, str(tmp_path), pure=False)
        err = client.submit(hostile_error, str(tmp_path), pure=False)
        seen: list[Any] = []
        client.subscribe_topic("acx-hostile-topic", seen.append)
        warn = client.submit(hostile_warning, str(tmp_path), pure=False)
        event = client.submit(hostile_event, str(tmp_path), pure=False)
        with client.as_current():
            wait([bad, err, warn, event])
        assert warn.result() == {"sent": True}
        client.run(lambda: None)  # a round trip after the event: it has reached the client by now
        assert event.result() == {"sent": True} and seen, "the hostile event did not arrive"
        # (the scheduler unpickles a ToPickle payload on its way: it ran there, which is why docs/operations.md says
        # to run the scheduler as a user that cannot read the signing key; the verifier got plain data)
        with pytest.raises(TypeError):  # refused by the msgpack-only deserializers
            bad.result()
        exc = err.exception()
        assert "not unpickled" in str(exc), exc
        assert not ran_here(tmp_path), "a worker's pickle ran in the verifier"
        assert any(p.name.startswith("ran-in-") for p in tmp_path.iterdir()), "the worker did not even try"
    finally:
        executor.close()


def _outward_ip() -> str | None:
    """This machine's address on a non-loopback interface (a UDP connect sends nothing)."""
    import ipaddress
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))
            ip = str(s.getsockname()[0])
        except OSError:
            return None
    return None if ipaddress.ip_address(ip).is_loopback else ip


def test_loopback_worker_addresses() -> None:
    from acx_oci.services.verifier.executors.spec import loopback_worker, parse_executor

    assert loopback_worker("tcp://127.0.0.1:4000") and loopback_worker("tcp://[::1]:4000")
    assert not loopback_worker("tcp://192.0.2.2:4000") and not loopback_worker("tls://127.0.0.1:4000")
    assert not parse_executor("dask://127.0.0.1:1").allow_plaintext
    assert parse_executor("dask://127.0.0.1:1", allow_plaintext=True).allow_plaintext


@pytest.mark.slow
def test_a_loopback_scheduler_with_a_remote_plaintext_worker_is_refused(tmp_path: Path) -> None:
    """``dask://127.0.0.1`` passed the loopback check while the scheduler handed games to a worker it reaches
    over plain TCP on another interface: held-out tasks in the clear after all."""
    from ..support.dask_cluster import start_cluster

    ip = _outward_ip()
    if ip is None:
        pytest.skip("no non-loopback interface")
    from acx_oci.errors import UsageError
    from acx_oci.services.verifier import open_executor, parse_executor

    c = start_cluster(tmp_path / "cluster")
    try:
        c.add_worker("far", extra=("--host", ip))
        with pytest.raises(UsageError, match=f"non-loopback addresses \\(tcp://{ip}:"):
            open_executor(parse_executor(c.url))
        allowed = open_executor(parse_executor(c.url, allow_plaintext=True))
        assert allowed is not None and any(ip in a for a in allowed.workers())
        allowed.close()
    finally:
        c.stop()


def test_malformed_start_events_are_ignored() -> None:
    from acx_oci.services.verifier.executors.dask_cluster import _Tracker

    t = _Tracker("run1", 3, None)
    for msg in ({"run": "run1", "event": "started", "game": "x", "name": "w"},
                {"run": "run1", "event": "started", "game": 99, "name": "w"},
                {"run": "run1", "event": "started", "game": 1, "name": ["w"]},
                {"run": "run1", "event": "started"}):
        t.on_event((0.0, msg))  # raised ValueError / KeyError from the client's event loop before
    assert t.started == {}
    t.on_event((0.0, {"run": "run1", "event": "started", "game": 2, "name": "w" * 500}))
    assert t.started == {2: ["w" * 120]}
