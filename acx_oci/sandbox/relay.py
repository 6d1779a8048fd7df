"""The relay inside the sandbox: 127.0.0.1:PORT to the model socket, and nothing else.

Why a relay: SDKs speak HTTP over TCP to a base URL, but the sandbox's network namespace stays empty;
its only way out is one Unix socket bound in (:data:`acx_oci.model.modelapi.SOCKET_INSIDE`). The relay runs
as the agent's uid and is *not* trusted — it copies bytes, and every rule is enforced by the verifier's
proxy on the other side of the socket. It binds the port before the agent starts, runs the ROM's own
command as its child and exits with the child's status, so the run is the ROM's command as signed.
"""

from __future__ import annotations

from collections.abc import Sequence

from acx_oci.model import MODEL_PORT, SOCKET_INSIDE

RELAY = r"""
import os, socket, sys, threading
port, path, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(64)
pid = os.fork()
if pid == 0:
    srv.close()
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(c):
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        u.connect(path)
    except OSError:
        c.close()
        return
    t = threading.Thread(target=pump, args=(u, c), daemon=True)
    t.start()
    pump(c, u)
    t.join()
    c.close()
    u.close()
def accept():
    while True:
        try:
            c, _ = srv.accept()
        except OSError:
            return
        threading.Thread(target=serve, args=(c,), daemon=True).start()
threading.Thread(target=accept, daemon=True).start()
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(status)
os._exit(128 - code if code < 0 else code)
"""


def relay_argv(command: Sequence[str], python: str = "/usr/bin/python3") -> list[str]:
    """The argv a game runs: the relay (isolated Python, no site), which then runs ``command`` unchanged."""
    return [python, "-I", "-S", "-c", RELAY, str(MODEL_PORT), SOCKET_INSIDE, "--", *command]
