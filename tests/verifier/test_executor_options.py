"""``attest --executor``: address rules, the missing extra, an unreachable scheduler, digest checks on a worker."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import IntegrityError, UsageError
from acx_oci.services.verifier import open_executor, parse_executor
from acx_oci.services.verifier.executors import ExecutorSpec
from acx_oci.solvers import RomBundle
from acx_oci.solvers.remote import checked_files
from acx_oci.trust import load_identity

from ..support.cli import cli


def test_addresses() -> None:
    assert parse_executor("local") == ExecutorSpec("local")
    assert parse_executor("dask://127.0.0.1:8786").address == "tcp://127.0.0.1:8786"
    assert parse_executor("dask://localhost:8786").address == "tcp://localhost:8786"
    assert parse_executor("dask://[::1]:8786").address == "tcp://[::1]:8786"
    tls = parse_executor("dask+tls://sched.example:8786", ca_file="ca.pem", cert_file="c.pem", key_file="k.pem")
    assert tls.address == "tls://sched.example:8786" and tls.tls and tls.cert_file == "c.pem"
    with pytest.raises(UsageError, match="allow-plaintext-executor"):
        parse_executor("dask://10.0.0.5:8786")
    assert parse_executor("dask://10.0.0.5:8786", allow_plaintext=True).address == "tcp://10.0.0.5:8786"
    for bad in ("dask://host", "http://h:1", "dask://h:1/x", "tcp://127.0.0.1:1", "dask://h:99999", "remote"):
        with pytest.raises(UsageError, match="expected local, dask://HOST:PORT"):
            parse_executor(bad)
    with pytest.raises(UsageError, match="dask\\+tls"):
        parse_executor("dask://127.0.0.1:1", ca_file="ca.pem")
    with pytest.raises(UsageError, match="dask\\+tls"):
        parse_executor("local", cert_file="c.pem")


def test_without_dask_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(UsageError, match=r"pip install 'acx-oci\[dask\]'"):
        open_executor(parse_executor("dask://127.0.0.1:8786"))


def _attest(tmp: Path, *extra: str) -> tuple[int, str]:
    if not (tmp / "v.key").exists():
        assert cli("keygen", tmp / "v").exit_code == 0
    res = cli("attest", "oci:" + str(tmp / "nothing") + ":c", "--benchmark", "oci:" + str(tmp / "nothing") + ":b",
              "--key", tmp / "v.key", "--issuer", load_identity(tmp / "v.key").did, "--state", tmp / "state",
              "-o", tmp / "out", *extra)
    return res.exit_code, res.output


def test_cli_refuses_before_anything_is_attempted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = _attest(tmp_path, "--executor", "dask://192.0.2.7:8786")
    assert code == 2 and "plain TCP to a non-loopback host" in out and "Traceback" not in out
    assert not (tmp_path / "state").exists()  # no ledger, no attempt, no cooldown
    code, out = _attest(tmp_path, "--executor", "dask://127.0.0.1:8786", "--competence", "30")
    assert code == 2 and "only the ROM solver plays on a cluster" in out
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out = _attest(tmp_path, "--executor", f"dask://127.0.0.1:{port}", "--timeout", "1")
    assert code == 3 and "no Dask scheduler answers" in out and len(out.strip().splitlines()) == 1
    assert not (tmp_path / "state").exists()
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, out = _attest(tmp_path, "--executor", "dask://127.0.0.1:8786")
    assert code == 2 and "acx-oci[dask]" in out


def test_a_worker_checks_every_digest_before_use() -> None:
    files = {"skills/agent.py": b"print('hi')\n", "skills/data.txt": b"x"}
    rom = {"id": "io.example/a", "runtime": {"command": ["python3", "/rom/skills/agent.py"]},
           "files": [{"path": p, "digest": sha256_digest(d), "size": len(d)} for p, d in files.items()]}
    rom_bytes = canonical(rom)
    bundle = RomBundle.build(rom_bytes, sha256_digest(rom_bytes), files, secret_paths=(Path("/k.key"),))
    assert set(bundle.files) == {sha256_digest(d) for d in files.values()}  # content-addressed
    assert bundle.secret_paths == ("/k.key",)  # paths to prove absent; never the key itself
    assert checked_files(bundle)[1] == files
    swapped = RomBundle(rom_bytes, bundle.rom_digest, {**bundle.files, sha256_digest(b"x"): b"y"})
    with pytest.raises(IntegrityError, match=r"skills/data\.txt"):
        checked_files(swapped)
    with pytest.raises(IntegrityError, match="was not sent"):
        checked_files(RomBundle(rom_bytes, bundle.rom_digest, {sha256_digest(files["skills/agent.py"]):
                                                               files["skills/agent.py"]}))
    other = canonical({**rom, "id": "io.example/b"})
    with pytest.raises(IntegrityError, match="ROM bytes digest"):
        checked_files(RomBundle(other, bundle.rom_digest, bundle.files))
    assert json.loads(rom_bytes)["id"] == "io.example/a"


def test_json_events_report_progress_for_the_local_pool(tmp_path: Path) -> None:
    """``--json-events``: one JSON line per progress step on stderr, in the cluster's shape; stdout stays the result."""
    assert cli("keygen", tmp_path / "v").exit_code == 0 and cli("keygen", tmp_path / "p").exit_code == 0
    did = load_identity(tmp_path / "v.key").did
    layout = f"oci:{tmp_path / 'layout'}"
    cap = "build-dag[snowflake+airflow+dbt]@data-engineering"
    assert cli("cartridge", "init", tmp_path / "a", "--id", "io.example/a", "--version", "1.0.0", "--capability",
               cap).exit_code == 0
    assert cli("cartridge", "push", tmp_path / "a", f"{layout}:a", "--key", tmp_path / "p.key").exit_code == 0
    assert cli("benchmark", "demo", tmp_path / "bench").exit_code == 0
    assert cli("benchmark", "push", tmp_path / "bench", f"{layout}:b", "--seal-to", tmp_path / "v.did.json",
               "--allow-uncertified").exit_code == 0
    res = cli("attest", f"{layout}:a", "--benchmark", f"{layout}:b", "--key", tmp_path / "v.key", "--issuer", did,
              "--competence", "33", "--games", "5", "--jobs", "2", "--state", tmp_path / "s", "-o", tmp_path / "o",
              "--json", "--json-events")
    assert res.exit_code == 1, res.output  # 5 games: below the gate
    assert json.loads(res.stdout)["games"] == 5
    events = [json.loads(line) for line in res.stderr.splitlines()]
    assert [e["done"] for e in events] == [0, 1, 2, 3, 4, 5]
    assert events[0] == {"event": "progress", "executor": "local", "total": 5, "done": 0, "running": 2, "queued": 3,
                         "workers": {"local": {"done": 0, "running": 2, "healthy": True}}}
    assert events[-1]["queued"] == 0 and events[-1]["running"] == 0
