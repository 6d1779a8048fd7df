"""A real Dask cluster on loopback for the scale-out tests: ``dask scheduler`` and ``dask worker`` subprocesses.

The scheduler picks its own port (``--port 0``) and writes its address to a scheduler file; workers join
through the same file. Each process gets this checkout on ``PYTHONPATH`` (the workers import acx_oci to play).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .env import ROOT

# A worker on a machine where acx-oci is not installed. Shadowing the package on PYTHONPATH cannot simulate that:
# the editable install's finder (a sys.meta_path hook) still resolves the submodules. A finder placed first on
# sys.meta_path that answers every ``acx_oci`` import with ModuleNotFoundError does, however acx-oci is installed
# (editable, wheel or PYTHONPATH): the process fails exactly as one without the package would, nothing else changes.
NO_ACX_WORKER = """import sys
from importlib.abc import MetaPathFinder


class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "acx_oci" or name.startswith("acx_oci."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
assert not [m for m in sys.modules if m == "acx_oci" or m.startswith("acx_oci.")]
from distributed.cli.dask_worker import main  # noqa: E402

sys.argv[0] = "dask-worker"
main()
"""


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


@dataclass
class Cluster:
    dir: Path
    scheduler: subprocess.Popen[bytes]
    address: str  # tcp://127.0.0.1:PORT
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    tls: list[str] = field(default_factory=list)  # --tls-ca-file/--tls-cert/--tls-key for every process

    @property
    def url(self) -> str:
        if self.address.startswith("tls://"):
            return "dask+tls://" + self.address.removeprefix("tls://")
        return "dask://" + self.address.removeprefix("tcp://")

    def add_worker(self, name: str, env: dict[str, str] | None = None, timeout: float = 60.0,
                   extra: tuple[str, ...] = (), without_acx_oci: bool = False) -> None:
        """A ``dask worker``; ``without_acx_oci``: one that cannot import acx_oci (see :data:`NO_ACX_WORKER`)."""
        log = (self.dir / f"{name}.log").open("wb")
        if without_acx_oci:
            script = self.dir / "no_acx_worker.py"
            script.write_text(NO_ACX_WORKER)
            launcher = [sys.executable, str(script)]
        else:
            launcher = [sys.executable, "-m", "distributed.cli.dask_worker"]
        proc = subprocess.Popen([*launcher, "--scheduler-file",
                                 str(self.dir / "scheduler.json"), "--name", name, "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard", "--local-directory", str(self.dir / name), *self.tls, *extra],
                                env=_env(env), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=self.dir)  # not the checkout: `python -m` puts the cwd on sys.path
        self.workers[name] = proc
        self._wait_for(name, timeout)

    def _wait_for(self, name: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.workers[name].poll() is not None:
                raise RuntimeError(f"dask worker {name} exited: {(self.dir / f'{name}.log').read_text()[-2000:]}")
            if "Registered to:" in (self.dir / f"{name}.log").read_text(errors="replace"):
                return
            time.sleep(0.2)
        raise RuntimeError(f"dask worker {name} did not register in {timeout:g}s")

    def kill_worker(self, name: str) -> None:
        """SIGKILL: the worker vanishes mid-game, as a crashed machine would."""
        proc = self.workers.pop(name)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop(self) -> None:
        """Workers first (so none waits on a vanished scheduler), then the scheduler."""
        for proc in [*self.workers.values(), self.scheduler]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def tls_files(d: Path) -> dict[str, Path]:
    """A throwaway CA and one certificate (127.0.0.1, localhost) for scheduler, workers and the verifier."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "acx test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))
    import ipaddress

    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           False)
            .sign(ca_key, hashes.SHA256()))
    d.mkdir(parents=True, exist_ok=True)
    files = {"ca": d / "ca.pem", "cert": d / "cert.pem", "key": d / "key.pem"}
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files["key"].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    return files


def start_cluster(d: Path, timeout: float = 60.0, tls: dict[str, Path] | None = None) -> Cluster:
    """A scheduler on 127.0.0.1 (TLS with ``tls``' CA and certificate when given), no workers yet."""
    d.mkdir(parents=True, exist_ok=True)
    tls_args = ["--tls-ca-file", str(tls["ca"]), "--tls-cert", str(tls["cert"]), "--tls-key", str(tls["key"])] \
        if tls else []
    sfile = d / "scheduler.json"
    log = (d / "scheduler.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                             "--port", "0", "--no-dashboard", "--scheduler-file", str(sfile),
                             *(["--protocol", "tls", *tls_args] if tls else [])],
                            env=_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=d)
    deadline = time.monotonic() + timeout
    while not sfile.exists() or not sfile.read_text().strip():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"dask scheduler did not start: {(d / 'scheduler.log').read_text()[-2000:]}")
        time.sleep(0.1)
    time.sleep(0.1)
    return Cluster(d, proc, str(json.loads(sfile.read_text())["address"]), tls=tls_args)
