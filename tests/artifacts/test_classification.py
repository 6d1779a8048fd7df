"""Exam classification enforced: private exams never published in plain text; customer exams need --customer.

A suite in exam form, certified for real, one exam not publicly listable and one a customer's, is pushed to an
OCI image layout and attested by a real ROM in bubblewrap; then every blob in the layout is grepped for the
private exams' ids, prompts, hidden-test text and canary markers, and for the customer's name.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from acx_oci.model import benchmark as bmodel
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.trust import load_identity

from ..support.cli import cli, ok

ROOT = Path(__file__).resolve().parent.parent.parent
GOOD = ROOT / "testdata" / "exams-good"
AGENT = ROOT / "testdata" / "agents" / "simple_agent.py"
CAP = "implement-feature[python]@software-engineering"
CUSTOMER = "acme-zz-customer"


def _classify(suite: Path, exam: str, **classification: Any) -> None:
    path = suite / "tasks" / exam / "exam.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["classification"] = {**doc["classification"], **classification}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _task(i: int, **classification: Any) -> dict[str, Any]:
    return {"id": f"t-{i:03d}", "difficulty": 20, "prompt": f"p{i}", "grader": {"kind": "pytest", "files": {}},
            **({"classification": classification} if classification else {})}


def test_private_tasks_are_always_held_out_and_the_rest_split_as_before() -> None:
    doc = {**bmodel.demo_document(), "tasks": [_task(i) for i in range(20)], "heldOutFraction": 0.25}
    plain = bmodel.from_document(doc)
    public, held = bmodel.split(plain, b"k" * 32)
    doc["tasks"][3]["classification"] = {"publiclyListable": False}
    doc["tasks"][4]["classification"] = {"customerOwned": True, "customer": CUSTOMER}
    public2, held2 = bmodel.split(bmodel.from_document(doc), b"k" * 32)
    ids = {str(t["id"]) for t in held2}
    assert {"t-003", "t-004"} <= ids and len(held2) == len(held) == 5
    assert not {"t-003", "t-004"} & {str(t["id"]) for t in public2}
    # listable tasks keep their rank order: those still held out were held out before, none newly exposed
    assert ids - {"t-003", "t-004"} <= {str(t["id"]) for t in held}
    assert {str(t["id"]) for t in public} - {"t-003", "t-004"} <= {str(t["id"]) for t in public2}
    assert bm.check_customers(bmodel.from_document(doc), CUSTOMER) == ["t-004"]


def test_customer_exams_need_the_matching_customer(tmp_path: Path) -> None:
    doc = {**bmodel.demo_document()}
    doc["tasks"] = [dict(t) for t in doc["tasks"]]
    doc["tasks"][0]["classification"] = {"customerOwned": True, "customer": CUSTOMER}
    bm.write_suite_dir(tmp_path / "bench", doc)
    ok(cli("keygen", tmp_path / "ver"))
    layout = f"oci:{tmp_path / 'layout'}:1"
    for extra in ((), ("--customer", "someone-else")):
        res = cli("benchmark", "push", tmp_path / "bench", layout, "--seal-to", tmp_path / "ver.did.json", *extra)
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
        assert "customer" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "layout").exists()  # refused before anything was pushed
    plain = {**bmodel.demo_document()}
    bm.write_suite_dir(tmp_path / "plain", plain)
    res = cli("benchmark", "push", tmp_path / "plain", layout, "--seal-to", tmp_path / "ver.did.json",
              "--customer", CUSTOMER)
    assert res.exit_code == 2 and "no exam of the suite is customer-owned" in res.output
    ok(cli("benchmark", "push", tmp_path / "bench", layout, "--seal-to", tmp_path / "ver.did.json",
           "--customer", CUSTOMER, "--json"))


@pytest.mark.slow  # certifies a suite for real (about 90 s on a shared machine)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")
def test_private_and_customer_exams_appear_in_no_published_blob(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(GOOD, suite)
    _classify(suite, "fx-0002", publiclyListable=False)
    _classify(suite, "fx-0001", customerOwned=True, customer=CUSTOMER)
    for name in ("publisher", "verifier", "certifier"):
        ok(cli("keygen", tmp_path / name))
    ok(cli("exam", "certify", suite, "--out", tmp_path / "certs", "--jobs", "2", "--json"))
    layout = tmp_path / "layout"
    push = ("benchmark", "push", suite, f"oci:{layout}:bench", "--seal-to", tmp_path / "verifier.did.json",
            "--certifications", tmp_path / "certs", "--certifier-key", tmp_path / "certifier.key")
    res = cli(*push)
    assert res.exit_code == 2 and "--customer" in res.output
    pushed = ok(cli(*push, "--customer", CUSTOMER, "--json"))
    assert pushed["examCertification"] == "certified"
    assert ok(cli("exam", "verify", f"oci:{layout}:bench", "--json"))["verified"] is True

    d = tmp_path / "agent"
    ok(cli("cartridge", "init", d, "--id", "io.example/fx-agent", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py"))
    shutil.copy(AGENT, d / "skills" / "agent.py")
    cart = f"oci:{layout}:agent"
    ok(cli("cartridge", "push", d, cart, "--key", tmp_path / "publisher.key"))
    did = json.loads((tmp_path / "verifier.did.json").read_text())["id"]
    out = tmp_path / "att"
    look = ok(cli("attest", cart, "--benchmark", f"oci:{layout}:bench", "--key", tmp_path / "verifier.key",
                  "--issuer", did, "--state", tmp_path / "state", "-o", out, "--min-games", "1", "--certifier",
                  load_identity(tmp_path / "certifier.key").did, "--json"), 1)
    assert look["look"] is True  # a 2-exam slice: below the gate's floor, nothing issued or pushed
    run = json.loads((out / "result.json").read_text())  # what a credential off this run would say of its exams
    assert run["customerExams"] is True and run["examCertification"]["acx:examCertification"] == "certified"

    # what must never be published in the clear: ids, prompts, hidden-test text, canary markers, the customer
    secrets = {"fx-0001", "fx-0002", CUSTOMER}
    for exam in ("fx-0001", "fx-0002"):
        secrets.add((suite / "tasks" / exam / "prompt.md").read_text().splitlines()[-1])
        hidden = (suite / "tasks" / exam / "hidden" / "test_hidden.py").read_text()
        secrets.update(line for line in hidden.splitlines() if "canary" in line or "CASES =" in line)
    for exam in ("fx-0001", "fx-0002"):  # and the markers the local (unpublished) records name
        local = (tmp_path / "certs" / "records" / f"{exam}.json").read_text()
        assert exam in local and "acx-canary-" in local  # the grep would find them there
        secrets.update(re.findall(r"acx-canary-[0-9a-f]+", local))
    # the cartridge's own files (its agent knows fizzbuzz) are its publisher's to publish, not the benchmark's
    cart_blobs = _cartridge_blobs(layout)
    blobs = [p for p in (layout / "blobs" / "sha256").iterdir() if p.name not in cart_blobs]
    assert len(blobs) > 10
    leaks = [(p.name, s) for p in blobs for s in secrets if s.encode() in p.read_bytes()]
    assert leaks == []
    redacted = [json.loads(p.read_bytes()) for p in blobs if b'"redacted":true' in p.read_bytes()]
    assert len(redacted) == 2 and all(r["exam"].startswith("hmac-sha256:") for r in redacted)
    public = [p.read_bytes() for p in blobs if b"fx-0003" in p.read_bytes()]
    assert public  # the listable exam is published (the grep can find an id when one is there)


def _cartridge_blobs(layout: Path) -> set[str]:
    """The cartridge's own layers and config (the ROM's files are its publisher's to publish)."""
    index = json.loads((layout / "index.json").read_text())
    out: set[str] = set()
    for m in index["manifests"]:
        if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == "agent":
            doc = json.loads((layout / "blobs" / "sha256" / m["digest"].split(":")[1]).read_text())
            out |= {d["digest"].split(":")[1] for d in [doc["config"], *doc["layers"]]}
    return out
