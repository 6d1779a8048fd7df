"""Trust and policy files: a version is a name, so ``version: 1.10`` stays "1.10" (YAML 1.1 says the float 1.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acx_oci.errors import DuplicateMemberError, UsageError
from acx_oci.evaluation import evaluate, load_policy
from acx_oci.evaluation.policy import DENY, CapabilityRequirement
from acx_oci.files import load_yaml
from acx_oci.trust import load_trust

from .support.cli import cli

DIGEST = "sha256:" + "ab" * 32


def test_loader_keeps_versions_and_only_versions_as_text() -> None:
    doc = load_yaml("version: 1\nsigmaMax: 1.50\nbenchmarks:\n  - {id: b, version: 1.10}\n"
                    "  - {id: c, version: 2026.10}\nnested: {benchmarkVersion: 3.0, count: 3.0}\n"
                    "quoted: {version: '1.2'}\n")
    assert doc["version"] == "1" and doc["sigmaMax"] == 1.5
    assert [b["version"] for b in doc["benchmarks"]] == ["1.10", "2026.10"]
    assert doc["nested"] == {"benchmarkVersion": "3.0", "count": 3.0}
    assert doc["quoted"]["version"] == "1.2"


def test_trust_file_benchmark_version_1_10(tmp_path: Path) -> None:
    p = tmp_path / "trust.yaml"
    p.write_text(f"version: 1\nbenchmarks:\n  - id: acx-bench-dag-de\n    version: 1.10\n    digest: {DIGEST}\n")
    trust = load_trust(p)
    assert trust.benchmarks[0].version == "1.10"
    assert trust.benchmark("acx-bench-dag-de", "1.10") is not None
    assert trust.benchmark("acx-bench-dag-de", "1.1") is None


def test_policy_file_benchmark_version_1_10_and_default(tmp_path: Path) -> None:
    p = tmp_path / "policy.yaml"
    p.write_text("apiVersion: acx.dev/policy/v1\ndefault: deny\nrules:\n  - repositories: [acx/*]\n    require:\n"
                 "      capabilities:\n        - taskType: build-dag\n          minTier: senior\n"
                 "          benchmark: {id: acx-bench-dag-de, version: 1.10}\n")
    pol = load_policy(p)
    assert pol.document["rules"][0]["require"]["capabilities"][0]["benchmark"]["version"] == "1.10"
    cap = pol.rules[0].requirements[0]
    assert isinstance(cap, CapabilityRequirement) and cap.benchmark_version == "1.10"
    assert pol.default == DENY and pol.default_explicit and pol.covers("anything/else")
    assert "deny (set in the policy)" in pol.describe_default()
    p.write_text(p.read_text().replace("default: deny", "default: maybe"))
    with pytest.raises(UsageError, match="default"):
        load_policy(p)


def test_deny_default_verdict_names_the_default(tmp_path: Path) -> None:
    from .gateway.test_policy import NOW, resolution

    p = tmp_path / "policy.yaml"
    p.write_text("apiVersion: acx.dev/policy/v1\ndefault: deny\nrules:\n  - repositories: [acx/*]\n"
                 "    require: {signedBy: trusted-publisher}\n")
    verdict = evaluate(load_policy(p), "other/agent", resolution(), NOW)
    assert not verdict.allowed and "default: deny" in verdict.summary()


@pytest.mark.parametrize("kind", ["policy", "trust"])
def test_a_key_written_twice_is_refused(tmp_path: Path, kind: str) -> None:
    """`default: deny` ... `default: allow`: PyYAML keeps the last, other readers the first or refuse; a policy two
    readers enforce differently is refused, like JSON's duplicate members (merge keys stay allowed)."""
    p = tmp_path / f"{kind}.yaml"
    if kind == "policy":
        p.write_text("apiVersion: acx.dev/policy/v1\ndefault: deny\nrules: []\ndefault: allow\n")
        with pytest.raises(DuplicateMemberError, match='duplicate member name "default"'):
            load_policy(p)
        res = cli("policy", "check", "oci:/nonexistent:x", "--policy", str(p), "--trust", str(p))
        assert res.exit_code == 2 and 'duplicate member name "default"' in res.output, res.output
        assert "Traceback" not in res.output
    else:
        p.write_text(f"version: 1\nbenchmarks:\n  - {{id: b, version: '1', digest: {DIGEST}, id: c}}\n")
        with pytest.raises(DuplicateMemberError, match='duplicate member name "id"'):
            load_trust(p)


def test_merge_keys_still_override() -> None:
    doc = load_yaml("base: &b {sigmaMax: 1.5, minGames: 30}\nstrict: {<<: *b, sigmaMax: 1.0}\n")
    assert doc["strict"] == {"sigmaMax": 1.0, "minGames": 30}
