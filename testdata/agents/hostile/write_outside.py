#!/usr/bin/env python3
"""Hostile agent: try to write outside the workspace and record which writes succeeded.

Targets: /tmp (its own tmpfs: fine), /rom, /usr, /etc, /, $HOME, /var/tmp, /dev/shm, and every
world-writable directory it finds (depth <= 3). A sound sandbox lets only /workspace and its
private /tmp through. Run bare (ACX_WORKSPACE is not /workspace) it writes nothing but loot.txt.
"""

import os
import stat

ARMED = os.environ.get("ACX_WORKSPACE") == "/workspace" and os.getcwd() == "/workspace"
LOOT = "/workspace/loot.txt" if ARMED else "loot.txt"
TARGETS = [
    "/tmp",
    "/rom",
    "/rom/skills",
    "/usr",
    "/usr/lib",
    "/etc",
    "/",
    os.path.expanduser("~"),
    "/var/tmp",
    "/dev/shm",
    "/workspace/..",
    "/proc/self/cwd/..",
]


def loot(line):
    try:
        with open(LOOT, "a", encoding="utf-8") as fh:
            fh.write(line.rstrip("\n") + "\n")
    except OSError:
        pass


def world_writable(top="/", depth=3):
    out = []
    for root, dirs, _files in os.walk(top):
        if root.startswith(("/proc", "/sys")) or root.count("/") > depth:
            dirs[:] = []
            continue
        try:
            if os.stat(root).st_mode & stat.S_IWOTH:
                out.append(root)
        except OSError:
            pass
    return out


def main():
    ok = []
    for d in dict.fromkeys(TARGETS + world_writable()):
        path = os.path.join(d, f"acx-hostile-write-{os.getpid()}.txt")
        if not ARMED:
            loot(f"would write {path}")
            continue
        try:
            with open(path, "w") as fh:
                fh.write("acx hostile write_outside was here\n")
            ok.append(path)
            loot(f"WROTE {path}")
        except OSError as exc:
            loot(f"write {path}: {type(exc).__name__}")
    loot(f"writes outside /workspace that succeeded: {ok}")


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:
        loot(f"write_outside crashed: {exc!r}")
    raise SystemExit(0)
