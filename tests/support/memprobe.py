"""Measure a blob push + download in a fresh process: ``python -m tests.support.memprobe MODE REF SRC DEST``.

``ru_maxrss`` is a process-lifetime high-water mark, so inside the pytest process it cannot see a
spike once any earlier test went higher. Here the process is new: ``before`` is read after the
imports and store setup, so ``after - before`` is what the transfer itself added (KiB on Linux).
``before`` is the current resident size (``VmRSS``) where ``/proc`` has it, else ``ru_maxrss``: the
import-time high-water mark can sit well above the current size, and new allocations reuse it.

MODE ``stream``: push SRC to REF (a fresh repository, so it really uploads), then fetch it to DEST.
MODE ``control``: read SRC into memory -- proves the measurement sees a whole-blob load.
Prints one JSON object: ``before``, ``after`` (ru_maxrss, KiB), and ``digest``/``size`` for ``stream``.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

from acx_oci.oci.ref import parse_reference
from acx_oci.oci.registry import RegistryStore
from acx_oci.oci.store import StoreOptions


def _maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _rss_now_kib() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return _maxrss_kib()


def main(argv: list[str]) -> dict[str, object]:
    mode, ref, src, dest = argv
    store = RegistryStore(parse_reference(ref), StoreOptions())
    out: dict[str, object] = {"before": _rss_now_kib(), "maxrssBefore": _maxrss_kib()}
    if mode == "control":
        out["size"] = len(Path(src).read_bytes())
    elif mode == "stream":
        d = store.push_blob_file(Path(src), "application/octet-stream")
        out["afterPush"] = _maxrss_kib()
        store.fetch_blob_to_file(d.digest, Path(dest))
        out.update(digest=d.digest, size=d.size)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    out["after"] = _maxrss_kib()
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
