"""The registry world for ``acx-oci attest``: keys, a pushed cartridge, a benchmark sealed to two verifiers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
