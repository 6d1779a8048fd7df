"""Kill a test registry and bring it back on the same port and storage (a registry outage, for real)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

from .registry import Registry, registry_binary


def kill(reg: Registry) -> None:
    """SIGKILL, like a crashed registry: storage stays, the port stops answering."""
    if reg.proc.poll() is None:
        os.kill(reg.proc.pid, signal.SIGKILL)
        reg.proc.wait()


def restart(reg: Registry, timeout: float = 20.0) -> Registry:
    """The same storage and port again (the config's ``addr`` pinned to the old port)."""
    binary = registry_binary()
    assert binary is not None
    port = reg.host.rsplit(":", 1)[1]
    cfg = reg.root / "config.yml"
    cfg.write_text(re.sub(r"addr: 127\.0\.0\.1:\d+", f"addr: 127.0.0.1:{port}", cfg.read_text()))
    log_path = reg.root / "registry.log"
    log_path.write_bytes(b"")
    proc = subprocess.Popen([binary, "serve", str(cfg)], stdout=log_path.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if b"listening on" in log_path.read_bytes():
            return Registry(host=reg.host, proc=proc, root=reg.root)
        if proc.poll() is not None:
            raise RuntimeError(f"registry did not restart: {log_path.read_text(errors='replace')[-500:]}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("registry did not restart in time")
