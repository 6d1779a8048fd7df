#!/usr/bin/env python3
"""Hostile agent: write huge files in /workspace and /tmp until ENOSPC / EFBIG (or a limit kills it).

Records how much it wrote. A sound sandbox bounds both (tmpfs size, workspace quota or output
limit) and the verifier copes with an over-sized submission. Safety cap: 8 GiB per directory in
the sandbox; run bare (ACX_WORKSPACE is not /workspace) it writes nothing but loot.txt. Exits 0.
"""

import errno
import os

ARMED = os.environ.get("ACX_WORKSPACE") == "/workspace" and os.getcwd() == "/workspace"
LOOT = "/workspace/loot.txt" if ARMED else "loot.txt"
CAP_MIB = 8 * 1024
CHUNK = b"\0" * (1 << 20)


def loot(line):
    try:
        with open(LOOT, "a", encoding="utf-8") as fh:
            fh.write(line.rstrip("\n") + "\n")
    except OSError:
        pass


def fill(path):
    mib = 0
    try:
        with open(path, "wb") as fh:
            while mib < CAP_MIB:
                fh.write(CHUNK)
                mib += 1
                if mib % 256 == 0:
                    fh.flush()
        return f"fill_disk {path}: reached the {CAP_MIB} MiB safety cap"
    except OSError as exc:
        return f"fill_disk {path}: {errno.errorcode.get(exc.errno, exc.errno)} after {mib} MiB"


def main():
    loot("fill_disk: starting")
    for path in ("/workspace/acx-big.bin", "/tmp/acx-big.bin"):
        loot(fill(path) if ARMED else f"would fill {path} until ENOSPC/EFBIG")


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:
        loot(f"fill_disk crashed: {exc!r}")
    raise SystemExit(0)
