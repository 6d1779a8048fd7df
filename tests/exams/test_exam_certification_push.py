"""Certification travels with the benchmark: a signed referrer; push gates on it; attest and consumers read it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acx_oci.evaluation.verify import _check_exam_certification
from acx_oci.trust import load_identity
from tests.support.cli import cli, ok
from tests.support.jsondoc import check_document

ROOT = Path(__file__).resolve().parent.parent.parent
GOOD = ROOT / "testdata" / "exams-good"
AGENT = ROOT / "testdata" / "agents" / "simple_agent.py"
CAP = "implement-feature[python]@software-engineering"

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory, registry: str) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("certpush")
    suite = tmp / "suite"
    shutil.copytree(GOOD, suite)
    for name in ("publisher", "verifier", "certifier", "other"):
        ok(cli("keygen", str(tmp / name)))
    ok(cli("exam", "certify", str(suite), "--out", str(tmp / "certs"), "--jobs", "2", "--json"))
    d = tmp / "agent"
    ok(cli("cartridge", "init", str(d), "--id", "io.example/fx-agent", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py"))
    shutil.copy(AGENT, d / "skills" / "agent.py")
    cart = f"{registry}/certs/agent:1.0.0"
    ok(cli("cartridge", "push", str(d), cart, "--key", str(tmp / "publisher.key")))
    return {"tmp": tmp, "suite": suite, "registry": registry, "cart": cart,
            "verifier": load_identity(tmp / "verifier.key").did, "certifier": load_identity(tmp / "certifier.key").did,
            "other": load_identity(tmp / "other.key").did}


def _push(w: dict[str, Any], suite: Path, tag: str, *extra: str, code: int = 0) -> dict[str, Any]:
    return dict(ok(cli("benchmark", "push", str(suite), f"{w['registry']}/certs/bench:{tag}", "--seal-to",
                       str(w["tmp"] / "verifier.did.json"), "--certifications", str(w["tmp"] / "certs"), *extra,
                       "--json"), code)) if code == 0 else {"output": cli(
        "benchmark", "push", str(suite), f"{w['registry']}/certs/bench:{tag}", "--seal-to",
        str(w["tmp"] / "verifier.did.json"), "--certifications", str(w["tmp"] / "certs"), *extra).output}


def _attest(w: dict[str, Any], tag: str) -> dict[str, Any]:
    """What a credential off this benchmark says of its exams (``result.json``): a 2-exam slice is below the
    gate's floor, so the run is a look that issues nothing; a full-size certified suite issues with these claims
    (the real-agent page's test checks them in a credential a consumer verifies)."""
    out = w["tmp"] / f"att-{tag}"
    look = ok(cli("attest", w["cart"], "--benchmark", f"{w['registry']}/certs/bench:{tag}", "--key",
                  str(w["tmp"] / "verifier.key"), "--issuer", w["verifier"], "--state", str(w["tmp"] / f"state-{tag}"),
                  "-o", str(out), "--min-games", "1", "--certifier", w["certifier"], "--json"), 1)
    assert look["look"] is True and not (out / "credential.json").exists(), look
    return dict(json.loads((out / "result.json").read_text())["examCertification"])


def _codes(res: dict[str, Any], certified_by: list[str]) -> list[str]:
    """The consumer's rule (a trust file's ``certifiedBy``) on those claims."""
    check = _check_exam_certification(res, tuple(certified_by))
    return [] if check.ok else [check.code]


def test_certified_suite_pushes_a_signed_certification_referrer(certified: dict[str, Any]) -> None:
    w = certified
    pushed = _push(w, w["suite"], "certified", "--certifier-key", str(w["tmp"] / "certifier.key"))
    assert pushed["examCertification"] == "certified" and pushed["certificationDigest"].startswith("sha256:")
    raw = subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false",
                          f"docker://{w['registry']}/certs/bench@{pushed['certificationDigest']}"],
                         capture_output=True, check=True, timeout=60).stdout
    manifest = json.loads(raw)
    assert manifest["artifactType"] == "application/vnd.acx.exam-certification.v1"
    assert manifest["subject"]["digest"] == pushed["manifestDigest"]
    listed = ok(cli("discover", f"{w['registry']}/certs/bench:certified", "--json"))
    assert pushed["certificationDigest"] in json.dumps(listed)
    res = cli("exam", "verify", f"{w['registry']}/certs/bench:certified", "--json")
    verified = check_document("exam verify", res.stdout, res.exit_code)  # its shipped schema (test_json_output)
    assert verified["verified"] is True and verified["certification"]["certifier"] == w["certifier"]
    # The credential names the certification; a consumer requiring this certifier accepts it, another does not.
    res = _attest(w, "certified")
    assert res["acx:examCertification"] == "certified" and res["acx:examCertifier"] == w["certifier"]
    assert res["acx:examCertificationDigest"] == pushed["certificationDigest"]
    assert res["acx:examClassification"] == "stated"  # every exam.yaml states its classification
    assert "exam_uncertified" not in _codes(res, [w["certifier"]])
    assert "exam_uncertified" in _codes(res, [w["other"]])


def test_a_changed_exam_is_uncertified_and_refused(certified: dict[str, Any]) -> None:
    w = certified
    changed = w["tmp"] / "changed"
    shutil.copytree(w["suite"], changed)
    stub = next((changed / "tasks" / "fx-0002" / "workspace").glob("*.py"))
    stub.write_text(stub.read_text() + "\n# edited after certification\n")
    out = _push(w, changed, "changed", "--certifier-key", str(w["tmp"] / "certifier.key"), code=1)["output"]
    assert "fx-0002" in out and "changed since it was certified" in out
    # --allow-uncertified pushes it, and says so in every credential issued off it.
    pushed = _push(w, changed, "changed", "--allow-uncertified")
    assert pushed["examCertification"] == "uncertified-allowed" and pushed["certificationDigest"] is None
    res = _attest(w, "changed")
    assert res["acx:examCertification"] == "uncertified-allowed"
    assert "exam_uncertified" in _codes(res, [w["certifier"]])
    failed = cli("exam", "verify", f"{w['registry']}/certs/bench:changed")
    assert failed.exit_code == 1


def _forge(w: dict[str, Any], tag: str) -> str:
    """A self-made did:key certification of the same benchmark manifest, its classifications dropped, moved to
    the front of the referrers index (anyone who can push can rewrite that tag)."""
    from acx_oci.crypto import generate_identity
    from acx_oci.oci import MEDIA_INDEX, StoreOptions, open_store, parse_reference
    from acx_oci.oci.registry.referrers import build_index, fallback_tag, read_index
    from acx_oci.services.artifacts import benchmark as bm
    from acx_oci.services.artifacts import certification as cert

    store: Any = open_store(parse_reference(f"{w['registry']}/certs/bench:{tag}"), StoreOptions())
    remote = bm.fetch(store, tag)
    real, _ = cert.find_certification(store, remote.manifest.digest, str(remote.descriptor["benchmarkDigest"]))
    assert real is not None
    forger = generate_identity()
    pred = {**real.predicate, "certifier": forger.did,
            "exams": {k: {**v, "classification": None} for k, v in real.predicate["exams"].items()}}
    forged = cert.push_certification(store, remote.manifest.descriptor, pred, {}, forger)
    index = read_index(store, remote.manifest.digest)
    first = [d for d in index if d.digest == forged.digest] + [d for d in index if d.digest != forged.digest]
    store.put_manifest(build_index(first), MEDIA_INDEX, fallback_tag(remote.manifest.digest))
    listed = store.referrers(remote.manifest.digest, cert.ARTIFACT_EXAM_CERTIFICATION).descriptors
    assert listed[0].digest == forged.digest and len(listed) == 2
    return forger.did


def test_a_forged_certification_changes_nothing(certified: dict[str, Any]) -> None:
    """An untrusted certifier's referrer, listed first, neither changes what the credential says nor makes a
    consumer pinning the genuine certifier refuse."""
    w = certified
    pushed = _push(w, w["suite"], "forged", "--certifier-key", str(w["tmp"] / "certifier.key"))
    forger = _forge(w, "forged")
    res = _attest(w, "forged")
    assert res["acx:examCertifier"] == w["certifier"] and res["acx:examClassification"] == "stated"
    assert res["acx:examCertificationDigest"] == pushed["certificationDigest"]
    assert "exam_uncertified" not in _codes(res, [w["certifier"]])
    trust = w["tmp"] / "trust-forged.yaml"
    trust.write_text(json.dumps({"benchmarks": [{"id": pushed["id"], "version": pushed["version"],
                                                 "digest": pushed["benchmarkDigest"],
                                                 "certifiedBy": [w["certifier"]]}]}))
    res_ = cli("exam", "verify", f"{w['registry']}/certs/bench:forged", "--trust", str(trust), "--json")
    verified = check_document("exam verify", res_.stdout, res_.exit_code)
    assert verified["verified"] is True and verified["certification"]["certifier"] == w["certifier"]
    # a verifier that trusts only its own key does not take the forger's word either: refused before any game
    out = cli("attest", w["cart"], "--benchmark", f"{w['registry']}/certs/bench:forged", "--key",
              str(w["tmp"] / "verifier.key"), "--issuer", w["verifier"], "--state", str(w["tmp"] / "state-own"),
              "-o", str(w["tmp"] / "att-own"), "--json")
    assert out.exit_code == 2 and "attest --certifier" in out.output and w["certifier"] in out.output
    assert forger not in json.dumps(res)
