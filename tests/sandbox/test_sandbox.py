"""The bubblewrap sandbox against real attacks: real bwrap, no mocks."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acx_oci.sandbox import (
    SandboxError,
    SandboxSpec,
    SandboxUnavailable,
    build_argv,
    check,
    give_to_sandbox,
    grade,
    run,
    staging_dir,
)

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT / "testdata" / "bench-py"

if shutil.which("bwrap") is None and os.environ.get("CI") != "true":
    pytest.skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap", allow_module_level=True)


def _marker_alive(marker: str) -> list[str]:
    hits = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    hits.append(d.name)
            except OSError:
                pass
    return hits


def _tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def stage() -> Iterator[Path]:
    d = staging_dir("acx-test-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


# --- probes ------------------------------------------------------------------------------------------------


def test_probes_proven_and_no_secret_leaks(tmp_path: Path) -> None:
    key = tmp_path / "signing.key"
    key.write_text("-----BEGIN PRIVATE KEY----- secret", "utf-8")
    state = tmp_path / "state"
    state.mkdir()
    result = check([key, state])
    assert result["proven"] is True, [p for p in result["probes"] if not p["ok"]]
    assert result["sandbox"] == "bubblewrap" and result["version"].startswith("bubblewrap")
    names = [p["name"] for p in result["probes"]]
    assert sum(n.startswith("stat verifier path") for n in names) == 2
    assert any("canary" in n for n in names) and any("listener" in n for n in names)
    text = json.dumps(result)
    assert "acx-canary-" not in text and "acx-probe-marker-" not in text and "secret" not in text


def test_probes_detect_a_visible_key_path() -> None:
    # /usr/bin/python3 is inside the read-only system root: naming it as a "key" must fail the proof.
    result = check([Path("/usr/bin/python3")])
    assert result["proven"] is False
    bad = [p for p in result["probes"] if not p["ok"]]
    assert [p["name"] for p in bad] == ["stat verifier path python3"]


def test_missing_bwrap_is_unproven_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    result = check([], SandboxSpec(bwrap="/nonexistent/bwrap"))
    assert result["proven"] is False and "bubblewrap" in result["error"] and result["probes"] == []
    monkeypatch.setenv("PATH", "/nonexistent")
    assert check([])["proven"] is False
    with pytest.raises(SandboxUnavailable):
        run(SandboxSpec(), ["/bin/true"])


# --- an attacking agent ---------------------------------------------------------------------------------------

AGENT = r'''
import json, os, socket, sys
cfg = json.load(open("/workspace/cfg.json"))
rep = {}
def attempt(name, fn):
    try:
        fn()
        rep[name] = "succeeded"
    except Exception as exc:
        rep[name] = type(exc).__name__
attempt("canary", lambda: open(cfg["canary"]).read())
attempt("key", lambda: open(cfg["key"]).read())
attempt("site_write", lambda: open(os.path.join(cfg["site"], "evil.pth"), "w").write("import os"))
attempt("host_tmp_write", lambda: open(cfg["host_tmp_file"], "w").write("x"))
def conn():
    s = socket.create_connection(("127.0.0.1", cfg["port"]), timeout=2)
    s.close()
attempt("listener", conn)
rep["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
rep["host_marker_seen"] = any(cfg["host_marker"].encode() in open("/proc/%s/cmdline" % p, "rb").read()
                              for p in os.listdir("/proc") if p.isdigit())
def big():
    with open("/workspace/big", "wb") as fh:
        fh.write(b"x" * (3 * 1024 * 1024))
attempt("file_size", big)
if os.fork() == 0:   # a daemon that outlives its parent
    os.setsid()
    os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 1000 & wait", cfg["marker"]])
kids = 0
for _ in range(64):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execv("/bin/sleep", ["sleep", "30"])
    kids += 1
rep["forked"] = kids
open("/workspace/report.json", "w").write(json.dumps(rep))
mode = sys.argv[1]
if mode == "memory":
    try:
        blob = bytearray(1024 * 1024 * 1024)
        print("allocated", len(blob))
    except MemoryError:
        print("MemoryError")
elif mode == "hang":
    import time
    time.sleep(1000)
'''


@pytest.fixture
def host_plants(stage: Path) -> Iterator[dict[str, object]]:
    canary = stage / "canary.txt"
    canary.write_text("acx-canary-host-secret", "utf-8")
    key = stage / "key.pem"
    key.write_text("PRIVATE", "utf-8")
    site = stage / "site-packages"
    site.mkdir()
    (site / "mod.py").write_text("X = 1\n", "utf-8")
    site.chmod(0o777)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    host_proc = stage / "hostmarker"
    host_proc.write_text("", "utf-8")
    ws = stage / "workspace"
    ws.mkdir()
    yield {"canary": canary, "key": key, "site": site, "port": listener.getsockname()[1], "ws": ws}
    listener.close()


def _agent_run(plants: dict[str, object], mode: str, marker: str, *, time_seconds: float,
               memory_mib: int = 2048) -> tuple[dict[str, object], bytes]:
    ws = plants["ws"]
    assert isinstance(ws, Path)
    host_tmp_file = Path("/tmp") / f"acx-escape-{marker}"
    cfg = {"canary": str(plants["canary"]), "key": str(plants["key"]), "site": str(plants["site"]),
           "port": plants["port"], "host_tmp_file": str(host_tmp_file), "marker": marker,
           "host_marker": "pytest"}
    (ws / "cfg.json").write_text(json.dumps(cfg), "utf-8")
    (ws / "agent.py").write_text(AGENT, "utf-8")
    spec = SandboxSpec(rw_binds=((ws, "/workspace"),), chdir="/workspace", pids=32, file_size_mib=1,
                       time_seconds=time_seconds, memory_mib=memory_mib)
    give_to_sandbox(ws, spec)
    res = run(spec, ["/usr/bin/python3", "-I", "/workspace/agent.py", mode])
    assert not host_tmp_file.exists()
    out = res.stdout + res.stderr + f"\nrc={res.returncode} timed_out={res.timed_out}".encode()
    assert (ws / "report.json").is_file(), out
    return json.loads((ws / "report.json").read_text("utf-8")), out


def test_attacking_agent_is_contained(host_plants: dict[str, object]) -> None:
    site, key = host_plants["site"], host_plants["key"]
    assert isinstance(site, Path) and isinstance(key, Path)
    before = (_tree_hash(site), hashlib.sha256(key.read_bytes()).hexdigest())
    marker = "acx-test-daemon-" + os.urandom(6).hex()
    t0 = time.monotonic()
    report, out = _agent_run(host_plants, "memory", marker, memory_mib=256, time_seconds=10)
    assert report["canary"] == "FileNotFoundError"
    assert report["key"] == "FileNotFoundError"
    assert report["site_write"] == "FileNotFoundError"
    assert report["host_tmp_write"] == "succeeded"  # into the sandbox's own tmpfs /tmp; the host file never appears
    assert report["listener"] in ("ConnectionRefusedError", "OSError")
    pids = report["pids"]
    assert report["host_marker_seen"] is False and isinstance(pids, list) and max(pids) < 10
    assert report["file_size"] == "OSError"  # RLIMIT_FSIZE: EFBIG
    assert isinstance(report["forked"], int) and report["forked"] < 32  # RLIMIT_NPROC
    assert b"MemoryError" in out  # RLIMIT_AS
    assert b"timed_out=False" in out and time.monotonic() - t0 < 30  # it ended by itself; wall time a backstop
    assert _marker_alive(marker) == []  # the daemon died with the sandbox
    assert (_tree_hash(site), hashlib.sha256(key.read_bytes()).hexdigest()) == before


def test_wall_clock_kills_everything(host_plants: dict[str, object]) -> None:
    marker = "acx-test-hang-" + os.urandom(6).hex()
    t0 = time.monotonic()
    report, out = _agent_run(host_plants, "hang", marker, time_seconds=2)
    assert b"timed_out=True" in out and b"rc=-9" in out  # the mechanism: the wall clock fired and killed it
    assert time.monotonic() - t0 < 30  # a backstop only
    assert report["canary"] == "FileNotFoundError"
    assert _marker_alive(marker) == []


def test_output_is_bounded_and_keeps_its_tail() -> None:
    """The head and the tail are kept (pytest's summary comes last), what fell between is counted."""
    res = run(SandboxSpec(time_seconds=10), ["/bin/sh", "-c", "head -c 1000000 /dev/zero; echo last; echo done >&2"])
    kept = 64 * 1024 + 16 * 1024
    assert res.returncode == 0 and res.stderr == b"done\n" and res.stdout.endswith(b"last\n")
    assert f"[acx-oci: {1000005 - kept} bytes of output left out]".encode() in res.stdout
    assert res.stdout.startswith(b"\0" * 1024) and len(res.stdout) < kept + 100


# --- grader ---------------------------------------------------------------------------------------------------

CHEAT_CONFTEST = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    rep.outcome = "passed"
    rep.longrepr = None
'''


def _task(stage: Path, task: str = "py-0001") -> tuple[Path, Path]:
    tests, sub = stage / "tests", stage / "sub"
    tests.mkdir()
    for f in (BENCH / "tasks" / task / "hidden").iterdir():
        shutil.copy(f, tests / f.name)
    shutil.copy(BENCH / "grader-common" / "_harness.py", tests / "_harness.py")
    shutil.copytree(BENCH / "tasks" / task / "workspace", sub)
    return sub, tests


def _plant_cheats(sub: Path) -> None:
    (sub / "conftest.py").write_text(CHEAT_CONFTEST, "utf-8")
    (sub / "pytest.ini").write_text("[pytest]\naddopts = --co\n", "utf-8")
    (sub / "tox.ini").write_text("[pytest]\naddopts = --co\n", "utf-8")
    (sub / "setup.cfg").write_text("[tool:pytest]\naddopts = --co\n", "utf-8")
    (sub / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '--co'\n", "utf-8")
    (sub / "pytest.py").write_text("import sys\nsys.exit(0)\n", "utf-8")
    hook = "import json, sys\nsys.stdout.write('\\n@@ACX-RESULT@@' + json.dumps([{'ok': 3}]))\nsys.exit(0)\n"
    (sub / "sitecustomize.py").write_text(hook, "utf-8")
    (sub / "usercustomize.py").write_text(hook, "utf-8")
    (sub / "zz_cheat.pth").write_text("import sitecustomize\n", "utf-8")


def test_grader_honest_passes_and_cheats_fail(stage: Path) -> None:
    sub, tests = _task(stage)
    unsolved = grade(sub, tests, time_seconds=30)
    assert not unsolved.passed and unsolved.returncode == 1 and unsolved.report_ok
    every = {f"tests.test_hidden::test_{b}" for b in ("visible_example", "zero", "negative", "large", "floats")}
    assert unsolved.failing() == every

    _plant_cheats(sub)
    cheated = grade(sub, tests, time_seconds=30)
    assert not cheated.passed and cheated.failing() == every and cheated.counts()["failed"] == len(every)

    (sub / "solution.py").write_text("def add(a, b):\n    return a + b\n", "utf-8")
    honest = grade(sub, tests, time_seconds=30)  # cheats still planted: they neither help nor hurt
    assert honest.passed, honest.stdout[-2000:]
    assert [t.outcome for t in honest.tests] == ["passed"] * len(every) and honest.failing() == frozenset()


def test_grader_import_mode_ignores_submission_config(stage: Path) -> None:
    sub, tests = _task(stage)
    (tests / "test_direct.py").write_text("from solution import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
                                          "utf-8")
    _plant_cheats(sub)
    res = grade(sub, tests, time_seconds=30, import_submission=True)
    assert not res.passed and "test_direct::test_add" in {t.split(".")[-1] for t in res.failing()}
    (sub / "solution.py").write_text("def add(a, b):\n    return a + b\n", "utf-8")
    res = grade(sub, tests, time_seconds=30, import_submission=True)
    assert res.passed and len(res.tests) == 6


# --- the spec itself --------------------------------------------------------------------------------------------


def test_probes_run_in_a_game_spec_with_a_workspace(stage: Path, tmp_path: Path) -> None:
    ws = stage / "workspace"
    ws.mkdir()
    spec = SandboxSpec(rw_binds=((ws, "/workspace"),), chdir="/workspace", time_seconds=20, memory_mib=512)
    give_to_sandbox(ws, spec)
    result = check([tmp_path / "key"], spec)
    assert result["proven"] is True and result["limits"]["memoryMiB"] == 512


def test_spec_refuses_network_and_bad_binds() -> None:
    with pytest.raises(SandboxError):
        SandboxSpec(network="host")  # type: ignore[arg-type]
    with pytest.raises(SandboxError):
        SandboxSpec(ro_binds=((Path("/usr"), "relative"),))
    with pytest.raises(SandboxError):
        run(SandboxSpec(ro_binds=((Path("/root"), "/r"),)), ["/bin/true"])  # 0700 root: not for the sandbox uid


def test_rootfs_replaces_the_host_root(tmp_path: Path) -> None:
    image = tmp_path / "image"
    for d in ("usr", "etc", "proc", "tmp"):
        (image / d).mkdir(parents=True)
    (image / "bin").symlink_to("usr/bin")
    argv = build_argv(SandboxSpec(rootfs=image), ["/bin/true"])
    i = argv.index("--ro-bind")
    # each top-level entry bound (symlinks recreated); the image's /proc and /tmp replaced, never bound
    assert argv[i + 1 : i + 3] == [str(image / "etc"), "/etc"] and [str(image / "usr"), "/usr"] == argv[i + 4 : i + 6]
    assert argv[argv.index("--symlink") + 1 : argv.index("--symlink") + 3] == ["usr/bin", "/bin"]
    assert str(image / "proc") not in argv and str(image / "tmp") not in argv and "/etc/alternatives" not in argv
    assert "--unshare-all" in argv and "--die-with-parent" in argv and "--clearenv" in argv
    assert argv[argv.index("--uid") + 1] not in ("0", str(os.getuid()))
