"""Pure policy evaluation: table-driven over hand-built resolutions; schema and combinator errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.errors import UsageError
from acx_oci.evaluation import evaluate, load_policy
from acx_oci.evaluation.combine import AllOf
from acx_oci.evaluation.policy import policy_from_dict
from acx_oci.model import (
    UNPROVEN,
    VERIFIED,
    AcceptedCredential,
    CapabilityResolution,
    LevelCredential,
    Rejection,
    Resolution,
)
from acx_oci.model.capability import make_record

NOW = datetime(2026, 8, 1, 12, 0, tzinfo=UTC)
VERIFIER = "did:web:verifier.example"
OTHER = "did:web:other.example"
PUBLISHER = "did:key:z6MkPublisher"
CAP = make_record("build-dag", ["snowflake", "airflow", "dbt"], "data-engineering")
REVIEW = make_record("review", ["python"], None)

BASE = {
    "apiVersion": "acx.dev/policy/v1",
    "rules": [{"repositories": ["acx/*"], "require": {"capabilities": [
        {"taskType": "build-dag", "stack": ["airflow"], "minTier": "senior"}]}}],
}


def accepted(level: int = 18, tier: str = "senior", issuer: str = VERIFIER, days_old: int = 1,
             bench: tuple[str, str] = ("acx-bench-dag-de", "2026.07.1"), n: int = 1) -> AcceptedCredential:
    valid_from = (NOW - timedelta(days=days_old)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return AcceptedCredential(f"sha256:{n:064x}", f"sha256:{n + 100:064x}", issuer, CAP.id, bench[0], bench[1],
                              33.0, 1.2, 90, level, tier, valid_from)


def rejection(*codes: str, n: int = 7) -> Rejection:
    return Rejection(f"sha256:{n:064x}", codes, tuple(f"because {c}" for c in codes), f"sha256:{n + 100:064x}",
                     VERIFIER)


def resolution(acc: list[AcceptedCredential] | None = None, rej: list[Rejection] | None = None,
               status: str = "valid", caps: tuple[Any, ...] = (CAP,), partial: bool = False,
               unmatched: tuple[Rejection, ...] = ()) -> Resolution:
    acc = acc or []
    out = []
    for cap in caps:
        mine = [a for a in acc if a.capability_id == cap.id]
        best = max(mine, key=lambda a: a.acx_level) if mine and status != "tampered" else None
        out.append(CapabilityResolution(cap, VERIFIED if best else UNPROVEN, best, tuple(mine),
                                        tuple(rej or []) if cap is CAP else ()))
    return Resolution("127.0.0.1:5000/acx/agent:1", "sha256:" + "ab" * 32, "sha256:" + "cd" * 32, status,
                      PUBLISHER if status != "unsigned" else None, PUBLISHER, tuple(out), unmatched, len(acc),
                      partial)


def policy(require: dict[str, Any], repos: list[str] | None = None) -> Any:
    return policy_from_dict({"apiVersion": "acx.dev/policy/v1",
                             "rules": [{"repositories": repos or ["acx/*"], "require": require}]})


CAPREQ = {"taskType": "build-dag", "stack": ["airflow"], "minTier": "senior"}

# (name, require block, resolution, allowed, codes of the first requirement)
CASES: list[tuple[str, dict[str, Any], Resolution, bool, tuple[str, ...]]] = [
    ("strong", {"capabilities": [CAPREQ]}, resolution([accepted()]), True, ()),
    ("unattested", {"capabilities": [CAPREQ]}, resolution(), False, ("no_attestation",)),
    ("revoked", {"capabilities": [CAPREQ]}, resolution(rej=[rejection("revoked")]), False, ("revoked",)),
    ("self-issued", {"capabilities": [CAPREQ]}, resolution(rej=[rejection("self_issued", "issuer_untrusted")]),
     False, ("self_issued", "issuer_untrusted")),
    ("status unknown fails closed", {"capabilities": [CAPREQ]},
     resolution(rej=[rejection("status_unknown")]), False, ("status_unknown",)),
    ("tier below", {"capabilities": [CAPREQ]}, resolution([accepted(12, "mid")]), False, ("tier_below",)),
    ("min level", {"capabilities": [{"taskType": "build-dag", "minLevel": 19}]},
     resolution([accepted(18)]), False, ("level_below",)),
    ("min level met", {"capabilities": [{"taskType": "build-dag", "minLevel": 18}]},
     resolution([accepted(18)]), True, ()),
    ("stack not included", {"capabilities": [{"taskType": "build-dag", "stack": ["spark"]}]},
     resolution([accepted()]), False, ("capability_not_claimed",)),
    ("stack purl form", {"capabilities": [{"taskType": "build-dag", "stack": ["pkg:pypi/apache-airflow", "dbt"]}]},
     resolution([accepted()]), True, ()),
    ("domain mismatch", {"capabilities": [{"taskType": "build-dag", "domain": "finance"}]},
     resolution([accepted()]), False, ("capability_not_claimed",)),
    ("task not claimed", {"capabilities": [{"taskType": "debug"}]}, resolution([accepted()]), False,
     ("capability_not_claimed",)),
    ("issuer allowed", {"capabilities": [dict(CAPREQ, issuers=[VERIFIER])]}, resolution([accepted()]), True, ()),
    ("issuer not allowed", {"capabilities": [dict(CAPREQ, issuers=[OTHER])]}, resolution([accepted()]), False,
     ("issuer_not_allowed",)),
    ("fresh enough", {"capabilities": [dict(CAPREQ, maxCredentialAge="30d")]}, resolution([accepted(days_old=29)]),
     True, ()),
    ("too old", {"capabilities": [dict(CAPREQ, maxCredentialAge="30d")]}, resolution([accepted(days_old=31)]),
     False, ("credential_too_old",)),
    ("benchmark id", {"capabilities": [dict(CAPREQ, benchmark={"id": "acx-bench-dag-de"})]},
     resolution([accepted()]), True, ()),
    ("benchmark version", {"capabilities": [dict(CAPREQ, benchmark={"id": "acx-bench-dag-de", "version": "2027"})]},
     resolution([accepted()]), False, ("benchmark_mismatch",)),
    ("one good among bad", {"capabilities": [CAPREQ]},
     resolution([accepted(12, "mid", n=1), accepted(20, "staff", n=2)], [rejection("revoked")]), True, ()),
    ("partial and unmet", {"capabilities": [CAPREQ]}, resolution(partial=True), False,
     ("no_attestation", "resolution_partial")),
    ("signed by trusted publisher", {"signedBy": "trusted-publisher"}, resolution(), True, ()),
    ("publisher untrusted", {"signedBy": "trusted-publisher"}, resolution(status="warning"), False,
     ("publisher_untrusted",)),
    ("unsigned", {"signedBy": "trusted-publisher"}, resolution(status="unsigned"), False, ("rom_unsigned",)),
    ("tampered", {"signedBy": "trusted-publisher"}, resolution(status="tampered"), False, ("rom_tampered",)),
    ("named publisher", {"signedBy": [PUBLISHER]}, resolution(status="warning"), True, ()),
    ("other publisher", {"signedBy": [OTHER]}, resolution(), False, ("publisher_not_allowed",)),
    ("tampered cartridge voids credentials", {"capabilities": [CAPREQ]},
     resolution([accepted()], status="tampered"), False, ("claim_not_verified",)),
    ("anyOf one met", {"anyOf": [{"capabilities": [{"taskType": "debug"}]}, {"capabilities": [CAPREQ]}]},
     resolution([accepted()]), True, ()),
    ("anyOf none met", {"anyOf": [{"capabilities": [{"taskType": "debug"}]}, {"signedBy": [OTHER]}]},
     resolution([accepted()]), False, ("capability_not_claimed", "publisher_not_allowed")),
    ("allOf one unmet", {"allOf": [{"capabilities": [CAPREQ]}, {"capabilities": [{"taskType": "review"}]}]},
     resolution([accepted()], caps=(CAP, REVIEW)), False, ("no_attestation",)),
    ("nested", {"allOf": [{"signedBy": "trusted-publisher"},
                          {"anyOf": [{"capabilities": [CAPREQ]}, {"capabilities": [{"taskType": "review"}]}]}]},
     resolution([accepted()]), True, ()),
]


@pytest.mark.parametrize(("name", "require", "res", "allowed", "codes"), CASES, ids=[c[0] for c in CASES])
def test_evaluate_table(name: str, require: dict[str, Any], res: Resolution, allowed: bool,
                        codes: tuple[str, ...]) -> None:
    verdict = evaluate(policy(require), "acx/agent", res, NOW)
    assert verdict.allowed is allowed, verdict.to_json()
    first = verdict.requirements[0]
    assert first.met is allowed
    assert first.codes == codes
    if not allowed:
        assert "policy not met" in verdict.summary()
        assert first.description in verdict.summary()


def test_every_attestation_considered_is_reported() -> None:
    res = resolution([accepted(12, "mid", n=1)], [rejection("revoked", n=2), rejection("self_issued", n=3)])
    verdict = evaluate(policy({"capabilities": [CAPREQ]}), "acx/agent", res, NOW)
    req = verdict.requirements[0]
    outcomes = {c.attestation_digest: (c.outcome, c.codes) for c in req.considered}
    assert outcomes == {
        f"sha256:{1:064x}": ("insufficient", ("tier_below",)),
        f"sha256:{2:064x}": ("rejected", ("revoked",)),
        f"sha256:{3:064x}": ("rejected", ("self_issued",)),
    }
    doc = verdict.to_json()
    assert doc["allowed"] is False
    assert {c["outcome"] for c in doc["requirements"][0]["considered"]} == {"insufficient", "rejected"}
    assert set(doc["requirements"][0]["codes"]) == {"tier_below", "revoked", "self_issued"}


def test_repository_globs_and_uncovered() -> None:
    pol = policy({"capabilities": [CAPREQ]}, ["acx/*", "team-?/agents/**"])
    assert pol.covers("acx/agent")
    assert pol.covers("team-a/agents/x")
    assert not pol.covers("other/agent")
    verdict = evaluate(pol, "other/agent", resolution(), NOW)
    assert verdict.allowed and verdict.requirements == ()
    assert "no rule covers" in verdict.notes[0]


def test_all_matching_rules_apply() -> None:
    pol = policy_from_dict({"apiVersion": "acx.dev/policy/v1", "rules": [
        {"name": "broad", "repositories": ["acx/*"], "require": {"capabilities": [CAPREQ]}},
        {"name": "narrow", "repositories": ["acx/prod-*"], "require": {"signedBy": "trusted-publisher"}},
    ]})
    v = evaluate(pol, "acx/prod-agent", resolution(status="warning"), NOW)
    assert v.rules == ("broad", "narrow") and not v.allowed
    assert [r.met for r in v.requirements] == [False, False]


def test_naive_now_is_utc() -> None:
    v = evaluate(policy({"capabilities": [dict(CAPREQ, maxCredentialAge="2d")]}), "acx/a",
                 resolution([accepted(days_old=1)]), NOW.replace(tzinfo=None))
    assert v.allowed


@pytest.mark.parametrize(("doc", "needle"), [
    ({"apiVersion": "acx.dev/policy/v2", "rules": []}, "apiVersion"),
    ({"rules": []}, "apiVersion"),
    (dict(BASE, extra=1), "extra"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": [], "require": {"signedBy": "trusted-publisher"}}]},
     "repositories"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {}}]}, "require"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {
        "capabilities": [{"taskType": "build-dag", "minTier": "wizard"}]}}]}, "minTier"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {
        "capabilities": [{"taskType": "not-a-task"}]}}]}, "taskType"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {
        "capabilities": [{"taskType": "build-dag", "maxCredentialAge": "soon"}]}}]}, "maxCredentialAge"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {"allOf": []}}]},
     "allOf: is empty"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {
        "anyOf": [{"allOf": []}]}}]}, "allOf: is empty"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {"anyOf": []}}]},
     "anyOf: is empty"),
    ({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["a/*"], "require": {"signedBy": "anyone"}}]},
     "signedBy"),
    ([], "object"),
])
def test_schema_errors(doc: Any, needle: str) -> None:
    with pytest.raises(UsageError) as err:
        policy_from_dict(doc)
    assert needle in str(err.value)


def test_allof_class_refuses_empty() -> None:
    with pytest.raises(UsageError, match="empty"):
        AllOf([])


def test_load_policy_yaml(tmp_path: Path) -> None:
    p = tmp_path / "policy.yaml"
    p.write_text("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: [\"acx/*\"]\n    require:\n"
                 "      capabilities:\n        - taskType: build-dag\n          stack: [airflow]\n"
                 "          minTier: senior\n")
    pol = load_policy(p)
    assert pol.covers("acx/x")
    assert evaluate(pol, "acx/x", resolution([accepted()]), NOW).allowed
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: [unclosed\n")
    with pytest.raises(UsageError, match="policy file"):
        load_policy(bad)


def with_model(acc: AcceptedCredential, model: str | None) -> AcceptedCredential:
    """The same credential, earned by an agent that called ``model`` (None: an offline agent)."""
    from dataclasses import replace

    result: dict[str, Any] = {"acx:cartridgeRomDigest": "sha256:" + "0" * 64}
    if model is not None:
        result.update({"acx:model": {"id": model, "api": "openai-chat"}, "acx:modelDataUse": "no-training"})
    return replace(acc, credential=LevelCredential.document({"credentialSubject": {"result": [result]}}))


@pytest.mark.parametrize(("model", "allowed"), [("acme-large-2026-06", True), ("acme-small-2026-06", False),
                                                (None, False)])
def test_a_policy_requirement_can_name_the_model(model: str | None, allowed: bool) -> None:
    """A level is a level of this ROM with this model: a policy naming a model counts only that model's levels."""
    req = {"capabilities": [{**CAPREQ, "model": "acme-large-2026-06"}]}
    verdict = evaluate(policy(req), "acx/agent", resolution([with_model(accepted(), model)]), NOW)
    assert verdict.allowed is allowed
    if not allowed:
        assert "model_mismatch" in verdict.requirements[0].codes
    assert "with model acme-large-2026-06" in verdict.requirements[0].description
