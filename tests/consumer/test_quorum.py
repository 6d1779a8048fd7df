"""A quorum of verifiers (issue 23 item 5), judged on in-memory bytes: ``minVerifiers: N`` needs N distinct
verifiers (distinct DIDs and distinct keys), the level is the lowest of the N, fewer is ``quorum_unmet``; the
same through ``--require ...@minVerifiers=N`` and a policy file."""

from __future__ import annotations

import pytest

from acx_oci.crypto import generate_identity, identity_from_seed
from acx_oci.errors import UsageError
from acx_oci.evaluation import evaluate, parse_require, unmet
from acx_oci.evaluation.policy import policy_from_dict
from acx_oci.evaluation.requirements import CapabilityRequirement
from acx_oci.model import CapabilityResolution, Resolution

from .test_judge_supersede import MANIFEST, NOW, ROM, Issuers


def resolution(cap: CapabilityResolution) -> Resolution:
    return Resolution("test", MANIFEST, ROM, "valid", None, "did:example:controller", (cap,), (), 2, False)


def two_verifiers() -> tuple[Issuers, Resolution]:
    a, b = generate_identity(), generate_identity()
    w = Issuers(a, b)
    return w, resolution(w.resolve(w.credential(a, 32, age_hours=3), w.credential(b, 20, age_hours=2)))


def test_one_verifier_is_not_a_quorum_of_two() -> None:
    v = generate_identity()
    w = Issuers(v)
    res = resolution(w.resolve(w.credential(v, 32, age_hours=3)))
    result = CapabilityRequirement("build-dag", min_level=10, min_verifiers=2).evaluate(res, NOW)
    assert not result.met and result.codes == ("quorum_unmet",)
    assert "1 distinct verifier(s) of the 2 required" in result.reasons[0]
    assert CapabilityRequirement("build-dag", min_level=10).evaluate(res, NOW).met  # without it: met


def test_two_distinct_verifiers_give_the_lower_level() -> None:
    _, res = two_verifiers()
    met = CapabilityRequirement("build-dag", min_level=20, min_verifiers=2).evaluate(res, NOW)
    assert met.met and "level 20 (the lowest of the 2)" in met.reasons[0]
    high = CapabilityRequirement("build-dag", min_level=25, min_verifiers=2).evaluate(res, NOW)
    assert not high.met and high.codes == ("level_below",)  # the best single verifier has 32: not enough
    assert CapabilityRequirement("build-dag", min_level=25).evaluate(res, NOW).met


def test_one_key_under_two_dids_counts_once() -> None:
    key_form = generate_identity()
    web_form = identity_from_seed(key_form.seed, "did:web:verifier.example")  # the same key under another DID
    assert key_form.did != web_form.did and key_form.public_bytes == web_form.public_bytes
    w = Issuers(key_form, web_form)
    cap = w.resolve(w.credential(key_form, 32, age_hours=3), w.credential(web_form, 30, age_hours=2))
    assert len(cap.accepted) == 2  # both verify, each is its DID's newest ...
    result = CapabilityRequirement("build-dag", min_level=10, min_verifiers=2).evaluate(resolution(cap), NOW)
    assert not result.met and result.codes == ("quorum_unmet",)  # ... and they are one verifier


def test_the_require_grammar_and_its_failures() -> None:
    parsed = parse_require("build-dag>=senior@model=acme-large@minVerifiers=2@maxAttempts=3/30d")
    assert (parsed.base.min_tier, parsed.base.model, parsed.min_verifiers) == ("senior", "acme-large", 2)
    assert parsed.max_attempts is not None and parsed.max_attempts.count == 3
    assert parsed.max_attempts.window_seconds == 30 * 86400
    for bad in ("build-dag>=senior@minVerifiers=0", "build-dag>=senior@minVerifiers=two",
                "build-dag>=senior@maxAttempts=3", "build-dag>=senior@minVerifiers=2@minVerifiers=3"):
        with pytest.raises(UsageError):
            parse_require(bad)
    v = generate_identity()
    w = Issuers(v)
    one = resolution(w.resolve(w.credential(v, 32, age_hours=3)))
    (failure,) = unmet(one, [parse_require("build-dag>=20@minVerifiers=2")], NOW)
    assert failure.startswith("build-dag>=20@minVerifiers=2: quorum_unmet: ")
    _, two = two_verifiers()
    assert unmet(two, [parse_require(t) for t in ("build-dag>=20@minVerifiers=2", "build-dag>=20")], NOW) == []
    assert "level_below" in unmet(two, [parse_require("build-dag>=25@minVerifiers=2")], NOW)[0]


def test_a_policy_file_can_ask_for_a_quorum() -> None:
    policy = policy_from_dict({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["acx/*"], "require": {
        "capabilities": [{"taskType": "build-dag", "minLevel": 20, "minVerifiers": 2}]}}]})
    _, two = two_verifiers()
    assert evaluate(policy, "acx/agent", two, NOW).allowed
    v = generate_identity()
    w = Issuers(v)
    verdict = evaluate(policy, "acx/agent", resolution(w.resolve(w.credential(v, 32, age_hours=3))), NOW)
    assert not verdict.allowed and "quorum_unmet" in verdict.summary()
    with pytest.raises(UsageError):
        policy_from_dict({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["acx/*"], "require": {
            "capabilities": [{"taskType": "build-dag", "minVerifiers": 0}]}}]})
