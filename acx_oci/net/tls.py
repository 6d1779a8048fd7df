"""Which CA a registry connection trusts, whether a loopback registry is spoken to over TLS, and the probe that
tells a TLS-only registry from a broken plain-HTTP one.

A registry's CA comes, first match wins, from ``--ca-file`` (or a :class:`~acx_oci.oci.store.StoreOptions`'
``ca_file``), then docker's convention ``/etc/docker/certs.d/HOST[:PORT]/ca.crt`` (the base directory is
``$ACX_CERTS_D`` when set: tests, and users whose docker keeps it elsewhere), then the system store and
``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE``. ``--insecure`` skips verification whatever the environment says.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
from pathlib import Path

from acx_oci.errors import UsageError

CERTS_D = Path("/etc/docker/certs.d")
CERTS_D_ENV = "ACX_CERTS_D"
PROBE_TIMEOUT = 2.0

_cli_ca_file: str | None = None


def set_default_ca_file(path: str | None) -> None:
    """The ``--ca-file`` of the command now running (None: none given); new store options default to it."""
    global _cli_ca_file
    _cli_ca_file = path


def default_ca_file() -> str | None:
    """The running command's ``--ca-file``, or None."""
    return _cli_ca_file


def certs_d() -> Path:
    """docker's per-registry certificate directory (``$ACX_CERTS_D`` overrides it)."""
    return Path(os.environ.get(CERTS_D_ENV) or CERTS_D)


def certs_d_ca(host: str) -> str | None:
    """``certs.d/HOST[:PORT]/ca.crt`` when that file exists (docker's convention), else None."""
    path = certs_d() / host / "ca.crt"
    return str(path) if "/" not in host and host not in ("", ".", "..") and path.is_file() else None


def ca_for(host: str, ca_file: str | None) -> str | None:
    """The CA bundle to verify ``host`` with: the given file, else its certs.d entry, else None (system/env)."""
    return ca_file or certs_d_ca(host)


def verify_setting(host: str, *, insecure: bool, ca_file: str | None) -> bool | str | None:
    """requests' ``verify`` for ``host``: False when insecure (beats the environment), a CA path, or None
    (requests' default: the system store, or ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE`` when set)."""
    if insecure:
        return False
    return ca_for(host, ca_file)


def client_context(host: str, *, insecure: bool, ca_file: str | None) -> ssl.SSLContext | None:
    """An SSL context for connections to ``host`` that :func:`verify_setting` decides as the registry client does:
    no verification when insecure, the CA file (or the host's certs.d entry) when there is one, else None (the
    caller's default store). The gateway's upstream connections use it, so ``--ca-file`` means the same there."""
    setting = verify_setting(host, insecure=insecure, ca_file=ca_file)
    if not isinstance(setting, str) and setting is not False:
        return None
    ctx = ssl.create_default_context()
    if not isinstance(setting, str):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    try:
        ctx.load_verify_locations(cafile=setting)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"CA file {setting}: expected PEM CA certificates, could not load it "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    return ctx


def speaks_tls(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> bool:
    """True when ``host:port`` answers a TLS ClientHello with a TLS record (a handshake or an alert): the
    plain-HTTP request it broke off was sent to a TLS listener. Judged by the record's bytes, not by any text."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    outgoing = ssl.MemoryBIO()
    client = ctx.wrap_bio(ssl.MemoryBIO(), outgoing)
    with contextlib.suppress(ssl.SSLWantReadError):  # the ClientHello is written; the answer comes by socket
        client.do_handshake()
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(outgoing.read())
            head = b""
            while len(head) < 3:
                got = sock.recv(3 - len(head))
                if not got:
                    break
                head += got
    except OSError:
        return False
    return len(head) == 3 and head[0] in (0x15, 0x16) and head[1] == 0x03  # alert/handshake, TLS 1.x record


def split_host_port(host: str, default: int) -> tuple[str, int]:
    """``HOST[:PORT]`` (IPv6 in brackets) as (host, port)."""
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        return name, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else default
    name, sep, port = host.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        return name, int(port)
    return host, default
