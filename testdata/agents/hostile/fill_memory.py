#!/usr/bin/env python3
"""Hostile agent: allocate memory until MemoryError (or the OOM killer / cgroup limit stops it).

Records progress in loot.txt every 64 MiB, so the verifier can see how far it got. A sound
sandbox enforces its memory limit without harming the host. Safety cap: 16 GiB inside the
sandbox, 64 MiB when run bare (ACX_WORKSPACE is not /workspace). Exits 0 if still alive.
"""

import os

ARMED = os.environ.get("ACX_WORKSPACE") == "/workspace" and os.getcwd() == "/workspace"
LOOT = "/workspace/loot.txt" if ARMED else "loot.txt"
CAP_MIB = 16 * 1024 if ARMED else 64


def loot(line):
    try:
        with open(LOOT, "a", encoding="utf-8") as fh:
            fh.write(line.rstrip("\n") + "\n")
    except OSError:
        pass


def main():
    hog, mib = [], 0
    try:
        while mib < CAP_MIB:
            hog.append(bytearray(b"\x01" * (16 << 20)))  # touched, so really resident
            mib += 16
            if mib % 64 == 0:
                loot(f"fill_memory: {mib} MiB allocated")
        loot(f"fill_memory: reached the {CAP_MIB} MiB safety cap")
    except MemoryError:
        hog.clear()
        loot(f"fill_memory: MemoryError after {mib} MiB")


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:
        loot(f"fill_memory crashed: {exc!r}")
    raise SystemExit(0)
