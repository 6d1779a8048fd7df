"""The worker side of a scaled-out run: what a remote worker gets, what it checks, how it plays one game.

A :class:`RomBundle` is everything a worker needs besides the task: the signed ROM document's exact bytes
(their sha256 is the ROM digest), the ROM's files keyed by their digests, the environment image reference
and the verifier's secret *paths* (the probes prove them absent inside the sandbox; the secrets themselves
never travel). For a ROM that calls a model it carries the models-file entry's public fields and the *name*
of its key (``apiKeyEnv``) or the *path* of its key file (``apiKeyFile``), never the key: each worker reads
the key from its own environment or file system, runs each game's proxy beside the game, and proves the
model egress (the model probes, its key file among the secrets) in its own sandbox. The worker recomputes
every digest before it writes a byte, proves containment in the games' own spec once per worker process
(the proof is cached with the materialised ROM), and only then plays. A worker whose probes fail — or that
has no key to prove them with — plays nothing: :func:`play_game` answers ``unproven`` and the verifier
re-queues the game elsewhere. Records are never signed here: the verifier signs after the results come back.
"""

from __future__ import annotations

import atexit
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.crypto import sha256_digest
from acx_oci.egress import ModelSetup, model_key
from acx_oci.envimage import prepare_image
from acx_oci.errors import IntegrityError, UsageError
from acx_oci.jsonio import parse_json
from acx_oci.model import modelapi as ma
from acx_oci.oci import StoreOptions
from acx_oci.solvers.rom import RomSolver, materialize_rom, new_rom_dir, prove

PLAYED, UNPROVEN = "played", "unproven"
EVENT_TOPIC = "acx-oci-games"  # a worker announces each game it starts here (the verifier tracks retries)


@dataclass(frozen=True)
class RomBundle:
    """What travels to a worker once per run (never the signing key, never a record)."""

    rom_bytes: bytes
    rom_digest: str
    files: dict[str, bytes]  # digest -> bytes, for every file the ROM lists
    secret_paths: tuple[str, ...] = ()
    image: str | None = None
    store_options: StoreOptions = field(default_factory=StoreOptions)
    model: ma.ModelEntry | None = None  # public fields and the key's env name / file path; never the key

    @classmethod
    def build(cls, rom_bytes: bytes, rom_digest: str, files_by_path: dict[str, bytes], *,
              secret_paths: tuple[Path, ...] = (), image: str | None = None,
              store_options: StoreOptions | None = None, model: ma.ModelEntry | None = None) -> RomBundle:
        """The bundle for one run: the ROM's files keyed by the digests its document lists."""
        rom = parse_json(rom_bytes, "ROM manifest")
        files = {str(e["digest"]): files_by_path[str(e["path"])] for e in rom.get("files") or []}
        return cls(rom_bytes, rom_digest, files, tuple(str(p) for p in secret_paths), image,
                   store_options or StoreOptions(), model)


def checked_files(bundle: RomBundle) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The ROM document and its files by path, after recomputing every digest (else :class:`IntegrityError`)."""
    if sha256_digest(bundle.rom_bytes) != bundle.rom_digest:
        raise IntegrityError(f"ROM bytes digest to {sha256_digest(bundle.rom_bytes)}, expected {bundle.rom_digest}")
    rom = parse_json(bundle.rom_bytes, "ROM manifest")
    out: dict[str, bytes] = {}
    for entry in rom.get("files") or []:
        digest, path = str(entry["digest"]), str(entry["path"])
        data = bundle.files.get(digest)
        if data is None:
            raise IntegrityError(f"ROM file {path}: {digest} was not sent")
        if sha256_digest(data) != digest or len(data) != int(entry["size"]):
            raise IntegrityError(f"ROM file {path}: bytes digest to {sha256_digest(data)}, the ROM lists {digest}")
        out[path] = data
    return rom, out


@dataclass
class _Prepared:
    solver: RomSolver | None  # None: this worker could not prove containment (``proof`` says why)
    proof: dict[str, Any]
    rom_dir: Path | None


_PREPARED: dict[tuple[str, str | None, tuple[str, ...], ma.ModelEntry | None], _Prepared] = {}
_LOCK = threading.Lock()


def _cleanup() -> None:
    for p in _PREPARED.values():
        if p.rom_dir is not None:
            shutil.rmtree(p.rom_dir, ignore_errors=True)


atexit.register(_cleanup)


def worker_setup(entry: ma.ModelEntry | None) -> tuple[ModelSetup | None, str | None]:
    """This worker's model egress for ``entry``, its key read here (from the worker's own environment or
    file); or why there is none (naming the variable or file, never a value)."""
    if entry is None:
        return None, None
    try:
        return ModelSetup(entry, model_key(entry)), None
    except UsageError as exc:
        where = f"apiKeyEnv {entry.api_key_env}" if entry.api_key_env else f"apiKeyFile {entry.api_key_file}"
        return None, f"no model key on this worker ({where}): {str(exc)[:200]}"


def prepared(bundle: RomBundle) -> tuple[RomSolver | None, dict[str, Any]]:
    """This process's solver for the bundle and its containment proof: ROM checked and materialised, the
    model key read, containment proven — once. No solver when the proof could not even start (no key).

    Cached per worker process (a failed proof too: an unhealthy worker answers at once, every time).
    """
    key = (bundle.rom_digest, bundle.image, bundle.secret_paths, bundle.model)
    with _LOCK:
        hit = _PREPARED.get(key)
        if hit is not None:
            return hit.solver, hit.proof
        rom, files = checked_files(bundle)
        runtime = rom.get("runtime")
        if not isinstance(runtime, dict):
            raise IntegrityError("the ROM declares no runtime")
        setup, missing = worker_setup(bundle.model)
        if missing is not None:
            proof: dict[str, Any] = {"proven": False, "probes": [], "error": missing}
            _PREPARED[key] = _Prepared(None, proof, None)
            return None, proof
        # The worker's own key file is its secret too: proven absent from the sandbox like the verifier's key.
        key_file = (bundle.model.api_key_file,) if bundle.model is not None and bundle.model.api_key_file else ()
        rom_dir = new_rom_dir()
        try:
            materialize_rom(files, rom_dir / "rom")
            rootfs, image_digest = prepare_image(bundle.image, bundle.store_options) if bundle.image else (None, None)
            proof = prove(tuple(Path(p) for p in (*bundle.secret_paths, *key_file)), rom_dir / "rom", runtime,
                          rootfs, setup)
        except BaseException:
            shutil.rmtree(rom_dir, ignore_errors=True)
            raise
        proof["imageDigest"] = image_digest
        solver = RomSolver(rom_dir / "rom", runtime, proof, rootfs=rootfs, model=setup)
        _PREPARED[key] = _Prepared(solver, proof, rom_dir)
        return solver, proof


def _worker() -> tuple[str, str, Any]:
    """(name, address, worker) of the Dask worker running this task; a plain process outside Dask."""
    try:
        from distributed import get_worker

        w = get_worker()
        return str(w.name), str(w.address), w
    except (ImportError, ValueError):
        import os
        import socket

        return f"{socket.gethostname()}:{os.getpid()}", "", None


def play_game(bundle: RomBundle, task: dict[str, Any], rom_digest: str, run: str, game: int) -> dict[str, Any]:
    """Run on a worker: prove (once), announce the start, play one game; the result goes back unsigned."""
    name, address, worker = _worker()
    solver, proof = prepared(bundle)
    if solver is None or not proof.get("proven"):
        return {"status": UNPROVEN, "worker": name, "address": address, "containment": proof}
    if worker is not None:
        worker.log_event(EVENT_TOPIC, {"run": run, "game": game, "name": name, "event": "started"})
    res = solver.solve(task, rom_digest)
    # plain data only: the verifier unpickles nothing a worker sends (acx_oci.services.verifier.executors.wire)
    return {"status": PLAYED, "worker": name, "address": address, "containment": proof,
            "result": {"outcome": res.outcome, "detail": res.detail, "transcript": res.transcript,
                       "facts": dict(res.facts)}}


def sandbox_version() -> str | None:
    """``bwrap --version`` where this runs (``client.run`` asks every worker), None without bubblewrap."""
    from acx_oci.errors import AcxError
    from acx_oci.sandbox import bwrap_version

    try:
        return bwrap_version()
    except AcxError:
        return None
