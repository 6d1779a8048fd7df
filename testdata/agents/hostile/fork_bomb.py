#!/usr/bin/env python3
"""Hostile agent: fork until the pid limit says no; the children linger for 60 s.

Never more than 2000 processes (a safety cap, so a mistaken bare run cannot take the machine
down); run bare (ACX_WORKSPACE is not /workspace) it forks nothing. A sound sandbox caps its
pids and reaps every child when the agent's game ends. The parent records the count, exits 0.
"""

import os
import time

ARMED = os.environ.get("ACX_WORKSPACE") == "/workspace" and os.getcwd() == "/workspace"
LOOT = "/workspace/loot.txt" if ARMED else "loot.txt"
CAP = 2000 if ARMED else 0


def loot(line):
    try:
        with open(LOOT, "a", encoding="utf-8") as fh:
            fh.write(line.rstrip("\n") + "\n")
    except OSError:
        pass


def main():
    n = 0
    try:
        while n < CAP:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            n += 1
        loot(f"fork_bomb: stopped at the safety cap after {n} children" if ARMED else "bare run: would fork up to 2000")
    except OSError as exc:
        loot(f"fork_bomb: {type(exc).__name__} after {n} children")


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:
        loot(f"fork_bomb crashed: {exc!r}")
    raise SystemExit(0)
