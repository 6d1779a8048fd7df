"""``acx-oci policy check`` on a real registry (the world is :mod:`tests.support.policy_world`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result

from ..support.cli import cli_expect as cli
from ..support.policy_world import World, build_world


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(registry, tmp_path_factory.mktemp("world"))


# --------------------------------------------------------------------------- policy check


def check(w: World, name: str, *extra: str) -> Result:
    return cli("policy", "check", w.ref(name), "--policy", w.policy, "--trust", w.trust, *extra, ok=(0, 1))


def test_strong_is_allowed(world: World) -> None:
    res = check(world, "strong")
    assert res.exit_code == 0, res.output
    assert "ALLOWED" in res.output
    # issue 34: the same words as resolve; this world's level is simulated, and the met line says so
    assert ": SIMULATED level " in res.output and "(solver: reference)" in res.output, res.output
    doc = json.loads(check(world, "strong", "--json").output)
    assert doc["allowed"] is True
    assert doc["requirements"][0]["met"] is True
    assert doc["requirements"][0]["considered"][0]["outcome"] == "satisfies"


@pytest.mark.parametrize(("name", "code"), [
    ("unattested", "no_attestation"),
    ("revoked", "revoked"),
    ("selfissued", "self_issued"),
])
def test_non_compliant_denied_with_reason(world: World, name: str, code: str) -> None:
    res = check(world, name)
    assert res.exit_code == 1, res.output
    assert "DENIED" in res.output and "unmet requirements (1)" in res.output
    assert "build-dag[pkg:pypi/apache-airflow] >=senior" in res.output
    assert code in res.output
    doc = json.loads(check(world, name, "--json").output)
    assert doc["allowed"] is False
    req = doc["requirements"][0]
    assert req["met"] is False and code in req["codes"]
    if name != "unattested":
        assert [c["attestationDigest"] for c in req["considered"]] == [world.attestations[name]]
        assert req["considered"][0]["outcome"] == "rejected"


def test_uncovered_repository_is_allowed_with_a_note(world: World) -> None:
    res = check(world, "unattested", "--repository", "elsewhere/agent")
    assert res.exit_code == 0 and "no rule covers repository elsewhere/agent" in res.output


def test_bad_policy_file_is_usage_error(world: World, tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: [\"acx/*\"]\n    require: {allOf: []}\n")
    res = cli("policy", "check", world.ref("strong"), "--policy", bad, "--trust", world.trust, ok=(2,))
    assert "allOf" in res.output and "empty" in res.output


def test_uncovered_default_is_printed_and_deny_denies(world: World, tmp_path: Path) -> None:
    res = check(world, "unattested", "--repository", "elsewhere/agent")
    assert "repositories no rule covers: allow (implicit" in res.output
    deny = tmp_path / "deny.yaml"
    deny.write_text(world.policy.read_text() + "default: deny\n")
    res = cli("policy", "check", world.ref("unattested"), "--policy", deny, "--trust", world.trust,
              "--repository", "elsewhere/agent", ok=(1,))
    assert "denied by the policy's default (default: deny)" in res.output
    assert "repositories no rule covers: deny (set in the policy)" in res.output
    doc = json.loads(cli("policy", "check", world.ref("strong"), "--policy", deny, "--trust", world.trust,
                         "--json", ok=(0,)).output)
    assert doc["allowed"] is True and doc["policyDefault"] == "deny"  # covered repositories: the rules decide
