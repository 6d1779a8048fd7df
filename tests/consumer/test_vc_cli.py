"""The command contract: vc sign / vc verify / status-list create|revoke|check (via CliRunner)."""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import canonical
from acx_oci.trust import write_identity

from ..support.cli import cli
from ..support.forgery_world import MANIFEST, NOW, ROM, World, make_world


def run(*args: Any) -> Any:
    return cli(*args, catch_exceptions=False)


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False))
    return path


@pytest.fixture()
def ed(vectors: Path) -> Path:
    return vectors / "eddsa-jcs-2022"


def test_vc_sign_reproduces_signed_vector(ed: Path) -> None:
    method = json.loads((ed / "proofConfigJCS.json").read_text())["verificationMethod"]
    r = run("vc", "sign", ed / "unsigned.json", "--key", ed / "keyPair.json", "--verification-method", method,
            "--created", "2023-02-24T23:36:38Z")
    assert r.exit_code == 0, r.output
    assert canonical(json.loads(r.output)) == canonical(json.loads((ed / "signedJCS.json").read_text()))


@pytest.mark.parametrize("name", ["signedJCS.json", "generated-by-digitalbazaar/signed-ob3-achievement-credential.json",
                                  "generated-by-digitalbazaar/signed-ob3-achievement-credential.proof-array.json",
                                  "generated-by-digitalbazaar/signed-status-list-credential.json"])
def test_vc_verify_accepts_vectors(ed: Path, name: str) -> None:
    r = run("vc", "verify", ed / name, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["verified"] is True and out["mode"] == "proof-only"
    assert "status" in out["skipped"] and "issuer_trusted" in out["skipped"]
    human = run("vc", "verify", ed / name)
    assert "VERIFIED" in human.output and "skipped (not checked)" in human.output


@pytest.mark.parametrize("name", ["signedJCS.json",
                                  "generated-by-digitalbazaar/signed-ob3-achievement-credential.json"])
def test_vc_verify_rejects_one_changed_character(ed: Path, tmp_path: Path, name: str) -> None:
    text = (ed / name).read_text("utf-8")
    doc = json.loads(text)
    subject = json.dumps(doc["credentialSubject"], ensure_ascii=False)
    i = next(j for j, ch in enumerate(subject) if ch.isalpha() and j > 8)
    changed = subject[:i] + ("X" if subject[i] != "X" else "Y") + subject[i + 1:]
    doc["credentialSubject"] = json.loads(changed)
    r = run("vc", "verify", _write(tmp_path / "c.json", doc), "--json")
    assert r.exit_code == 1
    out = json.loads(r.output)
    assert out["verified"] is False
    assert {c["code"] for c in out["checks"] if not c["ok"]} == {"proof_invalid"}
    assert all({"name", "ok", "code", "message"} <= c.keys() for c in out["checks"])


def _level_files(tmp_path: Path, w: World) -> dict[str, Path]:
    doc = w.trust.verifiers[0].did_document
    _write(tmp_path / "verifier.did.json", doc)
    (tmp_path / "trust.yaml").write_text(f"""
publishers: [{{id: "{w.publisher.did}"}}]
verifiers: [{{id: "did:web:verifier.example", didDocument: verifier.did.json}}]
benchmarks:
  - {{id: acx-bench-dag-de, version: "2026.07.1", digest: "{w.trust.benchmarks[0].digest}",
      heldOutSliceDigest: "{w.trust.benchmarks[0].held_out_slice_digest}"}}
status: {{maxAge: 7d}}
solvers: [rom, reference]
""")
    return {"cred": _write(tmp_path / "cred.json", w.signed), "trust": tmp_path / "trust.yaml",
            "list": _write(tmp_path / "list.json", w.status_list)}


NOW_ARG = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_vc_verify_level_credential_with_trust(tmp_path: Path) -> None:
    w = make_world()
    f = _level_files(tmp_path, w)
    ev = []
    for i, env in enumerate(w.envelopes):
        ev += ["--evidence", str(_write(tmp_path / f"g{i}.json", env))]
        (tmp_path / f"g{i}.json").write_bytes(canonical(env))
    r = run("vc", "verify", f["cred"], "--trust", f["trust"], "--rom-digest", ROM, "--manifest-digest", MANIFEST,
            "--controller", w.publisher.did, "--rom-signer", w.publisher.did, "--status-list", f["list"],
            *ev, "--now", NOW_ARG, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["verified"] and out["mode"] == "level" and out["skipped"] == []

    bad = run("vc", "verify", f["cred"], "--trust", f["trust"], "--rom-digest", "sha256:" + "0" * 64,
              "--status-list", f["list"], "--now", NOW_ARG)
    assert bad.exit_code == 1 and "rom_mismatch" in bad.output and "REJECTED" in bad.output


def test_vc_verify_fails_closed_without_status(tmp_path: Path) -> None:
    f = _level_files(tmp_path, make_world())
    r = run("vc", "verify", f["cred"], "--trust", f["trust"], "--now", NOW_ARG, "--json")
    assert r.exit_code == 1
    assert "status_unknown" in json.loads(r.output)["codes"]
    ok = run("vc", "verify", f["cred"], "--trust", f["trust"], "--now", NOW_ARG, "--allow-unknown-status")
    assert ok.exit_code == 0, ok.output


def test_status_list_create_revoke_check_and_vc_verify_sees_revocation(tmp_path: Path) -> None:
    w = make_world()
    f = _level_files(tmp_path, w)
    key = tmp_path / "verifier.key"
    key.write_bytes(w.verifier.pem())
    vm = "did:web:verifier.example#key-1"
    lst = tmp_path / "new-list.json"
    url = w.signed["credentialStatus"]["statusListCredential"]
    r = run("status-list", "create", lst, "--key", key, "--verification-method", vm, "--id", url,
            "--now", "2026-07-01T12:00:00Z", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["id"] == url
    idx = w.signed["credentialStatus"]["statusListIndex"]
    chk = run("status-list", "check", lst, idx, "--json")
    assert chk.exit_code == 0 and json.loads(chk.output) == {**json.loads(chk.output), "index": int(idx), "set": False}
    ok = run("vc", "verify", f["cred"], "--trust", f["trust"], "--status-list", lst, "--now", NOW_ARG)
    assert ok.exit_code == 0, ok.output
    rv = run("status-list", "revoke", lst, idx, "--key", key, "--verification-method", vm,
             "--now", "2026-07-02T00:00:00Z")
    assert rv.exit_code == 0, rv.output
    assert json.loads(run("status-list", "check", lst, idx, "--json").output)["set"] is True
    gone = run("vc", "verify", f["cred"], "--trust", f["trust"], "--status-list", lst, "--now", NOW_ARG, "--json")
    assert gone.exit_code == 1 and "revoked" in json.loads(gone.output)["codes"]


def test_status_list_create_with_uuid_and_size(tmp_path: Path) -> None:
    key, _ = write_identity(tmp_path / "v", make_world().verifier)
    out = tmp_path / "l.json"
    r = run("status-list", "create", out, "--key", key, "--id", "https://v.example/status/", "--size", "262144",
            "--json")
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert len(info["id"].rsplit("/", 1)[1]) == 36 and info["size"] == 262144
    assert json.loads(run("status-list", "check", out, "262143", "--json").output)["set"] is False
    again = run("status-list", "create", out, "--key", key, "--id", "https://v.example/status/x")
    assert again.exit_code == 2 and "refusing to overwrite" in again.output
    small = run("status-list", "create", tmp_path / "s.json", "--key", key, "--id", "https://x", "--size", "1000")
    assert small.exit_code == 2 and "131072" in small.output


@pytest.mark.parametrize(("name", "indices"), [
    ("1edtech-validator/testlist.json", [23]),
    ("generated-by-digitalbazaar/statuslist-131072-set-0-1-7-8-23-94567-131071.json", [0, 1, 7, 8, 23, 94567, 131071]),
    ("generated-by-digitalbazaar/statuslist-262144-set-131072-262143.json", [131072, 262143]),
])
def test_status_list_check_on_vectors(vectors: Path, name: str, indices: list[int]) -> None:
    path = vectors / "bitstring-status-list" / name
    for i in [*indices, 2, 100000]:
        out = json.loads(run("status-list", "check", path, str(i), "--json").output)
        assert out["set"] is (i in indices), (name, i)


def test_status_list_check_refuses_bomb_short_and_legacy(vectors: Path, tmp_path: Path) -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    blob = b"".join(comp.compress(bytes(1 << 20)) for _ in range(300)) + comp.flush()

    def lst(encoded: str) -> Path:
        doc = json.loads((vectors / "bitstring-status-list/spec-examples/example-status-list-credential.json")
                         .read_text())
        doc["credentialSubject"]["encodedList"] = encoded
        return _write(tmp_path / f"l{len(encoded)}.json", doc)
    bomb = run("status-list", "check", lst("u" + base64.urlsafe_b64encode(blob).decode().rstrip("=")), "0")
    assert bomb.exit_code == 2 and "bomb" in bomb.output and len(bomb.output.splitlines()) == 1
    short = run("status-list", "check",
                lst("u" + base64.urlsafe_b64encode(gzip.compress(bytes(125))).decode().rstrip("=")), "0")
    assert short.exit_code == 2 and "1000 entries" in short.output
    legacy = run("status-list", "check",
                 vectors / "bitstring-status-list/w3c-test-suite-legacy/status-credential-single-purpose-ok.json", "0")
    assert legacy.exit_code == 2 and "prefix" in legacy.output


def test_bad_inputs_exit_2(tmp_path: Path, ed: Path) -> None:
    (tmp_path / "bad.json").write_text("{nope")
    r = run("vc", "verify", tmp_path / "bad.json")
    assert r.exit_code == 2 and r.output.startswith("error:")
    r = run("vc", "verify", ed / "signedJCS.json", "--rom-digest", "sha256:xyz", "--trust", tmp_path / "bad.json")
    assert r.exit_code == 2
    (tmp_path / "t.yaml").write_text("publishers: 3")
    r = run("vc", "verify", ed / "signedJCS.json", "--trust", tmp_path / "t.yaml")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
