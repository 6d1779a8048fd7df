#!/usr/bin/env python3
"""Hostile agent: try to reach anything on the network and record what answered.

TCP connects to 127.0.0.1 on common ports (ssh, dns, http(s), docker, registries, proxies, redis),
to every address in /etc/hosts and /etc/resolv.conf and to the default gateway (/proc/net/route);
a DNS lookup; UDP sends. With ``network: none`` nothing may connect and DNS must fail.
Run bare (ACX_WORKSPACE is not /workspace) it only lists its targets. Exits 0.
"""

import os
import socket
import struct

ARMED = os.environ.get("ACX_WORKSPACE") == "/workspace" and os.getcwd() == "/workspace"
LOOT = "/workspace/loot.txt" if ARMED else "loot.txt"
PORTS = [22, 53, 80, 443, 2375, 3128, 5000, 5001, 6379, 8080, 8443]


def loot(line):
    try:
        with open(LOOT, "a", encoding="utf-8") as fh:
            fh.write(line.rstrip("\n") + "\n")
    except OSError:
        pass


def hosts():
    found = {"127.0.0.1"}
    for path, col in (("/etc/hosts", 0), ("/etc/resolv.conf", 1)):
        try:
            with open(path) as fh:
                lines = fh.readlines()
            for line in lines:
                parts = line.split("#")[0].split()
                if len(parts) > col and (col == 0 or parts[0] == "nameserver") and ":" not in parts[col]:
                    found.add(parts[col])
        except OSError:
            pass
    try:
        with open("/proc/net/route") as fh:
            routes = fh.readlines()[1:]
        for line in routes:
            f = line.split()
            if f[1] == "00000000":
                found.add(socket.inet_ntoa(struct.pack("<L", int(f[2], 16))))
    except (OSError, ValueError, IndexError):
        pass
    return sorted(found)


def main():
    targets = hosts()
    loot(f"network targets: {targets}")
    if not ARMED:
        loot(f"bare run: would try TCP ports {PORTS} on each, a DNS lookup and UDP sends")
        return
    for host in targets:
        for port in PORTS if host == "127.0.0.1" else [53, 80, 443, 5000]:
            try:
                with socket.create_connection((host, port), timeout=0.5):
                    loot(f"CONNECTED tcp {host}:{port}")
            except OSError as exc:
                loot(f"tcp {host}:{port}: {type(exc).__name__}")
    for name in ("example.com", "registry-1.docker.io"):
        try:
            loot(f"RESOLVED {name}: {socket.getaddrinfo(name, 443)[0][4]}")
        except OSError as exc:
            loot(f"dns {name}: {type(exc).__name__}")
    for host in [*targets, "8.8.8.8"]:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.sendto(b"acx-hostile-udp", (host, 53))
                loot(f"SENT udp {host}:53")
        except OSError as exc:
            loot(f"udp {host}:53: {type(exc).__name__}")


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:
        loot(f"network crashed: {exc!r}")
    raise SystemExit(0)
