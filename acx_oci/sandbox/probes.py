"""Containment proof: probes with known verdicts, run inside the exact spec the games use.

The host plants things a contained process must not reach (a canary file under /tmp and in the verifier's
home, the caller's key and state paths, a marker process, a loopback listener, a world-writable directory)
and first checks each plant is really there (positive controls), so a probe cannot pass because the plant
failed. The probe script only reports exception class names and booleans; the host decides every verdict
and never hands the canary's content to the sandbox, so no secret can appear in the returned proof.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from acx_oci import safetree
from acx_oci.errors import AcxError
from acx_oci.jsonio import loads
from acx_oci.sandbox.bwrap import SandboxSpec, bwrap_version, drops_privilege, run, staging_dir
from acx_oci.sandbox.uids import own_uid

PROBE_DIR = "/.acx-probe"
MAX_PROBE_OUTPUT = 32 * 1024

# Runs with /usr/bin/python3 -I -S inside the sandbox. Prints one JSON object: probe name -> observation.
PROBE_SCRIPT = r'''
import json, os, socket, sys
cfg = json.load(open(sys.argv[1]))
obs = {}

def outcome(fn):
    try:
        fn()
    except Exception as exc:
        return type(exc).__name__
    return "succeeded"

def read(path):
    with open(path, "rb") as fh:
        fh.read(1)

for i, p in enumerate(cfg["canaries"]):
    obs["canary_%d" % i] = outcome(lambda p=p: read(p))
for i, p in enumerate(cfg["keys"]):
    obs["key_path_%d" % i] = outcome(lambda p=p: os.lstat(p))

def scan():
    marker = cfg["marker"].encode()
    seen = "marker not visible"
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/cmdline" % name, "rb") as fh:
                    if marker in fh.read():
                        seen = "marker visible"
            except OSError:
                pass
    return seen
obs["host_processes"] = scan()

def connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", cfg["port"]))
    finally:
        s.close()
obs["host_listener"] = outcome(connect)

def connect_to(host, port):
    s = socket.create_connection((host, port), timeout=3)
    s.close()
for i, (host, port) in enumerate(cfg.get("endpoints") or []):
    obs["endpoint_%d" % i] = outcome(lambda h=host, p=port: connect_to(h, p))

def write(path):
    with open(path, "wb") as fh:
        fh.write(b"x")
obs["host_tmp_write"] = outcome(lambda: write(os.path.join(cfg["writable_dir"], "probe-write")))
obs["root_write"] = outcome(lambda: write("/acx-probe-write"))
obs["usr_write"] = outcome(lambda: write("/usr/acx-probe-write"))
obs["probe_script_write"] = outcome(lambda: open(sys.argv[0], "ab").close())
obs["uid"] = [os.getuid(), os.geteuid(), os.getgid()]
cap = "unknown"
for line in open("/proc/self/status"):
    if line.startswith("CapEff:"):
        cap = "none" if int(line.split()[1], 16) == 0 else "some"
obs["capabilities"] = cap
sys.stdout.write(json.dumps(obs))
'''


@dataclasses.dataclass
class _Plants:
    canaries: list[Path]
    canary_values: list[str]
    marker: str
    port: int
    writable_dir: Path
    controls: dict[str, bool]


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "absent"


@contextlib.contextmanager
def _planted() -> Iterator[_Plants]:
    """Plant canaries, a marker process, a listener and a 1777 dir; remove them all afterwards."""
    cleanup: list[Callable[[], None]] = []
    try:
        canaries, values = [], []
        tmp = Path(tempfile.mkdtemp(prefix="acx-canary-"))
        tmp.chmod(0o755)
        cleanup.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
        spots = [tmp / "canary.txt"]
        with contextlib.suppress(RuntimeError, KeyError):
            spots.append(Path.home() / f".acx-canary-{secrets.token_hex(6)}")
        for spot in spots:
            value = "acx-canary-" + secrets.token_hex(16)
            try:
                spot.write_text(value, "utf-8")
                spot.chmod(0o644)
            except OSError:
                continue
            if spot.parent != tmp:
                cleanup.append(lambda s=spot: s.unlink(missing_ok=True))  # type: ignore[misc]
            canaries.append(spot)
            values.append(value)
        writable = Path(tempfile.mkdtemp(prefix="acx-world-"))
        writable.chmod(0o1777)
        cleanup.append(lambda: shutil.rmtree(writable, ignore_errors=True))
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        cleanup.append(listener.close)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = int(listener.getsockname()[1])
        marker = "acx-probe-marker-" + secrets.token_hex(8)
        proc = subprocess.Popen(["/bin/sh", "-c", "sleep 120 & wait", marker], start_new_session=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def stop() -> None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        cleanup.append(stop)
        controls = {"canaries_readable_on_host": all(c.read_text("utf-8") == v for c, v in zip(canaries, values,
                                                                                                    strict=True))
                    and bool(canaries),
                    "listener_reachable_on_host": _host_connects(port),
                    "marker_visible_on_host": _marker_visible(marker)}
        yield _Plants(canaries, values, marker, port, writable, controls)
    finally:
        for fn in reversed(cleanup):
            with contextlib.suppress(OSError):
                fn()


def _host_connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3):
            return True
    except OSError:
        return False


def _marker_visible(marker: str) -> bool:
    """Whether the host sees the marker process (polls briefly: the shell may not have exec'd yet)."""
    deadline = time.monotonic() + 3.0
    while True:
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                with contextlib.suppress(OSError):
                    if marker.encode() in (d / "cmdline").read_bytes():
                        return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _probe(name: str, expected: str, observed: Any, ok: bool) -> dict[str, Any]:
    return {"name": name, "expected": expected, "observed": observed, "ok": bool(ok)}


def _absent(observed: Any, host_path: Path, spec: SandboxSpec) -> bool:
    """The host path is not reachable inside: not found, or — with an image root — blocked by the image's own dir.

    With an environment image as ``/``, a path like ``/root/x`` names the *image's* ``/root`` (0700, another
    owner), so the probe sees ``PermissionError``. That proves absence too when the path is under no bind and
    the image itself holds no such entry: the only ``/root`` inside is the image's.
    """
    if observed == "FileNotFoundError":
        return True
    if observed != "PermissionError" or spec.rootfs is None:
        return False
    inside = str(host_path)
    if any(inside == dst or inside.startswith(dst.rstrip("/") + "/") for _, dst in (*spec.ro_binds, *spec.rw_binds)):
        return False
    return not safetree.exists_inside(spec.rootfs, inside)  # resolved inside the image, never by the host


#: What a TCP connect that cannot reach its target raises inside an empty network namespace.
UNREACHABLE = ("ConnectionRefusedError", "OSError", "TimeoutError", "gaierror")


def _verdicts(obs: dict[str, Any], plants: _Plants, keys: Sequence[Path],
              spec: SandboxSpec | None = None, endpoints: Sequence[tuple[str, str, int]] = ()
              ) -> list[dict[str, Any]]:
    spec = spec or SandboxSpec()
    out = [_probe(f"control:{k}", "true", v, v) for k, v in sorted(plants.controls.items())]
    labels = ["canary in host /tmp", "canary in verifier home"]
    absent = "FileNotFoundError" if spec.rootfs is None else "FileNotFoundError|PermissionError (image's own dir)"
    for i, c in enumerate(plants.canaries):
        o = obs.get(f"canary_{i}")
        out.append(_probe(f"read {labels[min(i, 1)]}", absent, o, _absent(o, c, spec)))
    for i, k in enumerate(keys):
        o = obs.get(f"key_path_{i}")
        out.append(_probe(f"stat verifier path {k.name or k}", absent, o, _absent(o, k, spec)))
    o = obs.get("host_processes")
    out.append(_probe("see a host process in /proc", "marker not visible", o, o == "marker not visible"))
    o = obs.get("host_listener")
    refused = ("ConnectionRefusedError", "OSError", "TimeoutError")
    out.append(_probe("connect to host loopback listener", "|".join(refused), o, o in refused))
    for i, (label, _, _) in enumerate(endpoints):
        o = obs.get(f"endpoint_{i}")
        out.append(_probe(f"connect to {label}", "|".join(UNREACHABLE), o, o in UNREACHABLE))
    o = obs.get("host_tmp_write")
    out.append(_probe("write into world-writable host dir", "FileNotFoundError", o, o == "FileNotFoundError"
                      and not any(plants.writable_dir.iterdir())))
    for key, what in (("root_write", "/"), ("usr_write", "/usr")):
        o = obs.get(key)
        out.append(_probe(f"write to {what}", "OSError|PermissionError", o, o in ("OSError", "PermissionError")))
    o = obs.get("probe_script_write")
    out.append(_probe("write the probe script", "OSError|PermissionError", o, o in ("OSError", "PermissionError")))
    uid = obs.get("uid")
    forbidden = {0, os.getuid()}
    ok = isinstance(uid, list) and len(uid) == 3 and all(isinstance(u, int) and u not in forbidden for u in uid)
    out.append(_probe("uid inside", "not 0, not the verifier's uid", uid, ok))
    o = obs.get("capabilities")
    out.append(_probe("effective capabilities", "none", o, o == "none"))
    return out


def _failed(version: str | None, error: str, spec: SandboxSpec) -> dict[str, Any]:
    return {"sandbox": "bubblewrap", "version": version, "probes": [], "proven": False, "error": error[:300],
            "limits": _limits(spec)}


def _limits(spec: SandboxSpec) -> dict[str, Any]:
    return {"timeSeconds": spec.time_seconds, "memoryMiB": spec.memory_mib, "pids": spec.pids,
            "diskMiB": spec.disk_mib, "openFiles": spec.open_files, "fileSizeMiB": spec.file_size_mib,
            "network": spec.network, "hostUidDropped": drops_privilege()}


def check(key_paths: Sequence[Path], spec: SandboxSpec | None = None,
          endpoints: Sequence[tuple[str, str, int]] = ()) -> dict[str, Any]:
    """Run the containment probes in ``spec`` (default :class:`SandboxSpec`); a plain dict for game records.

    ``key_paths`` are the verifier's real secrets (signing key, state dir): each must be absent inside.
    ``endpoints`` are ``(label, host, port)`` the sandbox must not reach by TCP (a model ROM's upstream: its
    name and each address it resolves to on the host); only the label appears in the proof.
    Never raises for a sandbox that cannot start; that is ``proven: False`` with ``error``.
    """
    spec = spec or SandboxSpec()
    keys = [Path(os.path.abspath(k)) for k in key_paths]
    try:
        version: str | None = bwrap_version(spec)
    except AcxError as exc:
        return _failed(None, str(exc), spec)
    stage = staging_dir("acx-probe-")
    try:
        with _planted() as plants:
            (stage / "probe.py").write_text(PROBE_SCRIPT, "utf-8")
            cfg = {"canaries": [str(c) for c in plants.canaries], "keys": [str(k) for k in keys],
                   "marker": plants.marker, "port": plants.port, "writable_dir": str(plants.writable_dir),
                   "endpoints": [[host, port] for _, host, port in endpoints]}
            (stage / "config.json").write_text(json.dumps(cfg), "utf-8")
            for f in stage.iterdir():
                f.chmod(0o444)
            before = [_digest(c) for c in plants.canaries]
            # The game's spec plus one read-only bind for the probe; limits untouched (only the wall clock is
            # capped for this run, so a long game limit does not make a broken probe hang the verifier).
            probe_spec = dataclasses.replace(spec, ro_binds=(*spec.ro_binds, (stage, PROBE_DIR)))
            try:
                with own_uid(probe_spec) as pspec:  # a proof of the grader's spec: its own uid, as a grade's
                    res = run(pspec, ["/usr/bin/python3", "-I", "-S", f"{PROBE_DIR}/probe.py",
                                      f"{PROBE_DIR}/config.json"], time_seconds=min(spec.time_seconds, 30.0))
            except AcxError as exc:
                return _failed(version, str(exc), spec)
            if res.timed_out or res.returncode != 0:
                why = "timed out" if res.timed_out else f"exit {res.returncode}"
                tail = res.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
                return _failed(version, f"probe run failed ({why}): {tail[0]}", spec)
            try:
                obs = loads(res.stdout[:MAX_PROBE_OUTPUT], "probe output")
            except ValueError:
                return _failed(version, "probe output is not JSON", spec)
            if not isinstance(obs, dict):
                return _failed(version, "probe output is not an object", spec)
            probes = _verdicts(obs, plants, keys, spec, endpoints)
            unchanged = [_digest(c) for c in plants.canaries] == before
            probes.append(_probe("host canaries unchanged", "true", unchanged, unchanged))
            result = {"sandbox": "bubblewrap", "version": version, "probes": probes,
                      "proven": all(p["ok"] for p in probes), "limits": _limits(spec)}
            text = json.dumps(result)
            if any(v in text for v in plants.canary_values) or plants.marker in text:
                return _failed(version, "probe output echoed a planted secret", spec)
            return result
    finally:
        shutil.rmtree(stage, ignore_errors=True)
