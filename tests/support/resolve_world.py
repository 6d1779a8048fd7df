"""The registry world for resolve end to end: a pushed cartridge, a sealed benchmark, trust, one attestation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.crypto import canonical
from acx_oci.model import credential as cred_mod
from acx_oci.oci import Descriptor, open_store
from acx_oci.services.artifacts import push_attestation
from acx_oci.trust import load_identity

from .cli import cli, ok

CAP = "build-dag[snowflake+airflow+dbt]@data-engineering"


@dataclass
class World:
    tmp: Path
    registry: str
    repo: str
    cart: dict[str, Any]
    bench: dict[str, Any]
    trust: Path
    publisher: Path
    verifier: Path
    verifier_did: str
    attest_out: dict[str, Any]
    kind: str = "distribution"  # the registry: "distribution" (tag-schema fallback) or "ggcr" (Referrers API)


def push_cartridge(tmp: Path, registry: str, repo: str, name: str, publisher: Path) -> dict[str, Any]:
    ok(cli("cartridge", "init", str(tmp / name), "--id", f"io.example/{name}", "--version", "1.0.0",
           "--capability", CAP))
    pushed: dict[str, Any] = ok(cli("cartridge", "push", str(tmp / name), f"{registry}/{repo}:1.0.0",
                                    "--key", str(publisher), "--json"))
    return pushed


def build_resolve_world(tmp: Path, registry: str) -> World:
    """``acx/strong`` pushed, the benchmark sealed to the verifier, a trust file, and one ``attest`` run."""
    ok(cli("keygen", str(tmp / "publisher")))
    verifier_did = ok(cli("keygen", str(tmp / "verifier"), "--did", "did:web:verifier.acx.example"))
    cart = push_cartridge(tmp, registry, "acx/strong", "strong", tmp / "publisher.key")
    ok(cli("benchmark", "demo", str(tmp / "bench")))
    bench = ok(cli("benchmark", "push", str(tmp / "bench"), f"{registry}/acx/bench:2026.07.1",
                   "--seal-to", str(tmp / "verifier.did.json"), "--json"))
    publisher_did = json.loads((tmp / "publisher.did.json").read_text())["id"]
    trust = tmp / "trust.yaml"
    trust.write_text(
        f"publishers:\n  - id: {publisher_did}\n"
        f"verifiers:\n  - id: {verifier_did}\n    didDocument: verifier.did.json\n"
        f"benchmarks:\n  - id: acx-bench-dag-de\n    version: '2026.07.1'\n"
        f"    digest: {bench['benchmarkDigest']}\n    heldOutSliceDigest: {bench['heldOutSliceDigest']}\n"
        "solvers: [rom, reference]\n"
    )
    out = ok(cli("attest", f"{registry}/acx/strong:1.0.0", "--benchmark", f"{registry}/acx/bench:2026.07.1",
                 "--key", str(tmp / "verifier.key"), "--issuer", verifier_did, "--competence", "33",
                 "--state", str(tmp / "state"), "-o", str(tmp / "att"), "--json"))
    assert out["issued"] is True and out["attestationDigest"].startswith("sha256:")
    return World(tmp, registry, "acx/strong", cart, bench, trust, tmp / "publisher.key", tmp / "verifier.key",
                 verifier_did, out)


def push_self_issued(w: World, repository: str, subject: Descriptor | None = None,
                     credential_id: str = "urn:uuid:00000000-0000-4000-8000-0000000000c0") -> str:
    """Push, to ``registry/repository``, the world's credential re-issued by the cartridge's own publisher (a
    self-issued credential: ``issuer_untrusted``) as an attestation of ``subject`` (default: the cartridge).
    Returns the attestation manifest digest."""
    honest = json.loads((w.tmp / "att" / "credential.json").read_text())
    publisher = load_identity(w.publisher)
    forged = {k: v for k, v in honest.items() if k != "proof"}
    forged["issuer"] = {"id": publisher.did, "type": ["Profile"]}
    forged["id"] = credential_id
    signed = cred_mod.sign_credential(forged, publisher, publisher.verification_method, honest["validFrom"])
    store = open_store(f"{w.registry}/{repository}")
    target = subject or store.resolve(w.cart["manifestDigest"])
    return push_attestation(store, target, canonical(signed), []).digest
