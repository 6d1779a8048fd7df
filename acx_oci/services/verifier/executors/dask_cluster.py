"""The verifier's side of a Dask run: place each drawn game on a worker, get it back, hand it to the engine.

Only task material, the ROM (digest-checked on the worker) and sandbox settings travel; results come back
unsigned and the engine rates them in draw order, so a cluster changes nothing that is rated. Each game's
record carries the containment proof and the name of the worker that played it (``containment``,
``executor``: per-run fields). A worker whose probes fail is excluded (its games re-queued with a worker
restriction that leaves it out); with no healthy worker left a game ends ``withheld``. A game whose worker
is lost mid-game is replayed elsewhere (Dask reschedules it; a ``KilledWorker`` is resubmitted) at most
:data:`MAX_ATTEMPTS` times, and the record names the workers it was lost on; a game that cannot be placed at
all (no worker for :data:`PLACEMENT_TIMEOUT` seconds) ends ``lane-error``, never a model fail.

A ROM that calls a model plays here too: the bundle carries the models-file entry (public fields, the key's
variable name or file path — never the key), each worker reads its own key and runs each game's proxy beside
the game; a worker without the key proves nothing, so it is excluded like any unproven one (its name and the
missing variable are in the records' ``executor.unprovenOn`` and, when no worker is left, the withheld
games' reason). Each game's ``model`` record field comes back checked (:func:`~.wire.model_record`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from typing import Any
from urllib.parse import urlsplit

from distributed import Client, Future, wait
from distributed.security import Security

from acx_oci.egress import ModelSetup
from acx_oci.errors import RegistryError, UsageError, WorkerAnswerRefused
from acx_oci.model import LANE_ERROR, WITHHELD, runtime_digest, runtime_of
from acx_oci.model import modelapi as ma
from acx_oci.oci import StoreOptions
from acx_oci.rating import SolverResult
from acx_oci.services.artifacts import LoadedCartridge, rom_files
from acx_oci.services.verifier.executors.spec import ExecutorSpec, loopback_worker
from acx_oci.services.verifier.executors.wire import CLIENT_DESERIALIZERS, install_safe_exceptions, result_from_wire
from acx_oci.solvers import EVENT_TOPIC, UNPROVEN, RomBundle, play_game, rom_descriptor, sandbox_version

MAX_ATTEMPTS = 3  # starts of one game (a lost worker costs one); then lane-error
PLACEMENT_TIMEOUT = 60.0  # seconds without any worker before waiting games end lane-error
Progress = Callable[[dict[str, Any]], None]


class DaskExecutor:
    """A connected client of the verifier's scheduler (TLS with the verifier's certificate, or loopback TCP)."""

    def __init__(self, spec: ExecutorSpec, timeout: float = 10.0) -> None:
        security: Security | None = None
        if spec.tls:
            given = {k: v for k, v in (("tls_ca_file", spec.ca_file), ("tls_client_cert", spec.cert_file),
                                       ("tls_client_key", spec.key_file)) if v}
            security = Security(require_encryption=True, **given)
            if not (getattr(security, "tls_ca_file", None) and getattr(security, "tls_client_cert", None)):
                raise UsageError(f"--executor {spec.address}: TLS needs the verifier's CA and certificate "
                                 "(--executor-ca, --executor-cert, --executor-key, or Dask's distributed.comm.tls)")
        try:
            install_safe_exceptions()
            self.client = Client(spec.address, security=security, timeout=timeout, set_as_default=False,
                                 deserializers=CLIENT_DESERIALIZERS)
        except (OSError, TimeoutError) as exc:
            raise RegistryError(f"--executor: no Dask scheduler answers at {spec.address} "
                                f"({type(exc).__name__})") from None
        self.spec = spec
        # dask:// to a loopback scheduler without --allow-plaintext-executor: games go to loopback workers
        # only (a scheduler listening on every interface has remote workers it reaches over plain TCP)
        self.confined = spec.address is not None and spec.address.startswith("tcp://") and not spec.allow_plaintext
        self.on_progress: Progress | None = None
        remote = [a for a in self.workers() if not self.eligible(a)]
        if remote:
            self.client.close()
            raise UsageError(f"--executor {spec.address}: the scheduler has workers reached over plain TCP at "
                             f"non-loopback addresses ({', '.join(sorted(remote)[:3])}): held-out tasks would cross "
                             "the network in the clear; use dask+tls://, or --allow-plaintext-executor on a network "
                             "you trust")
        self.sandbox_versions()  # workers that cannot run acx-oci fail here, before any attempt is logged

    def sandbox_versions(self) -> set[str]:
        """``bwrap --version`` on the workers now (asking each one also shows it can import acx-oci)."""
        try:
            found = self.client.run(sandbox_version)
        except Exception as exc:  # whatever a worker raised (ModuleNotFoundError: acx-oci not installed there)
            raise UsageError(f"--executor {self.spec.address}: a worker cannot run acx-oci "
                             f"({type(exc).__name__}: {str(exc)[:120]}); install acx-oci[dask] on every "
                             "worker") from None
        return {str(v)[:120] for v in found.values() if v}  # a worker's text goes into the signed descriptor

    def workers(self) -> list[str]:
        """The addresses of the scheduler's workers now."""
        return list(self.client.scheduler_info()["workers"])

    def eligible(self, address: str) -> bool:
        """Whether games may be placed on this worker (see ``confined``)."""
        return not self.confined or loopback_worker(address)

    def threads(self) -> int:
        """Game slots on the cluster now (the default ``--jobs`` with a Dask executor)."""
        return sum(int(w.get("nthreads", 1)) for w in self.client.scheduler_info()["workers"].values()) or 1

    def rom_solver(self, cart: LoadedCartridge, store: Any, image: str | None, secret_paths: tuple[Any, ...],
                   store_options: StoreOptions, setup: ModelSetup | None = None) -> DaskSolver:
        """The ROM solver for this cluster; ``setup`` (a model ROM's egress) sends its entry, never a key."""
        runtime = runtime_of(cart.rom)
        assert runtime is not None
        declared = ma.declared_model(runtime)
        if declared is not None and (setup is None or setup.declared != declared):
            raise UsageError("this ROM calls a model: the run needs the verifier's models entry for "
                             f"{declared.api}:{declared.id} (--models)")
        if setup is not None and setup.replays is not None:
            raise UsageError("attest: a model replay plays on local games only (drop --executor)")
        bundle = RomBundle.build(cart.rom_bytes, cart.rom_digest, rom_files(store, cart), secret_paths=secret_paths,
                                 image=image, store_options=store_options,
                                 model=setup.entry if setup is not None else None)
        return DaskSolver(self, bundle, runtime)

    def close(self) -> None:
        """Close the Dask client (the cluster itself keeps running)."""
        self.client.close()


class _Tracker:
    """Who is playing what, from the workers' start events and the results (thread-safe: events arrive on
    the client's own thread)."""

    def __init__(self, run: str, total: int, notify: Progress | None) -> None:
        self.run, self.total, self.notify = run, total, notify
        self.lock = threading.Lock()
        self.started: dict[int, list[str]] = {}  # game -> worker names that started it, in order
        self.running: dict[str, set[int]] = {}
        self.done: dict[str, int] = {}
        self.finished: set[int] = set()
        self.unhealthy: set[str] = set()

    def on_event(self, event: Any) -> None:
        msg = event[1] if isinstance(event, tuple) else event
        if not isinstance(msg, dict) or msg.get("run") != self.run or msg.get("event") != "started":
            return
        game, name = msg.get("game"), msg.get("name")
        if not isinstance(game, int) or not 1 <= game <= self.total or not isinstance(name, str):
            return  # not an event our play_game sends (a worker's own text: never trusted for shape)
        name = name[:120]
        with self.lock:
            if game in self.finished:
                return
            self.started.setdefault(game, []).append(name)
            for games in self.running.values():
                games.discard(game)  # one game runs in one place at a time: an earlier start was lost
            self.running.setdefault(name, set()).add(game)
        self.report()

    def finish(self, game: int, name: str | None) -> list[str]:
        """Mark a game done; the workers it was lost on before ``name`` finished it."""
        with self.lock:
            self.finished.add(game)
            for games in self.running.values():
                games.discard(game)
            earlier = list(self.started.get(game, []))
            if name is not None:
                self.done[name] = self.done.get(name, 0) + 1
                if name in earlier:
                    earlier.reverse()
                    earlier.remove(name)  # the last start on the finishing worker is this attempt
                    earlier.reverse()
        self.report()
        return earlier

    def mark_unhealthy(self, name: str) -> None:
        with self.lock:
            self.unhealthy.add(name)
        self.report()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            names = sorted(set(self.running) | set(self.done) | self.unhealthy)
            running = sum(len(g) for g in self.running.values())
            done = len(self.finished)
            workers = {n: {"done": self.done.get(n, 0), "running": len(self.running.get(n, ())),
                           "healthy": n not in self.unhealthy} for n in names}
        return {"event": "progress", "executor": "dask", "total": self.total, "done": done, "running": running,
                "queued": max(0, self.total - done - running), "workers": workers}

    def report(self) -> None:
        if self.notify is not None:
            self.notify(self.snapshot())


class DaskSolver:
    """The ROM solver on a cluster: the same descriptor and records as the local one, games placed by Dask."""

    def __init__(self, executor: DaskExecutor, bundle: RomBundle, runtime: dict[str, Any]) -> None:
        self.executor, self.bundle, self.runtime = executor, bundle, runtime
        versions = executor.sandbox_versions()
        self._version = "; ".join(sorted(versions)) if versions else None

    def descriptor(self) -> dict[str, Any]:
        """The solver descriptor, with the workers' sandbox versions, like the local ROM solver's."""
        return rom_descriptor(self.runtime, self._version)

    def record_fields(self) -> dict[str, Any]:
        """The runtime digest only: each worker proves its own containment, so that goes per game."""
        return {"runtimeDigest": runtime_digest(self.runtime)}  # containment: per game, the worker's own

    def solve(self, task: dict[str, Any], rom_digest: str) -> SolverResult:
        """Play one task on the cluster (``solve_all`` of one)."""
        return next(self.solve_all([task], rom_digest, 1))

    def solve_all(self, tasks: list[dict[str, Any]], rom_digest: str, jobs: int) -> Iterator[SolverResult]:
        """Place the tasks on the workers, ``jobs`` at a time, yielding results as they finish; stopping cancels the
        rest."""
        client = self.executor.client
        tracker = _Tracker(uuid.uuid4().hex[:16], len(tasks), self.executor.on_progress)
        client.subscribe_topic(EVENT_TOPIC, tracker.on_event)
        bundle = self._scatter()
        places = _Placement(client, bundle, tasks, rom_digest, tracker, max(1, jobs), self.executor, self.runtime)
        try:
            tracker.report()
            yield from places.results()
        finally:
            client.unsubscribe_topic(EVENT_TOPIC)
            places.cancel()
            if bundle is not None:
                bundle.release()

    def _scatter(self) -> Future[Any] | None:
        """The bundle, sent once to every worker (tasks then refer to it); None when no worker comes."""
        client = self.executor.client
        try:
            client.wait_for_workers(1, timeout=PLACEMENT_TIMEOUT)
            to = [a for a in self.executor.workers() if self.executor.eligible(a)] if self.executor.confined else None
            if to == []:
                return None
            return client.scatter(self.bundle, broadcast=True, hash=False, workers=to)  # type: ignore[no-any-return]
        except (TimeoutError, ValueError):
            return None


def _checked(val: Any, model: ma.DeclaredModel | None = None) -> SolverResult | None:
    """A worker's answer, shape-checked: its result (None for ``unproven``), else :class:`WorkerAnswerRefused`."""
    if not isinstance(val, dict) or not isinstance(val.get("worker"), str) or not isinstance(val.get("address"), str) \
            or not isinstance(val.get("containment"), dict):
        raise WorkerAnswerRefused("expected {status, worker, address, containment}")
    if val.get("status") == UNPROVEN:
        return None
    if val.get("status") != "played":
        raise WorkerAnswerRefused(f"unknown status {str(val.get('status'))[:40]!r}")
    if val["containment"].get("proven") is not True:  # a game played without a proof is never rated
        raise WorkerAnswerRefused("a game reported played without a containment proof")
    return result_from_wire(val.get("result"), model)


def _why(proof: dict[str, Any]) -> str:
    """Why a worker's proof failed, bounded (a worker's own text): the failing probes, else its error."""
    probes = proof.get("probes")
    failed = [str(p.get("name"))[:120] for p in (probes if isinstance(probes, list) else [])
              if isinstance(p, dict) and not p.get("ok")]
    return (", ".join(failed[:5]) or str(proof.get("error") or "no proof"))[:300]


class _Placement:
    """The submit / collect / re-queue loop of one run; results leave in the order of ``tasks``."""

    def __init__(self, client: Client, bundle: Future[Any] | None, tasks: list[dict[str, Any]], rom_digest: str,
                 tracker: _Tracker, jobs: int, executor: DaskExecutor | None = None,
                 bundle_runtime: dict[str, Any] | None = None) -> None:
        self.client, self.bundle, self.tasks, self.rom_digest = client, bundle, tasks, rom_digest
        self.tracker, self.jobs = tracker, jobs
        self.pending: deque[int] = deque(range(len(tasks)))
        self.in_flight: dict[Future[Any], int] = {}
        self.ready: dict[int, SolverResult] = {}
        self.bad: dict[str, dict[str, Any]] = {}  # address -> the failed proof (and the worker's name)
        self.unproven_on: dict[int, list[str]] = {}
        self.lost: dict[int, int] = {}
        self.submissions = 0
        self.stranded = bundle is None
        self.executor = executor
        self.confined = executor is not None and executor.confined
        self.model = ma.declared_model(bundle_runtime) if bundle_runtime else None

    def results(self) -> Iterator[SolverResult]:
        idle_since: float | None = None
        for i in range(len(self.tasks)):
            while i not in self.ready:
                while self.pending and len(self.in_flight) < self.jobs:
                    self._place(self.pending.popleft())
                if i in self.ready:
                    break
                if not self.in_flight:
                    raise RuntimeError(f"game {i + 1} is neither placed nor done")  # a bug, never a verdict
                done = self._wait()
                for fut in done:
                    self._collect(fut, self.in_flight.pop(fut))
                if done or self._healthy():
                    idle_since = None
                    continue
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > PLACEMENT_TIMEOUT:
                    self.stranded = True  # later games fail at once while there is still no worker
                    for fut, j in list(self.in_flight.items()):
                        fut.cancel()
                        self.in_flight.pop(fut)
                        self._give(j, SolverResult(LANE_ERROR, "could not be placed: no Dask worker for "
                                                   f"{PLACEMENT_TIMEOUT:g}s"))
            yield self.ready.pop(i)

    def _wait(self) -> set[Future[Any]]:
        """Futures done within a few seconds (none on a timeout: the caller checks the cluster is alive)."""
        try:
            with self.client.as_current():  # wait() looks for a default client; ours is not the default
                done, _ = wait(list(self.in_flight), timeout=min(5.0, PLACEMENT_TIMEOUT),
                               return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set()
        except CancelledError:  # the scheduler forgot them (a client reconnecting under load): lost, so replayed
            return {f for f in self.in_flight if f.cancelled() or f.done()}
        return set(done)

    def _healthy(self) -> list[str]:
        return [a for a in self.client.scheduler_info()["workers"] if a not in self.bad
                and (self.executor is None or self.executor.eligible(a))]

    def _place(self, i: int) -> None:
        # Asking the scheduler costs a round trip: only once a worker is excluded or none was there.
        healthy = self._healthy() if self.bad or self.stranded or self.confined else []
        if self.bundle is None or (self.stranded and not healthy and not self.bad):
            self._give(i, SolverResult(LANE_ERROR, f"could not be placed: no Dask worker for {PLACEMENT_TIMEOUT:g}s"))
            return
        if self.bad and not healthy:
            self._withhold(i)
            return
        if self.confined and not healthy and not self.bad:
            self._give(i, SolverResult(LANE_ERROR, "could not be placed: no loopback worker (plain TCP executor)"))
            return
        restrict: dict[str, Any] = {}
        if self.bad:
            restrict = {"workers": healthy, "allow_other_workers": False}
        elif self.confined:  # by host, not address: a loopback worker that restarts (new port) still qualifies
            restrict = {"workers": sorted({str(urlsplit(a).hostname) for a in healthy}), "allow_other_workers": False}
        self.submissions += 1
        fut = self.client.submit(play_game, self.bundle, self.tasks[i], self.rom_digest, self.tracker.run, i + 1,
                                 key=f"acx-game-{self.tracker.run}-{i + 1}-{self.submissions}", pure=False,
                                 **restrict)
        self.in_flight[fut] = i

    def _collect(self, fut: Future[Any], i: int) -> None:
        if fut.status == "finished":
            try:
                val = fut.result()
                res = _checked(val, self.model)
            except (WorkerAnswerRefused, TypeError, ValueError) as refused:  # not plain data: never unpickled
                fut.release()
                self._give(i, SolverResult(LANE_ERROR, f"harness error on the worker: answer refused: "
                                                       f"{str(refused)[:200]}"))
                return
            fut.release()
            if val.get("status") == UNPROVEN:
                self.bad[str(val["address"])] = val
                self.unproven_on.setdefault(i, []).append(str(val["worker"]))
                self.tracker.mark_unhealthy(str(val["worker"]))
                self.pending.appendleft(i)  # re-queued on the workers left
                return
            assert res is not None
            self._give(i, res, val)
            return
        exc = fut.exception() if fut.status == "error" else None
        fut.release()
        name = type(exc).__name__ if exc is not None else "cancelled"
        if exc is None or name in ("KilledWorker", "CommClosedError"):
            self.lost[i] = self.lost.get(i, 0) + 1
            if len(self.tracker.started.get(i + 1, [])) + self.lost[i] <= MAX_ATTEMPTS:
                self.pending.appendleft(i)
                return
            self._give(i, SolverResult(LANE_ERROR, f"worker lost {self.lost[i]} time(s) mid-game; not replayed "
                                                   f"more than {MAX_ATTEMPTS} times"))
            return
        self._give(i, SolverResult(LANE_ERROR, f"harness error on the worker: {name}: {str(exc)[:200]}"))

    def _withhold(self, i: int) -> None:
        last = list(self.bad.values())[-1]
        refused = self.unproven_on.setdefault(i, [])  # every worker it could go to proved nothing
        refused += sorted({str(v["worker"]) for v in self.bad.values()} - set(refused))
        whys = sorted({f"{str(v['worker'])[:60]}: {_why(v['containment'])}" for v in self.bad.values()})
        shown = "; ".join(whys[:3]) + (f"; and {len(whys) - 3} more" if len(whys) > 3 else "")
        self._give(i, SolverResult(WITHHELD, f"containment unproven on every worker ({shown})",
                                   facts={"conditions": {"containment": False}}), last)

    def _give(self, i: int, res: SolverResult, val: dict[str, Any] | None = None) -> None:
        worker = str(val["worker"]) if val and res.outcome != WITHHELD else None
        earlier = self.tracker.finish(i + 1, worker)
        executor: dict[str, Any] = {"name": "dask", "worker": worker, "attempts": len(earlier) + 1}
        if earlier:
            executor["retriedFrom"] = earlier
        if self.unproven_on.get(i):
            executor["unprovenOn"] = self.unproven_on[i]
        record: dict[str, Any] = {**res.facts.get("record", {}), "executor": executor}  # the checked model counts
        if val is not None:
            record["containment"] = val["containment"]
        self.ready[i] = SolverResult(res.outcome, res.detail, res.transcript, {**res.facts, "record": record})

    def cancel(self) -> None:
        for fut in self.in_flight:
            fut.cancel()
        self.in_flight.clear()
