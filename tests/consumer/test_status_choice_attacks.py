"""A status list planted under the credential's list URL by another issuer (a squatter's own, validly signed, or
one with the bit set) must not decide a credential whose own issuer's list is also at hand: it is not that
credential's list at all. Before, the highest (or the revoking) copy won whoever signed it, so resolve (which
reads the repository's copy) refused what ``vc verify --status-list`` accepted, and a stranger could make any
credential ``status_invalid``."""

from __future__ import annotations

from datetime import timedelta

import pytest

from acx_oci.crypto import canonical, generate_identity
from acx_oci.evaluation.judge import judge_credentials
from acx_oci.jsonio import parse_json
from acx_oci.model import statuslist

from .test_judge import CAP, INDEX, NOW, URL, Bytes, material


@pytest.fixture(scope="module")
def world() -> Bytes:
    return Bytes()


def _stranger_list(*, revoked: bool, sequence: int) -> bytes:
    stranger = generate_identity()
    bits = bytearray(statuslist.MIN_ENTRIES // 8)
    if revoked:
        statuslist.set_bit(bits, INDEX)
    doc = statuslist.new_status_list(list_url=URL, issuer=stranger.did, valid_from=NOW - timedelta(hours=1),
                                     bits=bytes(bits), sequence=sequence)
    return canonical(statuslist.sign_status_list(doc, stranger, stranger.verification_method,
                                                 NOW - timedelta(hours=1)))


@pytest.mark.parametrize("revoked", [False, True])
def test_another_issuers_list_at_the_url_does_not_decide(world: Bytes, revoked: bool) -> None:
    squatter = _stranger_list(revoked=revoked, sequence=50)
    for order in ((squatter, world.status_list(sequence=2)), (world.status_list(sequence=2), squatter)):
        judgement = judge_credentials(material(world.credential, *order), world.facts, world.trust, NOW)
        assert len(judgement.accepted[CAP.id]) == 1, judgement.rejected
    # the issuer's own revoking list still wins over a squatter's clear one
    judgement = judge_credentials(material(world.credential, _stranger_list(revoked=False, sequence=50),
                                           world.status_list(revoked=True, sequence=1)), world.facts, world.trust, NOW)
    assert judgement.rejected[CAP.id][0].codes == ("revoked",)


def test_only_another_issuers_list_is_still_status_invalid(world: Bytes) -> None:
    judgement = judge_credentials(material(world.credential, _stranger_list(revoked=False, sequence=3)), world.facts,
                                  world.trust, NOW)
    assert not judgement.accepted[CAP.id] and "status_invalid" in judgement.rejected[CAP.id][0].codes
    assert parse_json(world.credential, "credential")  # (the world's credential is well formed)
