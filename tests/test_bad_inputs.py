"""Bad input gets one clear line, the documented exit code, and loses nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from acx_oci.cli import main
from acx_oci.demo import run_demo


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


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
