"""The worker side of a scaled-out run: what a remote worker gets, what it checks, how it plays one game.

A :class:`RomBundle` is everything a worker needs besides the task: the signed ROM document's exact bytes
(their sha256 is the ROM digest), the ROM's files keyed by their digests, the environment image reference
and the verifier's secret *paths* (the probes prove them absent inside the sandbox; the secrets themselves
never travel). The worker recomputes every digest before it writes a byte, proves containment in the games'
own spec once per worker process (the proof is cached with the materialised ROM), and only then plays.
A worker whose probes fail plays nothing: :func:`play_game` answers ``unproven`` and the verifier re-queues
the game elsewhere. Records are never signed here: the verifier signs after the results come back.
"""

from __future__ import annotations

import atexit
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.crypto.digest import sha256_digest
from acx_oci.envimage import prepare_image
from acx_oci.errors import IntegrityError
from acx_oci.jsonio import parse_json
from acx_oci.oci.store import StoreOptions
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

    @classmethod
    def build(cls, rom_bytes: bytes, rom_digest: str, files_by_path: dict[str, bytes], *,
              secret_paths: tuple[Path, ...] = (), image: str | None = None,
              store_options: StoreOptions | None = None) -> RomBundle:
        rom = parse_json(rom_bytes, "ROM manifest")
        files = {str(e["digest"]): files_by_path[str(e["path"])] for e in rom.get("files") or []}
        return cls(rom_bytes, rom_digest, files, tuple(str(p) for p in secret_paths), image,
                   store_options or StoreOptions())


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
    solver: RomSolver
    rom_dir: Path


_PREPARED: dict[tuple[str, str | None, tuple[str, ...]], _Prepared] = {}
_LOCK = threading.Lock()


def _cleanup() -> None:
    for p in _PREPARED.values():
        shutil.rmtree(p.rom_dir, ignore_errors=True)


atexit.register(_cleanup)


def prepared(bundle: RomBundle) -> RomSolver:
    """This process's solver for the bundle: ROM checked and materialised, containment proven — once.

    Cached per worker process (a failed proof too: an unhealthy worker answers at once, every time).
    """
    key = (bundle.rom_digest, bundle.image, bundle.secret_paths)
    with _LOCK:
        hit = _PREPARED.get(key)
        if hit is not None:
            return hit.solver
        rom, files = checked_files(bundle)
        runtime = rom.get("runtime")
        if not isinstance(runtime, dict):
            raise IntegrityError("the ROM declares no runtime")
        rom_dir = new_rom_dir()
        try:
            materialize_rom(files, rom_dir / "rom")
            rootfs, image_digest = prepare_image(bundle.image, bundle.store_options) if bundle.image else (None, None)
            proof = prove(tuple(Path(p) for p in bundle.secret_paths), rom_dir / "rom", runtime, rootfs)
        except BaseException:
            shutil.rmtree(rom_dir, ignore_errors=True)
            raise
        proof["imageDigest"] = image_digest
        solver = RomSolver(rom_dir / "rom", runtime, proof, rootfs=rootfs)
        _PREPARED[key] = _Prepared(solver, rom_dir)
        return solver


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
    solver = prepared(bundle)
    proof = solver.containment
    if not proof.get("proven"):
        return {"status": UNPROVEN, "worker": name, "address": address, "containment": proof}
    if worker is not None:
        worker.log_event(EVENT_TOPIC, {"run": run, "game": game, "name": name, "event": "started"})
    res = solver.solve(task, rom_digest)
    # plain data only: the verifier unpickles nothing a worker sends (acx_oci.services.executors.wire)
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
