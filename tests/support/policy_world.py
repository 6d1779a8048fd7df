"""The registry world ``policy check`` and the gateway tests share.

The world is built once per registry through the CLI (keygen, benchmark
demo/push, cartridge init/push, attest, revoke); the self-issued credential is
pushed by hand with the library calls ``attest`` itself uses:

* ``acx/strong``      competence-33 agent, attested by the trusted verifier
* ``acx/unattested``  no attestation
* ``acx/revoked``     attested, then ``acx-oci revoke``
* ``acx/selfissued``  only a credential re-signed by the cartridge's own publisher key
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.crypto import dataintegrity
from acx_oci.model import level_result
from acx_oci.model.credential import sign_credential
from acx_oci.oci import MEDIA_MANIFEST, Descriptor, Store, open_store, parse_reference
from acx_oci.services.artifacts import publish_status_list, push_attestation
from acx_oci.trust import load_identity

from .cli import cli_expect as cli

POLICY = """apiVersion: acx.dev/policy/v1
rules:
  - repositories: ["acx/*"]
    require:
      capabilities:
        - taskType: build-dag
          stack: [airflow]
          minTier: senior
"""
CAPABILITY = "build-dag[snowflake+airflow+dbt]@data-engineering"


@dataclass
class World:
    registry: str
    dir: Path
    publisher_did: str
    verifier_did: str
    bench_ref: str
    trust: Path
    policy: Path
    digests: dict[str, str] = field(default_factory=dict)  # name -> cartridge manifest digest
    attestations: dict[str, str] = field(default_factory=dict)  # name -> attestation digest
    kind: str = "distribution"  # the registry: "distribution" (tag-schema fallback) or "ggcr" (Referrers API)

    def ref(self, name: str, host: str | None = None) -> str:
        return f"{host or self.registry}/acx/{name}:1"


def push_cartridge(w: World, directory: Path, ref: str, cart_id: str) -> str:
    cli("cartridge", "init", directory, "--id", cart_id, "--version", "1.0.0", "--capability", CAPABILITY)
    out = json.loads(cli("cartridge", "push", directory, ref, "--key", w.dir / "pub.key", "--json").output)
    return str(out.get("manifestDigest") or out.get("digest"))


def attest(w: World, ref: str, out: Path, state: Path, competence: int = 33, push: bool = True) -> dict[str, Any]:
    """``acx-oci attest`` (which publishes the status list and pushes the attestation unless ``push`` is off)."""
    res = cli("attest", ref, "--benchmark", w.bench_ref, "--key", w.dir / "ver.key", "--issuer", w.verifier_did,
              "--competence", competence, "--state", state, "--cooldown", "0", "-o", out, "--json",
              *(() if push else ("--no-push",)))
    doc: dict[str, Any] = json.loads(res.output)
    assert doc["issued"] is True
    return doc


def publish(store: Store, out: Path, credential: bytes | None = None, status: bool = True) -> Descriptor:
    """What ``attest`` does after issuing: publish the status list, then push the attestation referrer."""
    if status:
        publish_status_list(store, json.loads((out / "status-list.json").read_bytes()))
    subject = store.resolve(parse_reference(str(store.reference)).target)
    envelopes = [p.read_bytes() for p in sorted((out / "games").glob("*.json"))]
    cred = credential if credential is not None else (out / "credential.json").read_bytes()
    return push_attestation(store, Descriptor(MEDIA_MANIFEST, subject.digest, subject.size), cred, envelopes)


def self_issued_credential(w: World, out: Path, cartridge_digest: str | None = None) -> bytes:
    """The honest credential, re-issued by the cartridge's own publisher key (and re-bound if asked)."""
    cred = copy.deepcopy(json.loads((out / "credential.json").read_bytes()))
    cred = dataintegrity.without_proof(cred)
    cred["issuer"] = {"id": w.publisher_did, "type": ["Profile"]}
    if cartridge_digest is not None:
        res = level_result(cred)
        assert res is not None
        res["acx:cartridgeManifestDigest"] = cartridge_digest
    pub = load_identity(w.dir / "pub.key")
    signed = sign_credential(cred, pub, pub.verification_method, str(cred["validFrom"]))
    return json.dumps(signed, sort_keys=True).encode()


_WORLDS: dict[str, World] = {}


def build_world(registry: str, base: Path) -> World:
    """Once per registry (memoized so the gateway and CLI tests share it)."""
    if registry in _WORLDS:
        return _WORLDS[registry]
    d = base
    pub = cli("keygen", d / "pub").output.strip().splitlines()[-1]
    ver = cli("keygen", d / "ver").output.strip().splitlines()[-1]
    cli("benchmark", "demo", d / "bench")
    bench = json.loads(cli("benchmark", "push", d / "bench", f"{registry}/acx/bench", "--seal-to",
                           d / "ver.did.json", "--json").output)
    trust = d / "trust.json"
    trust.write_text(json.dumps({
        "publishers": [{"id": pub}],
        "verifiers": [{"id": ver}],
        "benchmarks": [{"id": "acx-bench-dag-de", "version": "2026.07.1", "digest": bench["benchmarkDigest"],
                        "heldOutSliceDigest": bench["heldOutSliceDigest"]}],
        "solvers": ["rom", "reference"],
    }))
    policy = d / "policy.yaml"
    policy.write_text(POLICY)
    w = World(registry, d, pub, ver, f"{registry}/acx/bench@{bench['manifestDigest']}", trust, policy)
    for name in ("strong", "unattested", "revoked", "selfissued"):
        w.digests[name] = push_cartridge(w, d / name, w.ref(name), f"io.github.acme/{name}-agent")
    # strong: issued and pushed by attest
    w.attestations["strong"] = attest(w, w.ref("strong"), d / "out-strong", d / "state-strong")["attestationDigest"]
    # revoked: issued and pushed, then `acx-oci revoke` (sets the bit, re-signs, republishes the list)
    digest = attest(w, w.ref("revoked"), d / "out-revoked", d / "state-revoked")["attestationDigest"]
    w.attestations["revoked"] = digest
    cli("revoke", digest, "--key", d / "ver.key", "--state", d / "state-revoked")
    # selfissued: only a credential re-signed by the cartridge's own publisher key, pushed by hand
    attest(w, w.ref("selfissued"), d / "out-selfissued", d / "state-selfissued", push=False)
    forged = self_issued_credential(w, d / "out-selfissued")
    w.attestations["selfissued"] = publish(open_store(w.ref("selfissued")), d / "out-selfissued", forged).digest
    _WORLDS[registry] = w
    return w
