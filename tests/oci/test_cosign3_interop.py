"""cosign 3 (the real binary, offline) verifies a level in its own layout (a Sigstore bundle as an OCI 1.1
referrer) and refuses it once ``acx-oci revoke`` took it down; the Rego policy of docs/operations.md
accepts the level and refuses it expired, too low and revoked. The tests run in order on one attested
cartridge per registry: Distribution (no Referrers API: cosign reads the tag-schema fallback index) and
ggcr (the Referrers API: taking a level down deletes the referrer manifest)."""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.oci import open_store, parse_reference
from acx_oci.services.artifacts import MEDIA_BUNDLE, PREDICATE_LEVEL, cosign_tag
from acx_oci.services.verifier import AttestRequest, Issued, SandboxOptions, refresh
from acx_oci.services.verifier.attest import attest
from acx_oci.services.verifier.request import GateOptions
from acx_oci.solvers import ReferenceSolver
from acx_oci.trust import load_identity

from ..support.attest_world import attested_level, build_attest_world
from ..support.cli import cli, ok
from ..support.cosign_cli import cosign, cosign3, cosign3_binary
from ..support.env import ROOT
from ..support.faultproxy import FaultProxy

TRUSTED_ROOT = {"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1"}


@pytest.fixture(scope="module", params=["distribution", "ggcr"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One cartridge attested (the level published in both layouts), the verifier's PEM and an empty root;
    on Distribution (tag-schema fallback index) and on ggcr (the Referrers API)."""
    cosign3_binary()
    registry = str(request.getfixturevalue("registry" if request.param == "distribution" else "ggcr"))
    tmp = tmp_path_factory.mktemp("cosign3")
    world = attested_level(tmp, registry)
    (tmp / "root.json").write_text(json.dumps(TRUSTED_ROOT))
    return world


def _verify(w: dict[str, Any], *policy: str) -> Any:
    """Exactly the command of the acceptance line (plus ``--policy FILE`` for the policy tests)."""
    return cosign3("verify-attestation", "--key", str(w["tmp"] / "verifier.pub"), "--type", PREDICATE_LEVEL,
                   "--trusted-root", str(w["tmp"] / "root.json"), "--insecure-ignore-tlog", "--allow-http-registry",
                   *policy, w["ref"])


def _predicate(proc: Any) -> dict[str, Any]:
    envelope = json.loads(proc.stdout.strip().splitlines()[0])
    st = json.loads(base64.b64decode(envelope["payload"]))
    assert st["predicateType"] == PREDICATE_LEVEL
    return dict(st["predicate"])


def _bundles(w: dict[str, Any]) -> list[str]:
    with open_store(parse_reference(w["ref"])) as store:
        listing = store.referrers(w["digest"], MEDIA_BUNDLE)
    return [d.digest for d in listing.descriptors]


def _policy(w: dict[str, Any], min_level: int | None = None) -> str:
    """The Rego recipe of docs/operations.md as written (the minimum level replaced for the too-low case)."""
    text = (ROOT / "docs" / "operations.md").read_text()
    rego = re.search(r"```rego\n(.*?)```", text, re.S)
    assert rego, "docs/operations.md has no rego block"
    body = rego.group(1)
    if min_level is not None:
        body, n = re.subn(r"min_level := \d+", f"min_level := {min_level}", body)
        assert n == 1
    path = w["tmp"] / f"policy-{min_level}.rego"
    path.write_text(body)
    return str(path)


def test_cosign3_verifies_the_level_bundle(world: dict[str, Any]) -> None:
    proc = _verify(world)
    assert proc.returncode == 0, proc.stderr
    pred = _predicate(proc)
    result = world["credential"]["credentialSubject"]["result"][0]
    assert pred["level"] == result["acx:acxLevel"] and pred["tier"] == result["acx:careerTier"]
    assert pred["capability"] == world["credential"]["name"].split(" — ", 1)[1]
    assert pred["capabilityId"] == result["acx:capabilityId"]
    assert pred["issuedAt"] == world["credential"]["validFrom"]
    valid_until = datetime.fromisoformat(pred["validUntil"])
    assert datetime.now(UTC) < valid_until <= datetime.now(UTC) + timedelta(days=1)
    entry = world["credential"]["credentialStatus"]
    assert pred["status"]["statusListIndex"] == entry["statusListIndex"]
    assert pred["status"]["statusListCredential"] == entry["statusListCredential"]
    assert len(_bundles(world)) == 1  # the bundle is a referrer, in the tag-schema index here


def test_the_rego_recipe_accepts_the_level_and_refuses_it_too_low(world: dict[str, Any]) -> None:
    proc = _verify(world, "--policy", _policy(world))
    assert proc.returncode == 0, proc.stderr
    level = world["credential"]["credentialSubject"]["result"][0]["acx:acxLevel"]
    proc = _verify(world, "--policy", _policy(world, level + 1))
    assert proc.returncode != 0 and "polic" in (proc.stderr + proc.stdout).lower()


def test_an_expired_projection_is_refused_and_status_refresh_renews_it(world: dict[str, Any]) -> None:
    """A projection last refreshed two days ago is past its validUntil: the policy refuses it; refreshing
    now replaces the bundle (the old one is taken down) and the policy accepts again."""
    ident, state = world["ident"], world["tmp"] / "state"
    before = _bundles(world)
    results = refresh(state, ident, datetime.now(UTC) - timedelta(days=2))
    assert all(not r.failed for r in results), [r.failed for r in results]
    stale = _bundles(world)
    assert len(stale) == 1 and stale != before
    assert datetime.fromisoformat(_predicate(_verify(world))["validUntil"]) < datetime.now(UTC)
    proc = _verify(world, "--policy", _policy(world))
    assert proc.returncode != 0
    results = refresh(state, ident, datetime.now(UTC))
    assert all(not r.failed for r in results), [r.failed for r in results]
    assert _verify(world, "--policy", _policy(world)).returncode == 0


def test_a_superseding_attest_replaces_the_projection(world: dict[str, Any]) -> None:
    """A second level of the same issuer, ROM, benchmark and capability: cosign finds only the new one."""
    w, tmp, old = world["world"], world["tmp"], _bundles(world)
    outcome = attest(AttestRequest(cartridge_ref=w.cart, benchmark_ref=w.bench, verifier=world["ident"],
                                   solver=ReferenceSolver(34), out_dir=tmp / "out2", state_dir=tmp / "state",
                                   gate=GateOptions(cooldown=timedelta(0)),
                                   sandbox=SandboxOptions(secret_paths=(Path(f"{w.verifier}.key"),))))
    assert isinstance(outcome, Issued), outcome
    world["credential"] = json.loads((tmp / "out2" / "credential.json").read_bytes())
    now = _bundles(world)
    assert len(now) == 1 and now != old
    proc = _verify(world)
    assert proc.returncode == 0, proc.stderr
    assert _predicate(proc)["credentialId"] == world["credential"]["id"]
    with open_store(parse_reference(world["ref"])) as store:
        assert len(store.fetch_manifest(cosign_tag(world["digest"], "att")).layers) == 1


def test_cosign3_and_cosign25_refuse_the_level_after_revoke(world: dict[str, Any]) -> None:
    """Runs last: ``acx-oci revoke`` takes the bundle and the ``.att`` layer down."""
    out = ok(cli("revoke", world["credential"]["id"], "--key", str(world["key"]),
                 "--state", str(world["tmp"] / "state"), "--json"))
    assert out["failed"] == []
    proc = _verify(world)
    assert proc.returncode != 0, proc.stdout
    assert _verify(world, "--policy", _policy(world)).returncode != 0
    assert _bundles(world) == []
    with open_store(parse_reference(world["ref"])) as store:
        assert store.fetch_manifest(cosign_tag(world["digest"], "att")).layers == ()
    assert cosign("verify-attestation", "--key", str(world["tmp"] / "verifier.pub"), "--type", PREDICATE_LEVEL,
                  world["ref"]).returncode != 0


def test_a_registry_that_refuses_delete_makes_revoke_fail_loudly(proxy: FaultProxy, tmp_path: Path) -> None:
    """The bundle cannot be taken down: ``revoke`` exits 3 and names it (the list itself went up), and the
    ``.att`` tag (overwritten, not deleted) no longer carries the level."""
    cosign3_binary()
    w = build_attest_world(tmp_path, proxy.host)
    ident = load_identity(f"{w.verifier}.key", did=w.verifier_did)
    outcome = attest(AttestRequest(cartridge_ref=w.cart, benchmark_ref=w.bench, verifier=ident,
                                   solver=ReferenceSolver(33), out_dir=tmp_path / "out", state_dir=tmp_path / "state",
                                   sandbox=SandboxOptions(secret_paths=(Path(f"{w.verifier}.key"),))))
    assert isinstance(outcome, Issued), outcome
    proxy.add("status", method="DELETE", path="/manifests/", status=405)
    credential = json.loads((tmp_path / "out" / "credential.json").read_bytes())
    res = cli("revoke", credential["id"], "--key", f"{w.verifier}.key", "--state", str(tmp_path / "state"), "--json")
    assert res.exit_code == 3, res.output
    doc = json.loads(res.output)
    assert len(doc["failed"]) == 1 and "could not delete the cosign bundle" in doc["failed"][0], doc
    assert doc["published"], doc  # the status list was republished all the same
    with open_store(parse_reference(w.cart)) as store:
        digest = store.resolve(parse_reference(w.cart).target).digest
        assert store.fetch_manifest(cosign_tag(digest, "att")).layers == ()


def test_the_help_and_the_cli_reference_show_the_command_run_here() -> None:
    """``keys export-pem --help`` (and so docs/cli.md) shows the cosign 3 command :func:`_verify` runs, its root
    file's content, and the cosign 2.5 command beside it (before: only the 2.5 one, which cosign 3 rejects)."""
    from acx_oci.cli.keys_cmd import export_pem

    help_text = export_pem.help or ""
    joined = re.sub(r"\s*\\\n\s*", " ", help_text)
    cosign3_line = ("cosign verify-attestation --key verifier.pub --type https://acx.dev/attestation/level/v1 "
                    "--trusted-root root.json --insecure-ignore-tlog --allow-http-registry REF")
    assert cosign3_line in joined
    assert f"echo '{json.dumps(TRUSTED_ROOT, separators=(',', ':'))}' > root.json" in joined
    assert "# cosign 2.5\n      cosign verify-attestation --key verifier.pub --insecure-ignore-tlog" in help_text
    reference = re.sub(r"\s*\\\n\s*", " ", (ROOT / "docs" / "cli.md").read_text("utf-8"))
    assert cosign3_line in reference
