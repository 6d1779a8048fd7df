"""Issue 14 item 4: the client never reads more than was promised, and leaves nothing behind.

A blob read stops at its descriptor's size: a registry (here the fault proxy in front of
the real Distribution) that streams more is an ``IntegrityError`` (exit 1), nothing is
written and no temporary is left, also when the pull is killed with SIGTERM mid-download.
The OCI layout store refuses blob files that are symlinks or not regular files.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acx_oci.errors import IntegrityError
from acx_oci.model import MEDIA_ROM_FILE
from acx_oci.oci import StoreOptions, open_store

from ..support.cli import cli, ok
from ..support.faultproxy import FaultProxy
from ..support.registry import Registry
from ..support.resolve_world import push_cartridge

ROOT = Path(__file__).resolve().parent.parent.parent
REPO = "acx/bounds"


@pytest.fixture(scope="module")
def pushed(tmp_path_factory: pytest.TempPathFactory, own_registry: Registry) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("bounds")
    ok(cli("keygen", tmp / "publisher"))
    out = push_cartridge(tmp, own_registry.host, REPO, "agent", tmp / "publisher.key")
    store = open_store(f"{own_registry.host}/{REPO}:1.0.0", StoreOptions())
    files = [ly for ly in store.fetch_manifest("1.0.0").layers if ly.media_type == MEDIA_ROM_FILE]
    assert files
    return {"dir": tmp / "agent", "files": files, "digest": out["manifestDigest"]}


def leftovers(where: Path) -> list[str]:
    return sorted(str(p.relative_to(where)) for p in where.rglob("*"))


@pytest.mark.parametrize("declare", [False, True], ids=["close-delimited", "lying-content-length"])
def test_layer_streaming_past_its_size_exit_1_nothing_written(declare: bool, pushed: dict[str, object],
                                                              proxy: FaultProxy, tmp_path: Path) -> None:
    layer = pushed["files"][0]  # type: ignore[index]
    proxy.add("extra", method="GET", path=f"/blobs/{layer.digest}", extra=4 * 1024 * 1024, declare=declare,
              interval=0)
    work = tmp_path / "work"
    work.mkdir()
    res = cli("pull", f"{proxy.host}/{REPO}:1.0.0", "-o", work / "out", "--allow-unsigned")
    assert res.exit_code == 1, res.output
    assert f"more bytes than the {layer.size} its descriptor gives" in res.output
    assert leftovers(work) == []
    assert ("GET", f"/v2/{REPO}/blobs/{layer.digest}", "extra") in proxy.log


def test_library_read_stops_at_the_descriptor_size(pushed: dict[str, object], proxy: FaultProxy,
                                                   tmp_path: Path) -> None:
    layer = pushed["files"][0]  # type: ignore[index]
    proxy.add("extra", method="GET", path=f"/blobs/{layer.digest}", extra=64 * 1024 * 1024, interval=0)
    store = open_store(f"{proxy.host}/{REPO}:1.0.0", StoreOptions())
    with pytest.raises(IntegrityError, match="more bytes than"):
        store.fetch_blob_to_file(layer.digest, tmp_path / "blob", size=layer.size)
    with pytest.raises(IntegrityError, match="more bytes than"):
        store.fetch_blob(layer.digest, size=layer.size)
    assert leftovers(tmp_path) == []
    # the honest answer still reads (the bound is the promise, not a guess)
    proxy.clear()
    store.fetch_blob_to_file(layer.digest, tmp_path / "blob", size=layer.size)
    assert (tmp_path / "blob").stat().st_size == layer.size


@pytest.mark.parametrize(("sig", "code", "said"), [(signal.SIGTERM, 143, "terminated"),
                                                   (signal.SIGINT, 130, "interrupted")], ids=["TERM", "INT"])
def test_signal_mid_download_leaves_nothing(sig: signal.Signals, code: int, said: str, pushed: dict[str, object],
                                            proxy: FaultProxy, tmp_path: Path) -> None:
    """The layer trickles; SIGTERM (or Ctrl-C) while it downloads: no output dir, no staging, no temporary."""
    layer = pushed["files"][0]  # type: ignore[index]
    proxy.add("trickle", method="GET", path=f"/blobs/{layer.digest}", interval=0.5, head_fast=True)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "acx_oci", "pull", f"{proxy.host}/{REPO}:1.0.0", "-o",
                             str(work / "out"), "--allow-unsigned", "--timeout", "60", "--deadline", "60"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # Ctrl-C reaches a foreground command: a suite run as a background job (SIGINT
                            # ignored, inherited across exec) would otherwise start the pull deaf to it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end and not any(a == "trickle" for _, _, a in proxy.log):
            time.sleep(0.1)
        time.sleep(1.5)  # a few bytes in: the staging directory and the blob's temporary exist now
        assert proc.poll() is None
        assert any(p.name.startswith(".out.partial-") for p in work.iterdir()), leftovers(work)
        assert list(work.glob(".out.partial-*/**/.acx-blob-*")), leftovers(work)  # the blob's temporary
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)  # a wait, not a timing claim: a loaded machine is slow to exit
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert said in err
    assert leftovers(work) == []


def test_layout_refuses_a_symlinked_blob(pushed: dict[str, object], tmp_path: Path) -> None:
    """Even a symlink to the right bytes is refused: a layout blob must be a regular file."""
    layout = tmp_path / "layout"
    ok(cli("cartridge", "push", pushed["dir"], f"oci:{layout}:1.0.0", "--key",
           Path(str(pushed["dir"])).parent / "publisher.key"))
    layer = pushed["files"][0]  # type: ignore[index]
    blob = layout / "blobs" / "sha256" / layer.digest.split(":", 1)[1]
    elsewhere = tmp_path / "elsewhere"
    shutil.move(blob, elsewhere)
    blob.symlink_to(elsewhere)
    res = cli("pull", f"oci:{layout}:1.0.0", "-o", tmp_path / "out", "--allow-unsigned")
    assert res.exit_code == 2, res.output
    assert "expected a regular file, found a symlink" in res.output
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.partial-")]


def test_layout_refuses_a_fifo_blob_without_hanging(pushed: dict[str, object], tmp_path: Path) -> None:
    layout = tmp_path / "layout"
    ok(cli("cartridge", "push", pushed["dir"], f"oci:{layout}:1.0.0", "--key",
           Path(str(pushed["dir"])).parent / "publisher.key"))
    layer = pushed["files"][0]  # type: ignore[index]
    blob = layout / "blobs" / "sha256" / layer.digest.split(":", 1)[1]
    blob.unlink()
    os.mkfifo(blob)
    res = cli("pull", f"oci:{layout}:1.0.0", "-o", tmp_path / "out", "--allow-unsigned")
    assert res.exit_code == 2, res.output
    assert "expected a regular file, found a FIFO" in res.output
    assert not (tmp_path / "out").exists()
