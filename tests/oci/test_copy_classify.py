"""``copy --only-verified`` copies an attestation only when the source's resolution judged that digest VERIFIED.

A source registry writes its own ``sha256-<hex>`` referrers index, so it can list a forged level attestation as
``application/vnd.example.other``: ``resolve`` filters the listing by artifactType and never sees it (so never
rejects it), while the copy reads the manifest, finds a level attestation and, with a deny-list of what resolve
rejected, copied it and counted it verified. The exclusion is now an allow-list by digest, and every referrer is
classified by its fetched manifest, never by the listing. Real CNCF Distribution registry (tag-schema fallback).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from acx_oci.errors import NotFoundError
from acx_oci.model import UNPROVEN, VERIFIED, AcceptedCredential, CapabilityResolution, Rejection, Resolution
from acx_oci.model.capability import make_record
from acx_oci.oci import ARTIFACT_ATTESTATION, MEDIA_INDEX, build_index, fallback_tag, open_store
from acx_oci.services.consumer.copy import _Judged

from ..support.cli import cli, ok
from ..support.registry import Registry
from ..support.resolve_world import World, build_resolve_world, push_self_issued

OTHER = "application/vnd.example.other"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, own_registry: Registry) -> World:
    return build_resolve_world(tmp_path_factory.mktemp("copy-classify"), own_registry.host)


def _source_with(w: World, repo: str) -> str:
    """The world's cartridge and honest attestation copied into ``repo``; its reference."""
    ok(cli("copy", f"{w.registry}/{w.repo}:1.0.0", f"{w.registry}/{repo}:1.0.0", "--trust", w.trust, "--quiet"))
    return f"{w.registry}/{repo}:1.0.0"


def _mistype(w: World, repo: str, subject: str, digest: str) -> None:
    """Rewrite ``subject``'s fallback index (as a hostile source registry may) so ``digest`` is listed as OTHER."""
    store = open_store(f"{w.registry}/{repo}")
    entries = store.read_referrers_index(subject)  # type: ignore[attr-defined]
    assert digest in [d.digest for d in entries]
    lying = [dataclasses.replace(d, artifact_type=OTHER) if d.digest == digest else d for d in entries]
    store.put_manifest(build_index(lying), MEDIA_INDEX, fallback_tag(subject))
    listed = {d.digest: d.artifact_type for d in store.referrers(subject).descriptors}
    assert listed[digest] == OTHER, listed  # the lie is what the source's listing now says


def _resolved(w: World, ref: str) -> dict[str, Any]:
    doc: dict[str, Any] = ok(cli("resolve", ref, "--trust", str(w.trust), "--json"))
    return doc


def _absent(ref: str, digest: str) -> bool:
    try:
        open_store(ref).fetch_manifest_raw(digest)
    except NotFoundError:
        return True
    return False


def test_an_attestation_the_index_mistypes_is_not_copied_as_verified(world: World) -> None:
    w = world
    subject, honest = w.cart["manifestDigest"], w.attest_out["attestationDigest"]
    src = _source_with(w, "classify/lying")
    bad = push_self_issued(w, "classify/lying")  # a level attestation its publisher issued to itself
    _mistype(w, "classify/lying", subject, bad)
    before = _resolved(w, src)
    assert before["capabilities"][0]["effective"] == "VERIFIED"
    assert before["referrersSeen"] == 1 and before["capabilities"][0]["rejected"] == []  # resolve never judged it

    mirror = f"{w.registry}/classify/lying-mirror"
    out = ok(cli("copy", src, mirror, "--trust", w.trust, "--only-verified", "--json"))
    copied = [r["digest"] for r in out["referrers"]]
    assert honest in copied and bad not in copied, out
    [skip] = out["skipped"]
    assert skip["digest"] == bad and skip["artifactType"] == ARTIFACT_ATTESTATION, skip
    assert skip["code"] == "not_judged" and skip["listedArtifactType"] == OTHER and OTHER in skip["reason"], skip
    assert out["verified"]["attestations"] == 2 and out["verified"]["verifiedAttestations"] == 1, out["verified"]
    assert out["verified"]["rejectedAttestations"] == 1 and out["verified"]["unjudgedAttestations"] == 1
    assert any(bad in n and OTHER in n and "classified by its manifest" in n for n in out["notes"]), out["notes"]
    assert out["destinationResolvesSame"] is True
    assert _absent(mirror, bad) and not _absent(mirror, honest)
    assert bad not in [d.digest for d in open_store(mirror).referrers(subject).descriptors]
    after = _resolved(w, f"{mirror}:1.0.0")
    assert after["capabilities"][0]["effective"] == "VERIFIED" and after["referrersSeen"] == 1

    # into an air-gap bundle the same
    layout = w.tmp / "lying-bundle"
    bundle = ok(cli("copy", src, f"oci:{layout}", "--trust", w.trust, "--only-verified", "--json"))
    assert [s["digest"] for s in bundle["skipped"]] == [bad] and _absent(f"oci:{layout}", bad)

    # without --only-verified it is copied (a mirror of everything), yet not counted as verified, and the copy's
    # index types it by its manifest: the mirror's resolve judges it, and rejects it
    full_mirror = f"{w.registry}/classify/lying-full"
    full = ok(cli("copy", src, full_mirror, "--trust", w.trust, "--json"))
    assert {honest, bad} <= {r["digest"] for r in full["referrers"]} and full["skipped"] == []
    assert full["verified"]["verifiedAttestations"] == 1 and full["verified"]["rejectedAttestations"] == 1
    entry = next(d for d in open_store(full_mirror).read_referrers_index(subject)  # type: ignore[attr-defined]
                 if d.digest == bad)
    assert entry.artifact_type == ARTIFACT_ATTESTATION
    rejected = _resolved(w, f"{full_mirror}:1.0.0")["capabilities"][0]["rejected"]
    assert [r["digest"] for r in rejected] == [bad] and "issuer_untrusted" in rejected[0]["codes"]


def test_an_attestation_hung_on_the_honest_one_is_not_copied_as_verified(world: World) -> None:
    """A level attestation whose subject is the honest attestation (depth 2 of the copy's walk): resolve judges only
    the cartridge's referrers, so it was never judged, and must not ride along as verified."""
    w = world
    honest = w.attest_out["attestationDigest"]
    src = _source_with(w, "classify/nested")
    store = open_store(src)
    bad = push_self_issued(w, "classify/nested", subject=store.resolve(honest),
                           credential_id="urn:uuid:00000000-0000-4000-8000-0000000000c1")
    assert bad in [d.digest for d in store.referrers(honest).descriptors]
    mirror = f"{w.registry}/classify/nested-mirror"
    out = ok(cli("copy", src, mirror, "--trust", w.trust, "--only-verified", "--json"))
    assert honest in [r["digest"] for r in out["referrers"]]
    assert bad not in [r["digest"] for r in out["referrers"]] and _absent(mirror, bad), out
    assert [(s["digest"], s["code"]) for s in out["skipped"]] == [(bad, "not_judged")], out["skipped"]
    assert out["verified"]["verifiedAttestations"] == 1 and out["verified"]["rejectedAttestations"] == 1


def test_an_honest_verified_attestation_is_still_copied(world: World) -> None:
    w = world
    honest = w.attest_out["attestationDigest"]
    mirror = f"{w.registry}/classify/honest-mirror"
    out = ok(cli("copy", f"{w.registry}/{w.repo}:1.0.0", mirror, "--trust", w.trust, "--only-verified", "--json"))
    assert [r["digest"] for r in out["referrers"] if r["artifactType"] == ARTIFACT_ATTESTATION] == [honest]
    assert out["skipped"] == [] and out["destinationResolvesSame"] is True
    v = out["verified"]
    assert (v["attestations"], v["verifiedAttestations"], v["rejectedAttestations"]) == (1, 1, 0), v
    assert not _absent(mirror, honest) and out["statusLists"]
    assert _resolved(w, f"{mirror}:1.0.0")["capabilities"][0]["attestationDigest"] == honest


def test_referrers_repair_puts_back_the_type_the_manifest_says(world: World) -> None:
    """``referrers repair`` rewrote only entries without a usable type; one a writer mistyped kept its false
    ``artifactType`` for good. Every entry now gets its type from its manifest; resolve then judges it."""
    w = world
    subject = w.cart["manifestDigest"]
    src = _source_with(w, "classify/repair")
    bad = push_self_issued(w, "classify/repair", credential_id="urn:uuid:00000000-0000-4000-8000-0000000000c2")
    _mistype(w, "classify/repair", subject, bad)
    assert _resolved(w, src)["referrersSeen"] == 1
    out = ok(cli("referrers", "repair", src, "--json"))
    assert bad in out["classifiedByManifest"], out
    entry = next(d for d in open_store(src).read_referrers_index(subject)  # type: ignore[attr-defined]
                 if d.digest == bad)
    assert entry.artifact_type == ARTIFACT_ATTESTATION
    after = _resolved(w, src)
    assert after["referrersSeen"] == 2 and after["capabilities"][0]["effective"] == "VERIFIED"
    assert [r["digest"] for r in after["capabilities"][0]["rejected"]] == [bad]


def _digest(n: int) -> str:
    return f"sha256:{n:064x}"


def test_the_allow_list_is_what_a_verified_claim_rests_on_and_says_why_for_the_rest() -> None:
    """Pure: ``Resolution.verified_attestations`` and the copy's reasons for every other level attestation."""
    cart, cap, other = _digest(100), make_record("build-dag", ["airflow"], None), make_record("review", ["py"], None)

    def acc(n: int, cap_id: str) -> AcceptedCredential:
        return AcceptedCredential(_digest(n), _digest(n + 50), "did:web:v.example", cap_id, "b", "1", 33.0, 1.2, 90,
                                  30, "senior", "2026-07-01T00:00:00Z")

    caps = (CapabilityResolution(cap, VERIFIED, acc(1, cap.id), (acc(1, cap.id), acc(2, cap.id)),
                                 (Rejection(_digest(3), ("revoked", "issuer_untrusted")),)),
            CapabilityResolution(other, UNPROVEN, None, (acc(4, other.id),), ()))
    res = Resolution("r", cart, _digest(101), "valid", None, "c", caps, (Rejection(_digest(5), ("x",)),), 6, False,
                     judged=frozenset(_digest(n) for n in (1, 2, 3, 4, 5, 6)))
    assert res.verified_attestations() == {_digest(1), _digest(2)}  # an unproven claim's credential is not
    assert dataclasses.replace(res, signature_status="tampered").verified_attestations() == frozenset()
    j = _Judged.of(res)
    assert j.why_not(_digest(3), ARTIFACT_ATTESTATION, cart) == ("rejected", "revoked, issuer_untrusted")
    assert j.why_not(_digest(5), ARTIFACT_ATTESTATION, cart)[0] == "rejected"
    assert j.why_not(_digest(6), ARTIFACT_ATTESTATION, cart)[0] == "not_deciding"
    assert j.why_not(_digest(7), OTHER, _digest(1))[0] == "not_judged"
    code, why = j.why_not(_digest(7), OTHER, cart)
    assert code == "not_judged" and OTHER in why
    assert j.why_not(_digest(7), None, cart)[1].count("(no artifactType)") == 1
    assert j.why_not(_digest(7), ARTIFACT_ATTESTATION, cart)[0] == "not_judged"
