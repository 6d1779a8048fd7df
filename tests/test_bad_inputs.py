"""Bad input gets one clear line, the documented exit code, and loses nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import Result

from acx_oci.services.tools import run_demo

from .support.cli import cli


def one_line(res: Result, code: int, needle: str) -> None:
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output
    assert needle in res.output, res.output


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("demo") / "w"
    assert run_demo(w, say=lambda _: None).ok
    return w


def test_attest_refuses_a_key_that_is_not_the_issuers(demo: Path, tmp_path: Path) -> None:
    cart, bench = f"oci:{demo / 'oci' / 'strong'}:1.0.0", f"oci:{demo / 'oci' / 'benchmark'}:2026.07.1"
    base = ["attest", cart, "--benchmark", bench, "--competence", "33", "--state", str(tmp_path / "s"),
            "--no-push"]
    res = cli(*base, "--key", str(demo / "keys" / "verifier.key"), "--issuer", "did:web:other.example",
              "-o", str(tmp_path / "o1"))
    one_line(res, 2, "did:web:other.example")
    res = cli(*base, "--key", str(demo / "keys" / "verifier.key"), "--issuer", "notadid", "-o", str(tmp_path / "o2"))
    one_line(res, 2, "expected did:key")
    res = cli(*base, "--key", str(demo / "keys" / "publisher.key"), "--issuer", "did:web:verifier.acx.example",
              "-o", str(tmp_path / "o3"))
    one_line(res, 2, "publisher")
    assert not (tmp_path / "o1").exists() and not (tmp_path / "s" / "ledger.sqlite3").exists()


def test_attest_refuses_non_empty_output(demo: Path, tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "keep.txt").write_text("mine")
    res = cli("attest", f"oci:{demo / 'oci' / 'strong'}:1.0.0", "--benchmark",
              f"oci:{demo / 'oci' / 'benchmark'}:2026.07.1", "--key", str(demo / "keys" / "verifier.key"),
              "--issuer", "did:web:verifier.acx.example", "--competence", "33", "--state", str(tmp_path / "s"),
              "-o", str(tmp_path / "o"))
    one_line(res, 2, "not empty")
    assert (tmp_path / "o" / "keep.txt").read_text() == "mine"


def test_revoke_refuses_someone_elses_key(demo: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    shutil.copytree(demo / "verifier-state", state)
    res = cli("revoke", "urn:uuid:does-not-matter", "--key", str(demo / "keys" / "publisher.key"),
              "--state", str(state))
    one_line(res, 2, "no credential")
    strong = json.loads((demo / "attest" / "strong" / "result.json").read_text())
    res = cli("revoke", strong["attestationDigest"], "--key", str(demo / "keys" / "publisher.key"),
              "--state", str(state))
    one_line(res, 2, "was issued by did:web:verifier.acx.example")


def test_pull_of_a_tampered_layout_writes_nothing(demo: Path, tmp_path: Path) -> None:
    layout = tmp_path / "layout"
    shutil.copytree(demo / "oci" / "strong", layout)
    skill = next((demo / "cartridges" / "strong" / "skills").rglob("SKILL.md")).read_bytes()
    import hashlib

    blob = layout / "blobs" / "sha256" / hashlib.sha256(skill).hexdigest()
    blob.write_bytes(b"# evil\n")
    out = tmp_path / "out"
    res = cli("pull", f"oci:{layout}:1.0.0", "-o", str(out))
    one_line(res, 1, "digest mismatch")
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.partial")]
    blob.unlink()
    res = cli("pull", f"oci:{layout}:1.0.0", "-o", str(out))
    one_line(res, 1, "incomplete")
    assert not out.exists()


def test_not_found_and_paths(demo: Path, tmp_path: Path) -> None:
    one_line(cli("inspect", f"oci:{tmp_path / 'nope'}:1"), 2, "no OCI image layout")
    one_line(cli("inspect", f"oci:{demo / 'oci' / 'strong'}:nosuchtag"), 2, "not found")
    one_line(cli("keygen", str(tmp_path / "missing" / "deeper" / "k")), 0, "did:key")  # parents are created
    (tmp_path / "file").write_text("x")
    one_line(cli("keygen", str(tmp_path / "file" / "k")), 2, "error:")
    one_line(cli("inspect", f"oci:{demo / 'oci' / 'strong'}:1.0.0", "--timeout", "0"), 2, "--timeout")


def test_corrupt_ledger_and_bad_status_list_files(demo: Path, tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "ledger.sqlite3").write_bytes(b"\x00garbage" * 100)
    res = cli("revoke", "sha256:" + "0" * 64, "--key", str(demo / "keys" / "verifier.key"),
              "--state", str(tmp_path / "state"))
    one_line(res, 2, "SQLite")
    (tmp_path / "list.json").write_text("[1, 2]")
    res = cli("resolve", f"oci:{demo / 'oci' / 'strong'}:1.0.0", "--trust", str(demo / "trust.json"),
              "--status-list", str(tmp_path / "list.json"))
    one_line(res, 2, "status list")


def test_gateway_bad_listen_is_usage_error(demo: Path, tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text("apiVersion: acx.dev/policy/v1\nrules: []\n")
    res = cli("gateway", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:99999", "--policy",
              str(tmp_path / "policy.yaml"), "--trust", str(demo / "trust.json"))
    one_line(res, 2, "--listen")


def test_key_pair_json_cannot_claim_a_controller_it_cannot_show(tmp_path: Path) -> None:
    from acx_oci.crypto import ED25519_PRIV_PREFIX, generate_identity
    from acx_oci.crypto.keys import b58encode

    ident = generate_identity()
    doc = {"publicKeyMultibase": ident.multikey, "secretKeyMultibase": b58encode(ED25519_PRIV_PREFIX + ident.seed),
           "controller": "did:web:verifier.acx.example"}
    (tmp_path / "forged.json").write_text(json.dumps(doc))
    from acx_oci.errors import UsageError
    from acx_oci.trust import load_identity

    with pytest.raises(UsageError, match="cannot show"):
        load_identity(tmp_path / "forged.json")
    doc["controller"] = generate_identity().did
    (tmp_path / "forged.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="is the key of"):
        load_identity(tmp_path / "forged.json")


def test_did_web_document_with_relative_refs_and_rotated_key(tmp_path: Path) -> None:
    """A DID document may reference methods relatively; the key signs under the method id it is listed as."""
    from acx_oci.crypto import generate_identity
    from acx_oci.trust import load_identity, write_identity

    ident = generate_identity("did:web:verifier.example")
    write_identity(tmp_path / "v", ident)
    doc = json.loads((tmp_path / "v.did.json").read_text())
    doc["verificationMethod"][0]["id"] = "did:web:verifier.example#key-3"
    doc["assertionMethod"] = ["#key-3"]
    (tmp_path / "v.did.json").write_text(json.dumps(doc))
    loaded = load_identity(tmp_path / "v.key", did="did:web:verifier.example")
    assert loaded.verification_method == "did:web:verifier.example#key-3"


def test_one_state_two_issuers_keeps_two_lists(demo: Path, tmp_path: Path) -> None:
    """Attesting from the same state under a second DID must not re-sign the first DID's list."""
    from acx_oci.trust import load_identity

    state = tmp_path / "state"
    shutil.copytree(demo / "verifier-state", state)
    layout = tmp_path / "oci"
    shutil.copytree(demo / "oci", layout)
    key = demo / "keys" / "verifier.key"
    as_did_key = load_identity(key).did_key
    res = cli("attest", f"oci:{layout / 'weak'}:1.0.0", "--benchmark", f"oci:{layout / 'benchmark'}:2026.07.1",
              "--key", str(key), "--issuer", as_did_key, "--competence", "33", "--state", str(state),
              "--cooldown", "0", "-o", str(tmp_path / "att"), "--json")
    assert res.exit_code == 0, res.output
    trust = json.loads((demo / "trust.json").read_text())
    trust["verifiers"][0]["didDocument"] = str(demo / "keys" / "verifier.did.json")
    trust["verifiers"].append({"id": as_did_key})
    (tmp_path / "trust.json").write_text(json.dumps(trust))
    for name in ("weak",):
        doc = json.loads(cli("resolve", f"oci:{layout / name}:1.0.0", "--trust", str(tmp_path / "trust.json"),
                             "--json").output)
        assert doc["capabilities"][0]["effective"] == "VERIFIED", doc
        assert doc["capabilities"][0]["issuer"] == as_did_key
    refreshed = json.loads(cli("status-refresh", "--key", str(key), "--issuer", as_did_key, "--state", str(state),
                               "--json").output)
    assert sum(1 for r in refreshed["lists"] if r["skipped"]) == 1  # the did:web list is left to its issuer
