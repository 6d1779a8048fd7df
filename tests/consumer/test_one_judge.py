"""One acceptance path (issue 36.2): the same forged credentials get the same reason codes from ``resolve``, the
gateway's push check and ``vc verify``, because all three hand them to the one judge.

Before, the gateway said ``capability_mismatch`` where resolve said ``capability_not_claimed``, and skipped the
container limit, the evidence bound and the log rule; ``vc verify`` knew no remembered status sequence. Real
registry, real crypto, the real gateway in a thread, the real CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci.crypto import canonical, without_proof
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, start_in_thread
from acx_oci.model import parse_capability, statuslist
from acx_oci.model.credential import sign_credential
from acx_oci.oci import MEDIA_MANIFEST, open_store
from acx_oci.services.artifacts import push_attestation
from acx_oci.services.consumer import StatusHistory
from acx_oci.tlog import checkpoint as C
from acx_oci.tlog import note as N
from acx_oci.trust import load_identity, load_trust

from ..support.cli import cli
from ..support.resolve_world import CAP, World, build_resolve_world

POLICY = 'apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: ["acx/*"]\n    require:\n      capabilities:\n' \
         "        - {taskType: build-dag, minLevel: 1}\n"


@dataclass
class Case:
    """One forged (or honest but unacceptable) credential, pushed as an attestation, and how to judge it."""

    digest: str  # the attestation's
    ref: str  # the cartridge's (its tag)
    manifest: str  # the cartridge's manifest digest
    raw_manifest: bytes
    credential: Path  # the credential file vc verify reads
    records: list[Path]  # the records the attestation carries (vc verify --evidence)
    trust: Path
    cache: Path  # the consumer's status memory


def _records(w: World) -> list[bytes]:
    result = json.loads((w.tmp / "att" / "result.json").read_text())
    return [(w.tmp / "att" / g["path"]).read_bytes() for g in result["gameRecords"]]


def _resign(w: World, edit: Any) -> bytes:
    doc = without_proof(json.loads((w.tmp / "att" / "credential.json").read_text()))
    edit(doc)
    verifier = load_identity(w.verifier)
    return canonical(sign_credential(doc, verifier, f"{w.verifier_did}#key-1", doc["validFrom"]))


def _edited(w: World) -> dict[str, Any]:
    """The world's cartridge with its SAVE zone edited: the same ROM (its game records still match), a new
    manifest, no attestation of its own (so resolve judges the one pushed here, and nothing supersedes it)."""
    folder = w.tmp / "strong"
    (folder / "save.json").write_text('{"notes": ["edited"]}\n')
    pushed: dict[str, Any] = json.loads(cli("cartridge", "push", folder, f"{w.registry}/{w.repo}:edited", "--key",
                                            w.publisher, "--json").stdout)
    assert pushed["romDigest"] == w.cart["romDigest"], pushed
    return pushed


def _other_capability(doc: dict[str, Any]) -> None:
    doc["credentialSubject"]["result"][0]["acx:capabilityId"] = parse_capability("debug[python]").id


def _flood(doc: dict[str, Any]) -> None:
    doc["credentialSubject"]["result"][0]["acx:padding"] = [[]] * 20_000


def _pinned_trust(w: World) -> Path:
    """The world's trust file, its verifier's transparency log pinned (that log holds nothing of ours)."""
    private = Ed25519PrivateKey.generate()
    origin = C.sigsum_origin(N.raw_public(private))
    vkey = N.ed25519_verifier(origin, N.raw_public(private)).vkey()
    text = w.trust.read_text().replace(
        "    didDocument: verifier.did.json\n",
        f"    didDocument: verifier.did.json\n    log: {{origin: '{origin}', key: '{vkey}', "
        f"url: '{w.registry}/acx/no-log'}}\n")
    path = w.tmp / "trust-logged.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_resolve_world(tmp_path_factory.mktemp("one-judge"), registry)


def _push(w: World, credential: bytes, records: list[bytes], name: str,
          subject: str) -> tuple[str, bytes, Path, list[Path]]:
    store = open_store(f"{w.registry}/{w.repo}")
    att = push_attestation(store, store.resolve(subject), credential, records)
    path = w.tmp / f"{name}.json"
    path.write_bytes(credential)
    files = []
    for i, rec in enumerate(records):
        files.append(w.tmp / f"{name}-record-{i}.json")
        files[-1].write_bytes(rec)
    return att.digest, store.fetch_manifest_raw(att.digest)[0], path, files


@pytest.fixture(scope="module")
def cases(world: World) -> dict[str, Case]:
    w, records = world, _records(world)
    plain = w.tmp / "cache-plain"
    out: dict[str, Case] = {}
    edited = _edited(w)
    rebound = _resign(w, lambda d: d["credentialSubject"]["result"][0].__setitem__("acx:cartridgeManifestDigest",
                                                                                 edited["manifestDigest"]))
    here, there = (f"{w.registry}/{w.repo}:1.0.0", w.cart["manifestDigest"]), \
        (f"{w.registry}/{w.repo}:edited", edited["manifestDigest"])
    for name, cred, recs, (ref, subject) in (
            ("capability_not_claimed", _resign(w, _other_capability), records, here),
            ("schema_invalid", _resign(w, _flood), records, here),  # (the bound refuses it before its proof is read)
            ("evidence_missing", rebound, records[:-1], there)):
        digest, raw, path, files = _push(w, cred, recs, name, subject)
        out[name] = Case(digest, ref, subject, raw, path, files, w.trust, plain)
    honest = w.attest_out["attestationDigest"]
    raw = open_store(f"{w.registry}/{w.repo}").fetch_manifest_raw(honest)[0]
    files = [w.tmp / f"honest-record-{i}.json" for i in range(len(records))]
    for f, rec in zip(files, records, strict=True):
        f.write_bytes(rec)
    out["not_logged"] = Case(honest, *here, raw, w.tmp / "att" / "credential.json", files, _pinned_trust(w), plain)
    # this consumer saw a newer list than the one the repository serves: the repository's is a rollback
    remembering = w.tmp / "cache-remembering"
    status = json.loads((w.tmp / "att" / "status-list.json").read_text())
    StatusHistory(remembering).remember(status["id"], status["issuer"] if isinstance(status["issuer"], str)
                                        else status["issuer"]["id"], statuslist.list_sequence(status) + 5)
    out["status_rollback"] = Case(honest, *here, raw, w.tmp / "att" / "credential.json", files, w.trust, remembering)
    return out


def _resolve_codes(w: World, case: Case) -> set[str]:
    res = cli("resolve", case.ref, "--trust", case.trust, "--status-cache", case.cache,
              "--json")
    doc = json.loads(res.stdout)
    rejected = [*doc.get("unmatched", []), *(r for c in doc["capabilities"] for r in c["rejected"])]
    found = [r for r in rejected if r["digest"] == case.digest]
    assert len(found) == 1, (case.digest, rejected)
    return set(found[0]["codes"])


@pytest.fixture(scope="module")
def gateways(world: World) -> Iterator[dict[tuple[Path, Path], str]]:
    """One gateway per (trust file, status memory) the cases use: its address."""
    policy = world.tmp / "policy.yaml"
    policy.write_text(POLICY)
    running = {}
    try:
        for trust, cache in ((world.trust, world.tmp / "cache-plain"),
                             (world.tmp / "trust-logged.yaml", world.tmp / "cache-plain"),
                             (world.trust, world.tmp / "cache-remembering")):
            running[(trust, cache)] = start_in_thread(GatewayConfig(
                upstream=f"http://{world.registry}", policy=load_policy(policy), trust=load_trust(trust),
                status_cache_dir=cache))
        yield {k: v.address for k, v in running.items()}
    finally:
        for gw in running.values():
            gw.stop()


def _gateway_codes(w: World, case: Case, address: str) -> set[str]:
    resp = httpx.put(f"http://{address}/v2/{w.repo}/manifests/{case.digest}", content=case.raw_manifest,
                     headers={"Content-Type": MEDIA_MANIFEST}, timeout=60)
    assert resp.status_code == 403, resp.text
    return set(resp.json()["errors"][0]["detail"]["codes"])


def _vc_codes(w: World, case: Case) -> set[str]:
    res = cli("vc", "verify", case.credential, "--trust", case.trust, "--rom-digest", w.cart["romDigest"],
              "--manifest-digest", case.manifest, "--capability", CAP,
              "--status-list", w.tmp / "att" / "status-list.json", "--status-cache", case.cache,
              *(a for f in case.records for a in ("--evidence", f)), "--json")
    assert res.exit_code == 1, res.output
    return set(json.loads(res.stdout)["codes"])


@pytest.mark.parametrize("code", ["capability_not_claimed", "schema_invalid", "evidence_missing", "not_logged",
                                  "status_rollback"])
def test_resolve_the_gateway_and_vc_verify_give_one_reason(world: World, cases: dict[str, Case],
                                                           gateways: dict[tuple[Path, Path], str], code: str) -> None:
    case = cases[code]
    by_resolve = _resolve_codes(world, case)
    by_gateway = _gateway_codes(world, case, gateways[(case.trust, case.cache)])
    by_vc = _vc_codes(world, case)
    # (a rolled-back list is refused, so the credential's status is unknown too: both, everywhere)
    expected = {code, "status_unknown"} if code == "status_rollback" else {code}
    assert by_resolve == by_gateway == by_vc == expected, (by_resolve, by_gateway, by_vc)


def test_verify_context_is_built_only_by_the_judge() -> None:
    """The acceptance rules' context is assembled in ``evaluation/`` only: no caller judges a credential its own way."""
    root = Path(__file__).resolve().parents[2] / "acx_oci"
    outside = [f"{p.relative_to(root)}:{n}" for p in sorted(root.rglob("*.py"))
               if p.relative_to(root).parts[0] != "evaluation"
               for n, line in enumerate(p.read_text().splitlines(), 1) if "VerifyContext(" in line]
    assert outside == [], outside


def test_one_rule_replaces_a_status_list_for_copy_and_the_gateway() -> None:
    """Copy kept a source list of the same sequence out, the gateway refused it: now both ask may_replace, which
    wants a newer list, verified as its issuer's, of the issuer of the one there (a forged one there counts for
    nothing)."""
    from datetime import UTC, datetime

    from acx_oci.crypto import generate_identity
    from acx_oci.evaluation import may_replace

    now = datetime.now(UTC).replace(microsecond=0)
    issuer, stranger = generate_identity(), generate_identity()
    url = "https://status.example/lists/one"

    def signed(by: Any, seq: int, as_issuer: Any = None) -> dict[str, Any]:
        who = as_issuer or by
        doc = statuslist.new_status_list(list_url=url, issuer=who.did, valid_from=now, sequence=seq)
        return statuslist.sign_status_list(doc, by, by.verification_method, now)

    there = signed(issuer, 3)
    assert may_replace(signed(issuer, 4), there, None, now).ok
    assert may_replace(signed(issuer, 4), None, None, now).ok
    assert may_replace(signed(issuer, 3), there, None, now).code == "status_rollback"  # as new is no newer
    assert may_replace(signed(issuer, 2), there, None, now).code == "status_rollback"
    assert may_replace(signed(issuer, 4), there, None, now, highest_seen=5).code == "status_rollback"
    assert may_replace(signed(stranger, 9), there, None, now).code == "status_invalid"  # another issuer's
    forged = signed(stranger, 50, as_issuer=issuer)  # the issuer's name, another key: counts for nothing there
    assert may_replace(forged, there, None, now).code == "status_invalid"  # (its proof is not the issuer's)
    assert may_replace(signed(issuer, 4), forged, None, now).ok
