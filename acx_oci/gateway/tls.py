"""TLS on the gateway's listener (``--tls-cert/--tls-key``, ``--tls-client-ca`` for mutual TLS).

The context is built, and its files read, before anything binds: a missing file, a key that does not match
the certificate or a CA file with no certificate in it is one usage error, not a traceback from inside the
server. Protocol floor TLS 1.2, ALPN ``http/1.1`` (the server speaks nothing else). With a client CA, a client
that offers no certificate, or one the CA did not issue, is refused in the handshake: it never reaches HTTP.
The handshake is bounded by the request-receipt deadline (see :func:`handshake_seconds`), because a connection
is counted against the connection limit only once its handshake is done.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from acx_oci.errors import UsageError


@dataclass(frozen=True)
class TlsFiles:
    """The PEM files ``acx-oci gateway`` was given: its certificate chain, key, and the client CA (mutual TLS)."""

    cert: Path
    key: Path
    client_ca: Path | None = None


def check_options(cert: Path | None, key: Path | None, client_ca: Path | None) -> TlsFiles | None:
    """The CLI's three options as one value; None for plain HTTP. Half a pair is refused, so an operator who
    meant TLS never gets a plaintext listener by a typo."""
    if cert is None and key is None:
        if client_ca is not None:
            raise UsageError("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)")
        return None
    if cert is None or key is None:
        raise UsageError("--tls-cert and --tls-key go together: give both, or neither for plain HTTP")
    return TlsFiles(cert, key, client_ca)


def server_context(files: TlsFiles) -> ssl.SSLContext:
    """The listener's TLS context, checked now (see the module docstring)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    for option, path in (("--tls-cert", files.cert), ("--tls-key", files.key), ("--tls-client-ca", files.client_ca)):
        if path is not None and not path.is_file():
            raise UsageError(f"{option} {path}: no such file")
    try:
        ctx.load_cert_chain(files.cert, files.key)
    except ssl.SSLError as exc:
        raise UsageError(f"--tls-cert {files.cert} / --tls-key {files.key}: not a PEM certificate chain and its "
                         f"matching private key ({exc.reason or exc})") from None
    except OSError as exc:
        raise UsageError(f"--tls-cert/--tls-key: cannot read ({exc.strerror or exc})") from None
    if files.client_ca is not None:
        try:
            ctx.load_verify_locations(cafile=files.client_ca)
        except (ssl.SSLError, OSError) as exc:
            raise UsageError(f"--tls-client-ca {files.client_ca}: no PEM CA certificate in it ({exc})") from None
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def handshake_seconds(header_seconds: float) -> float:
    """How long a TLS handshake may take: the request-receipt deadline (asyncio's default is 60 s, and a
    connection still in its handshake is not yet counted by the connection guard)."""
    return max(1.0, header_seconds)
