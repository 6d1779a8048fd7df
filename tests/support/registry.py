"""Start a real CNCF Distribution registry (Debian's ``docker-registry``) on loopback.

Fresh storage, ``addr: 127.0.0.1:0``; the port is read from the log line
``listening on 127.0.0.1:PORT``; stopped by pid.
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

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
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
