"""Hostile cartridges against the ROM solver: each attack is played for real, in bubblewrap, and must fail.

Every agent under ``testdata/agents/hostile/`` writes whatever it obtained into its submission. For each we
check: no ``certified-pass``; the verifier's key bytes and the host canary strings appear in no output,
record or (unsealed) transcript; after the whole suite the key, a canary in the state directory and every
site-packages directory of the host interpreters are unchanged, and no process of any run survives.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from acx_oci.crypto import unseal
from acx_oci.trust import load_identity
from tests.support.cli import cli, ok

ROOT = Path(__file__).resolve().parent.parent.parent
HOSTILE = ROOT / "testdata" / "agents" / "hostile"
AGENTS = sorted(p.stem for p in HOSTILE.glob("*.py"))
CAP = "implement-feature[python+pytest]@software-engineering"
LIMITS = {"timeSeconds": 8, "memoryMiB": 256, "pids": 64, "diskMiB": 64}

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


def _site_dirs() -> list[Path]:
    """Every site/dist-packages directory of the host interpreters (ours and Debian's)."""
    dirs = {Path(p) for p in [*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_path("purelib")]}
    dirs |= {Path("/usr/lib/python3/dist-packages"), *Path("/usr/local/lib").glob("python3*/*-packages")}
    dirs |= set(Path("/usr/lib").glob("python3*/site-packages"))
    return sorted(d for d in dirs if d.is_dir())


def _fingerprint(paths: list[Path]) -> str:
    """Names, sizes, modes and mtimes of every entry, plus the content of every .pth / *customize.py file."""
    h = hashlib.sha256()
    for root in paths:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames + dirnames):
                p = Path(dirpath) / name
                try:
                    st = p.lstat()
                except OSError:
                    continue
                h.update(f"{p}|{st.st_size}|{st.st_mode}|{st.st_mtime_ns}\n".encode())
                if name.endswith(".pth") or name in ("sitecustomize.py", "usercustomize.py", "conftest.py"):
                    h.update(p.read_bytes())
    return h.hexdigest()


def _survivors(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("hostile")
    ok(cli("keygen", str(tmp / "publisher")))
    ok(cli("keygen", str(tmp / "keys" / "verifier")))
    layout = f"oci:{tmp / 'layout'}"
    ok(cli("benchmark", "push", str(ROOT / "testdata" / "bench-py"), f"{layout}:bench", "--allow-uncertified",
           "--seal-to", str(tmp / "keys" / "verifier.did.json")))
    state = tmp / "state"
    state.mkdir()
    canary = "acx-host-canary-" + secrets.token_hex(16)
    (state / "canary.txt").write_text(canary)
    host_canary = Path("/tmp") / f"acx-hostile-canary-{secrets.token_hex(4)}"
    host_canary.write_text(canary)
    host_canary.chmod(0o644)
    key = tmp / "keys" / "verifier.key"
    before = {"key": key.read_bytes(), "state-canary": (state / "canary.txt").read_bytes(),
              "site": _fingerprint(_site_dirs())}
    world = {"tmp": tmp, "layout": layout, "state": state, "key": key, "canary": canary, "before": before,
             "did": load_identity(key).did, "results": {}}
    yield world
    host_canary.unlink(missing_ok=True)


def _cartridge(arena: dict[str, Any], name: str) -> None:
    d = arena["tmp"] / "carts" / name
    ok(cli("cartridge", "init", str(d), "--id", f"io.example/hostile-{name.replace('_', '-')}", "--version", "1.0.0",
           "--capability", CAP, "--runtime", "python3 /rom/skills/agent.py"))
    spec = yaml.safe_load((d / "cartridge.yaml").read_text())
    spec["runtime"]["limits"] = LIMITS
    (d / "cartridge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    shutil.copy(HOSTILE / f"{name}.py", d / "skills" / "agent.py")
    ok(cli("cartridge", "push", str(d), f"{arena['layout']}:{name}", "--key", str(arena["tmp"] / "publisher.key")))


@pytest.mark.parametrize("name", AGENTS)
def test_hostile_agent_gains_nothing(arena: dict[str, Any], name: str) -> None:
    _cartridge(arena, name)
    out = arena["tmp"] / "runs" / name
    # A real process, so the verifier's own command line (with --key and --state) is in the host's /proc.
    proc = subprocess.run([sys.executable, "-m", "acx_oci", "attest", f"{arena['layout']}:{name}", "--benchmark",
                           f"{arena['layout']}:bench", "--key", str(arena["key"]), "--issuer", arena["did"],
                           "--state", str(arena["state"]), "--cooldown", "0", "--games", "2", "--jobs", "2",
                           "-o", str(out), "--json"], capture_output=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stderr.decode()[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["issued"] is False
    result = json.loads((out / "result.json").read_text())
    # A pass on an impossible exam (a canary) is recorded as such and voids the run (cheating_detected); any
    # other certified-pass would be a gain. (The draw is secret: with 2 games the canary is drawn only sometimes.)
    records = [(g["outcome"], json.loads(base64.b64decode(json.loads((out / g["path"]).read_bytes())["payload"]))
                ["predicate"].get("canary", False)) for g in result["gameRecords"]]
    outcomes = [o for o, _ in records]
    assert ("certified-pass", False) not in records, (name, result["gameRecords"])
    if ("certified-pass", True) in records:
        assert any("cheating_detected" in r for r in summary["reasons"]), summary
    assert result["run"]["solver"]["name"] == "rom"
    # Nothing it could reach ends up anywhere: records, result, CLI output or the sealed transcripts' plaintext.
    ident = load_identity(arena["key"])
    texts = [proc.stdout, proc.stderr] + [p.read_bytes() for p in out.rglob("*") if p.is_file()]
    texts += [unseal(json.loads(p.read_bytes()), ident, b"acx-oci/game-transcript/v1")
              for p in sorted((out / "transcripts").glob("*.sealed.json"))]
    key_pem = arena["before"]["key"]
    key_body = b"".join(key_pem.splitlines()[1:-1])
    for blob in texts:
        assert arena["canary"].encode() not in blob
        assert key_body not in blob and ident.seed.hex().encode() not in blob
    arena["results"][name] = outcomes


def test_host_is_unchanged_and_nothing_survives(arena: dict[str, Any]) -> None:
    assert set(arena["results"]) == set(AGENTS), "run the whole module: the per-agent tests fill this in"
    assert arena["key"].read_bytes() == arena["before"]["key"]
    assert (arena["state"] / "canary.txt").read_bytes() == arena["before"]["state-canary"]
    assert _fingerprint(_site_dirs()) == arena["before"]["site"]
    assert _survivors("acx-linger-") == []
