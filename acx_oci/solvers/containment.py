"""The containment proof of a run's game spec, model egress included.

For an offline ROM this is :func:`acx_oci.sandbox.check` in the games' spec. For a ROM whose network is
``model`` the spec binds a proxy socket exactly as the games' does, and a real proxy serves it while the
probes run (:class:`acx_oci.egress.probe.ProbeEgress`: the verifier's key injected, the upstream a loopback
stand-in that answers 409, so no probe can reach or bill the provider). On top of the usual probes: the
provider's host and port (by name and by every address it resolves to here) are unreachable by TCP from
inside, and the model probes (:mod:`acx_oci.sandbox.modelprobes`) show every forbidden request refused and
recorded, none forwarded, and the real key nowhere an agent could read it. Any failing probe leaves the run
unproven, so every game is withheld (NOT ISSUED ``containment_unproven``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from secrets import token_hex
from typing import Any
from urllib.parse import urlsplit

from acx_oci.egress import ModelSetup, ProbeEgress
from acx_oci.model import modelapi as ma
from acx_oci.sandbox import PREFIX, SandboxSpec, check, drops_privilege, model_verdicts, run_model_probes

RESOLVE_SECONDS = 3.0
MAX_ADDRESSES = 8


def _resolve(host: str, port: int) -> list[str]:
    """The host's addresses as this machine resolves them (bounded in time: a dead resolver is no address)."""
    found: list[str] = []

    def work() -> None:
        with contextlib.suppress(OSError, UnicodeError):
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            found.extend(sorted({str(i[4][0]) for i in infos}))

    t = threading.Thread(target=work, name="acx-probe-resolve", daemon=True)
    t.start()
    t.join(RESOLVE_SECONDS)
    return list(found)[:MAX_ADDRESSES]


def upstream_target(entry: ma.ModelEntry) -> tuple[str, list[tuple[str, str, int]]]:
    """The provider's ``host:port`` (what a CONNECT or an absolute URI would aim at) and the endpoints the
    sandbox must not reach: ``(label, host, port)`` by name and by each address; labels name no address."""
    parts = urlsplit(entry.base_url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    shown = f"[{host}]" if ":" in host else host
    try:
        ipaddress.ip_address(host)
        literal = True
    except ValueError:
        literal = False
    if literal:
        return f"{shown}:{port}", [("the model upstream directly", host, port)]
    endpoints = [("the model upstream directly (by name)", host, port)]
    endpoints += [(f"the model upstream directly (address {i})", addr, port)
                  for i, addr in enumerate(_resolve(host, port), 1)]
    return f"{shown}:{port}", endpoints


def model_socket(spec: SandboxSpec) -> Path:
    """The host side of the spec's model socket bind (the games' spec binds it at ``SOCKET_INSIDE``)."""
    for src, dst in spec.rw_binds:
        if dst == ma.SOCKET_INSIDE:
            return src
    raise ValueError(f"the spec binds no model socket at {ma.SOCKET_INSIDE}")


def check_game(secrets: Sequence[Path], spec: SandboxSpec, model: ModelSetup | None = None) -> dict[str, Any]:
    """The probes in a game's spec; with ``model``, a probe proxy on the spec's own socket bind and the
    model egress probes too (see the module docstring). Never raises for a sandbox that cannot start."""
    if model is None:
        return check(secrets, spec)
    owner = (spec.host_uid, spec.host_gid) if drops_privilege() else None
    hostport, endpoints = upstream_target(model.entry)
    # A replay holds no key (it never calls upstream); its probe proxy injects a throwaway one, searched for alike.
    key = model.key or "acx-probe-" + token_hex(16)
    with ProbeEgress(model.entry, key, model_socket(spec), owner) as egress:
        base = check(secrets, spec, endpoints)
        report, error = (None, "not run: the sandbox probes failed to run") if base.get("error") else \
            run_model_probes(spec, model.declared, hostport)
    assert egress.run is not None
    probes = [] if report is None else model_verdicts(report, egress.run.record, egress.run.transcript,
                                                      egress.upstream_saw, model.declared, key)
    proof = {**base, "probes": [*(base.get("probes") or []), *probes],
             "proven": bool(base.get("proven")) and report is not None and all(p["ok"] for p in probes),
             "modelEgress": {**model.declared.to_json(), "socket": ma.SOCKET_INSIDE, "port": ma.MODEL_PORT,
                             "probeUpstream": "verifier loopback stand-in answering 409; the provider is never "
                                              "called by the probes"}}
    if error and not base.get("error"):
        proof["error"] = PREFIX + error
    return proof
