"""A layout directory someone handed us: ``index.json`` as a FIFO hung every read of the layout (an ``open``
for reading blocks until a writer comes, and no deadline covers local files); now it is refused at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from acx_oci.errors import UsageError
from acx_oci.oci import open_store


def test_index_json_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    (root / "blobs" / "sha256").mkdir(parents=True)
    (root / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    os.mkfifo(root / "index.json")
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            open_store(f"oci:{root}:v1").resolve("v1")
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # release the blocked open before failing
        with open(os.open(root / "index.json", os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        t.join(5)
        pytest.fail("reading a layout whose index.json is a FIFO hung")
    assert isinstance(outcome[0], UsageError) and "expected a regular file, found a FIFO" in str(outcome[0])


def test_a_planted_lock_symlink_or_blobs_symlink_never_writes_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "bundle"
    root.mkdir()
    (root / ".index.json.lock").symlink_to(outside / "created-by-acx")  # dangling: O_CREAT made its target
    store = open_store(f"oci:{root}:v1")
    with pytest.raises(UsageError):
        store.push_blob(b"x", "application/octet-stream")
        store.push_manifest(b'{"schemaVersion":2}', "application/vnd.oci.image.manifest.v1+json", "v1")
    assert not (outside / "created-by-acx").exists()

    root2 = tmp_path / "bundle2"
    root2.mkdir()
    (root2 / "blobs").symlink_to(outside)
    with pytest.raises(UsageError, match="found a symlink"):
        open_store(f"oci:{root2}:v1").push_blob(b"y", "application/octet-stream")
    assert list(outside.iterdir()) == []
