"""Measure a blob push + download in a fresh process: ``python -m tests.support.memprobe MODE REF SRC DEST``.

``ru_maxrss`` is a process-lifetime high-water mark, so inside the pytest process it cannot see a
spike once any earlier test went higher. Nor can a child's ``ru_maxrss`` (or the parent's
``RUSAGE_CHILDREN``): Linux carries the high-water mark of the pre-``exec`` image into it, and
``subprocess`` forks/vforks from the big pytest process. So this probe reads its own memory
descriptor's counters, which start fresh at ``exec``: ``VmRSS`` (now) before the transfer and
``VmHWM`` (peak) after it, from ``/proc/self/status`` (KiB). Without ``/proc`` it falls back to
``ru_maxrss``.

MODE ``stream``: push SRC to REF (a fresh repository, so it really uploads), then fetch it to DEST.
MODE ``control``: read SRC into memory -- proves the measurement sees a whole-blob load.
Prints one JSON object: ``before``, ``afterPush`` (``stream``), ``after`` (KiB), and ``digest``/``size``.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

from acx_oci.oci import RegistryStore, StoreOptions, parse_reference


def _status_kib(field: str) -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss_now_kib() -> int:
    return _status_kib("VmRSS")


def rss_peak_kib() -> int:
    return _status_kib("VmHWM")


def main(argv: list[str]) -> dict[str, object]:
    mode, ref, src, dest = argv
    store = RegistryStore(parse_reference(ref), StoreOptions())
    out: dict[str, object] = {"before": rss_now_kib(), "peakBefore": rss_peak_kib(),
                              "ruMaxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}
    if mode == "control":
        out["size"] = len(Path(src).read_bytes())
    elif mode == "stream":
        d = store.push_blob_file(Path(src), "application/octet-stream")
        out["afterPush"] = rss_peak_kib()
        store.fetch_blob_to_file(d.digest, Path(dest))
        out.update(digest=d.digest, size=d.size)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    out["after"] = rss_peak_kib()
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
