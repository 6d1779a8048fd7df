"""Start real registries on loopback: CNCF Distribution (Debian's ``docker-registry``) and
go-containerregistry's in-memory registry with the Referrers API (``tests/support/ggcr``).

Distribution: fresh storage, ``addr: 127.0.0.1:0``; the port is read from the log line
``listening on 127.0.0.1:PORT``; stopped by pid. ggcr: built once and cached by
``scripts/build-ggcr.sh`` (or ``$ACX_GGCR_BIN``), prints its port on stdout, and exits when
its stdin closes, so it cannot outlive the test run.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CONFIG = """version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:0
"""


@dataclass
class Registry:
    host: str
    proc: subprocess.Popen[bytes]
    root: Path
    kind: str = "distribution"  # or "ggcr"

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        shutil.rmtree(self.root, ignore_errors=True)


def registry_binary() -> str | None:
    return shutil.which("docker-registry") or shutil.which("registry")


def start_registry(timeout: float = 20.0) -> Registry:
    binary = registry_binary()
    if binary is None:
        raise RuntimeError("docker-registry not installed (apt-get install docker-registry)")
    root = Path(tempfile.mkdtemp(prefix="acx-registry-"))
    (root / "data").mkdir()
    cfg = root / "config.yml"
    cfg.write_text(CONFIG.format(root=root / "data"))
    log = (root / "registry.log").open("wb")
    proc = subprocess.Popen([binary, "serve", str(cfg)], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    pattern = re.compile(rb"listening on (?:\[::\]|127\.0\.0\.1|[\d.]+):(\d+)")
    while time.monotonic() < deadline:
        text = (root / "registry.log").read_bytes()
        m = pattern.search(text)
        if m:
            return Registry(host=f"127.0.0.1:{int(m.group(1))}", proc=proc, root=root)
        if proc.poll() is not None:
            raise RuntimeError(f"registry exited: {text.decode(errors='replace')[-500:]}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("registry did not report its port in time")


GGCR_BUILD = Path(__file__).resolve().parents[2] / "scripts" / "build-ggcr.sh"


def ggcr_binary() -> str:
    """The cached ggcr registry binary: ``$ACX_GGCR_BIN``, else what ``scripts/build-ggcr.sh`` builds or
    finds in its cache (a download and ~25-50 s of build the first time on a machine, then nothing)."""
    given = os.environ.get("ACX_GGCR_BIN")
    if given:
        if not os.access(given, os.X_OK):
            raise RuntimeError(f"ACX_GGCR_BIN={given} is not an executable")
        return given
    out = subprocess.run(["bash", str(GGCR_BUILD)], capture_output=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError("scripts/build-ggcr.sh failed: " + out.stderr.decode(errors="replace")[-800:])
    return out.stdout.decode().strip().splitlines()[-1]


def start_ggcr(binary: str, timeout: float = 20.0) -> Registry:
    """go-containerregistry's registry (referrers on, in memory) on 127.0.0.1:random."""
    root = Path(tempfile.mkdtemp(prefix="acx-ggcr-"))
    log = (root / "ggcr.log").open("wb")
    proc = subprocess.Popen([binary, "-stdin-exit"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    line = b""
    while time.monotonic() < deadline and not line:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            raise RuntimeError(f"ggcr registry exited: {(root / 'ggcr.log').read_text(errors='replace')[-500:]}")
    if not line.strip().isdigit():
        proc.kill()
        raise RuntimeError(f"ggcr registry printed {line!r}, expected its port")
    return Registry(host=f"127.0.0.1:{int(line)}", proc=proc, root=root, kind="ggcr")
