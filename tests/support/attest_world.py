"""The registry world for ``acx-oci attest``: keys, a pushed cartridge, a benchmark sealed to two verifiers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.oci import open_store, parse_reference
from acx_oci.services.verifier import AttestRequest, Issued, SandboxOptions
from acx_oci.services.verifier.attest import attest
from acx_oci.solvers import ReferenceSolver
from acx_oci.trust import load_identity

from .cli import cli, ok

CAP = "build-dag[snowflake+airflow+dbt]@data-engineering"


@dataclass
class World:
    tmp: Path
    cart: str
    bench: str
    publisher_did: str
    verifier: Path
    verifier2: Path
    verifier_did: str = "did:web:verifier.example"
    verifier2_did: str = ""


def build_attest_world(tmp: Path, registry: str) -> World:
    """Publisher and two verifier keys, the demo cartridge and the benchmark sealed to both verifiers."""
    publisher_did = ok(cli("keygen", str(tmp / "publisher"))).strip()
    ok(cli("keygen", str(tmp / "verifier"), "--did", "did:web:verifier.example"))
    verifier2_did = ok(cli("keygen", str(tmp / "verifier2"))).strip()
    ok(cli("cartridge", "init", str(tmp / "agent"), "--id", "io.example/dag-agent", "--version", "1.0.0",
           "--capability", CAP))
    cart = ok(cli("cartridge", "push", str(tmp / "agent"), f"{registry}/acme/dag-agent:1.0.0", "--key",
                  str(tmp / "publisher.key"), "--json"))
    ok(cli("benchmark", "demo", str(tmp / "bench")))
    bench = ok(cli("benchmark", "push", str(tmp / "bench"), f"{registry}/acme/bench:2026.07.1",
                   "--seal-to", str(tmp / "verifier.did.json"), "--seal-to", str(tmp / "verifier2.did.json"),
                   "--json"))
    w = World(tmp, cart["reference"].split("@")[0], bench["reference"].split("@")[0], publisher_did,
              tmp / "verifier", tmp / "verifier2", verifier2_did=verifier2_did)
    return w


def attested_level(tmp: Path, registry: str) -> dict[str, Any]:
    """The attest world with its cartridge attested (the level published, competence 33) and the verifier's
    PEM at ``tmp/verifier.pub``: what the cosign interop tests verify (the cartridge pinned by digest)."""
    w = build_attest_world(tmp, registry)
    ident = load_identity(f"{w.verifier}.key", did=w.verifier_did)
    outcome = attest(AttestRequest(cartridge_ref=w.cart, benchmark_ref=w.bench, verifier=ident,
                                   solver=ReferenceSolver(33), out_dir=tmp / "out", state_dir=tmp / "state",
                                   sandbox=SandboxOptions(secret_paths=(Path(f"{w.verifier}.key"),))))
    assert isinstance(outcome, Issued) and outcome.attestation_digest, outcome
    ok(cli("keys", "export-pem", f"{w.verifier}.key", "-o", str(tmp / "verifier.pub")))
    with open_store(parse_reference(w.cart)) as store:
        digest = store.resolve(parse_reference(w.cart).target).digest
    credential = json.loads((tmp / "out" / "credential.json").read_bytes())
    return {"tmp": tmp, "ref": f"{w.cart.rsplit(':', 1)[0]}@{digest}", "digest": digest, "credential": credential,
            "key": Path(f"{w.verifier}.key"), "ident": ident, "world": w}
