"""A layout directory someone handed us: ``index.json`` as a FIFO hung every read of the layout (an ``open``
for reading blocks until a writer comes, and no deadline covers local files); now it is refused at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from acx_oci.errors import UsageError
from acx_oci.oci.open import open_store


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
