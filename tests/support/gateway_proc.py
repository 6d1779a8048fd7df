"""``python -m acx_oci gateway`` as a real subprocess, with its memory sampled from ``/proc`` while it works.

The gateway's peak RSS is the larger of what a sampler thread saw (``VmRSS`` of the process and its
descendants, every 10 ms) and the process's own high-water mark (``VmHWM``, fresh at ``exec``; see
:mod:`tests.support.memprobe` for why ``ru_maxrss`` of a child cannot be trusted).
"""

from __future__ import annotations

import hashlib
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import httpx

from acx_oci.gateway import RunningGateway

POLICY = """apiVersion: acx.dev/policy/v1
rules:
  - repositories: ["acx/*"]
    require:
      signedBy: trusted-publisher
"""


def minimal_policy_files(directory: Path) -> tuple[Path, Path]:
    """A policy that covers ``acx/*`` only and an empty trust file (other repositories are plain proxying)."""
    policy, trust = directory / "policy.yaml", directory / "trust.yaml"
    policy.write_text(POLICY)
    trust.write_text("publishers: []\nverifiers: []\n")
    return policy, trust


@contextmanager
def minimal_gateway(upstream: str, files: tuple[Path, Path]) -> Iterator[RunningGateway]:
    """The gateway in a thread, over plain HTTP to ``upstream`` (HOST:PORT), with :func:`minimal_policy_files`."""
    from acx_oci.evaluation import load_policy
    from acx_oci.gateway import GatewayConfig, start_in_thread
    from acx_oci.trust import load_trust

    policy, trust = files
    running = start_in_thread(GatewayConfig(upstream=f"http://{upstream}", policy=load_policy(policy),
                                            trust=load_trust(trust)))
    try:
        yield running
    finally:
        running.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


class GatewayProcess:
    """Start the gateway CLI in front of ``registry``; sample its RSS until closed."""

    def __init__(self, registry: str, files: tuple[Path, Path], *extra: str) -> None:
        self._log = tempfile.TemporaryFile()  # noqa: SIM115  # read by log() after close; deleted when collected
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        policy, trust = files
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "acx_oci", "gateway", "--upstream", f"http://{registry}", "--listen", self.address,
             "--policy", str(policy), "--trust", str(trust), *extra],
            stdout=subprocess.DEVNULL, stderr=self._log,  # a file, not a pipe: a full pipe would stall the gateway
        )
        self.sampled_kib = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> GatewayProcess:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://{self.address}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                err = self.log()
                raise RuntimeError(f"gateway did not start: {err[-2000:]}")
            time.sleep(0.05)
        self._sampler.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        """The gateway's stderr so far (access log, warnings)."""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def _sample(self) -> None:
        while not self._stop.is_set():
            rss = sum(_status_kib(p, "VmRSS") for p in _tree(self.proc.pid))
            self.sampled_kib = max(self.sampled_kib, rss)
            time.sleep(0.01)

    def peak_rss_kib(self) -> int:
        return max(self.sampled_kib, _status_kib(self.proc.pid, "VmHWM"))

    def wait_open_fds(self, n: int, timeout: float = 10.0) -> float:
        """Until the gateway holds at least ``n`` file descriptors (accepted connections); when (monotonic)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if sum(1 for _ in Path(f"/proc/{self.proc.pid}/fd").iterdir()) >= n:
                    break
            except OSError:
                pass
            time.sleep(0.02)
        return time.monotonic()

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def chunked_put(self, path: str, total: int, chunk: int = 1 << 20, watch: bool = True) -> tuple[int | None, int]:
        """Stream ``total`` generated bytes as a chunked PUT (never held), watching for an early answer as curl does
        (``watch``) or blindly until the server stops reading.

        Returns the status (None: no answer could be read) and how many body bytes were sent.
        """
        block = b"{" * chunk
        framed = f"{chunk:x}\r\n".encode() + block + b"\r\n"
        sent = 0
        with self.connect() as sock:
            sock.sendall(f"PUT {path} HTTP/1.1\r\nHost: {self.address}\r\nTransfer-Encoding: chunked\r\n"
                         "Content-Type: application/vnd.oci.image.manifest.v1+json\r\n\r\n".encode())
            try:
                while sent < total:
                    if watch and select.select([sock], [], [], 0)[0]:
                        break
                    sock.sendall(framed)
                    sent += chunk
                else:
                    sock.sendall(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            try:
                head = sock.recv(65536)
            except ConnectionResetError:
                return None, sent
        return (int(head.split(b" ", 2)[1]) if head else None), sent

    def blob_upload(self, repository: str, size: int, chunk: int = 1 << 20) -> int:
        """POST + chunked PUT of ``size`` generated bytes (monolithic upload) through the gateway; the status."""
        def blocks() -> Iterator[bytes]:
            for i in range(size // chunk):
                yield i.to_bytes(8, "big") * (chunk // 8)

        digest = hashlib.sha256()
        for b in blocks():
            digest.update(b)
        with httpx.Client(base_url=f"http://{self.address}", timeout=120) as client:
            start = client.post(f"/v2/{repository}/blobs/uploads/")
            location = start.headers["location"]
            sep = "&" if "?" in location else "?"
            done = client.put(f"{location}{sep}digest=sha256:{digest.hexdigest()}", content=blocks(),
                              headers={"Content-Type": "application/octet-stream"})
        return done.status_code
