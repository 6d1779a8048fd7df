"""Benchmarks: the demo suite, the deterministic split, digests, sealed push to both stores."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import canonical, recipient_from_identity, sha256_digest
from acx_oci.errors import IntegrityError, UsageError, VerificationError
from acx_oci.model import benchmark as bmodel
from acx_oci.oci import open_store
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.trust import load_identity

from ..support.cli import cli

ROOT = Path(__file__).resolve().parent.parent.parent


def test_demo_suite_shape() -> None:
    bench = bmodel.from_document(bmodel.demo_document())
    ids = [t["id"] for t in bench.tasks]
    assert ids == [f"dag-{i:04d}" for i in range(1, 161)]
    diffs = [t["difficulty"] for t in bench.tasks]
    assert min(diffs) == 15 and max(diffs) == 48
    assert bench.capability["taskType"] == "build-dag"
    assert bench.capability["stack"] == ["pkg:generic/snowflake", "pkg:pypi/apache-airflow", "pkg:pypi/dbt-core"]
    assert bench.capability["domain"] == "data-engineering"
    from acx_oci.model import parse_capability

    assert bench.capability["id"] == parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering").id
    assert (bench.id, bench.version) == ("acx-bench-dag-de", "2026.07.1")


def test_split_is_deterministic_in_suite_and_key() -> None:
    bench = bmodel.from_document(bmodel.demo_document())
    k1, k2 = b"\x01" * 32, b"\x02" * 32
    pub, held = bmodel.split(bench, k1)
    assert (len(pub), len(held)) == (64, 96)
    assert bmodel.split(bench, k1) == (pub, held)
    doc = bmodel.demo_document()
    shuffled = bmodel.from_document({**doc, "tasks": list(reversed(doc["tasks"]))})
    assert bmodel.split(shuffled, k1) == (pub, held)
    assert {t["id"] for t in bmodel.split(bench, k2)[1]} != {t["id"] for t in held}
    assert bmodel.held_out_slice_digest([t["id"] for t in held]) == sha256_digest(
        canonical(sorted(t["id"] for t in held)))


def test_benchmark_digest_commits_to_held_out_content() -> None:
    doc = bmodel.demo_document()
    base = bmodel.from_document(doc).digest
    _, held = bmodel.split(bmodel.from_document(doc), b"\x01" * 32)
    victim = held[0]["id"]
    changed = {**doc, "tasks": [dict(t, prompt=t["prompt"] + " ") if t["id"] == victim else t for t in doc["tasks"]]}
    assert bmodel.from_document(changed).digest != base


def test_suite_validation_errors_are_one_line() -> None:
    doc = bmodel.demo_document()
    with pytest.raises(UsageError, match="difficulty"):
        bmodel.from_document({**doc, "tasks": [dict(doc["tasks"][0], difficulty="hard")]})
    with pytest.raises(UsageError, match="duplicate"):
        bmodel.from_document({**doc, "tasks": [doc["tasks"][0], doc["tasks"][0]]})
    with pytest.raises(UsageError, match="capability"):
        bmodel.from_document({**doc, "capability": {**doc["capability"], "id": "acx-cap:sha256:" + "0" * 64}})


def test_bench_py_suite_pins_its_graders(tmp_path: Path) -> None:
    bench, key = bm.load_suite_dir(ROOT / "testdata" / "bench-py")
    assert len(bench.tasks) == 150 and len(key) == 32
    assert len(bmodel.split(bench, key)[1]) == bmodel.held_out_count(150, 0.6) == 90
    t = bench.tasks[0]
    assert t["grader"]["kind"] == "pytest" and "_harness.py" in t["grader"]["files"]
    assert t["grader"]["digest"] == bmodel.grader_digest(t["grader"]["files"])
    doc = bench.document()
    doc["tasks"][0]["grader"] = {**t["grader"], "files": {**t["grader"]["files"], "test_hidden.py": "x = 1\n"}}
    with pytest.raises(IntegrityError, match="grader files digest"):
        bmodel.from_document(doc)


def test_bench_py_controls_stay_outside_the_published_tasks() -> None:
    import re

    suite = ROOT / "testdata" / "bench-py"
    bench, _ = bm.load_suite_dir(suite)
    canaries = set()
    for t in bench.tasks:
        d = suite / "tasks" / t["id"]
        meta = json.loads((d / "controls" / "expected.json").read_text())
        hidden = t["grader"]["files"]["test_hidden.py"]
        # one test function per behaviour (>= 2 besides the visible example), counted in task.json
        assert t["grader"]["expectedTests"] == len(meta["tests"]) >= 3
        assert re.findall(r"^def (test_\w+)\(", hidden, re.M) == meta["tests"]
        canaries.update(re.findall(r"acx-canary-[0-9a-f]{24}\b", hidden))
        # the two wrong controls fail different, non-empty, proper subsets of the hidden tests
        inc, look = meta["failing"]["incomplete"], meta["failing"]["lookalike"]
        assert inc and look and inc != look and set(inc) < set(meta["tests"]) and set(look) < set(meta["tests"])
        # reference and controls exist but are never part of what is published or shown to the agent
        published = json.dumps(t)
        for sol in ("reference", "controls/incomplete", "controls/lookalike"):
            src = (d / sol / "solution.py").read_text()
            assert src.startswith("# ruff: noqa\ndef ") and src not in published
        assert not any(k.startswith(("reference", "controls")) for k in t["workspace"]["files"])
        assert not any(k.startswith(("reference", "controls")) for k in t["grader"]["files"])
    assert len(canaries) == len(bench.tasks)


def _keys(tmp_path: Path) -> tuple[Path, Path]:
    for name in ("verifier", "other"):
        assert cli("keygen", str(tmp_path / name)).exit_code == 0
    return tmp_path / "verifier", tmp_path / "other"




@pytest.mark.parametrize("kind", ["registry", "layout"])
def test_demo_push_inspect_unseal(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    verifier, other = _keys(tmp_path)
    assert cli("benchmark", "demo", str(tmp_path / "bench")).exit_code == 0
    if kind == "registry":
        ref = f"{request.getfixturevalue('registry')}/acme/bench-{tmp_path.name[-8:].lower()}:2026.07.1"
    else:
        ref = f"oci:{tmp_path / 'layout'}:2026.07.1"
    res = cli("benchmark", "push", str(tmp_path / "bench"), ref, "--seal-to", f"{verifier}.did.json", "--json")
    assert res.exit_code == 0, res.output
    pushed = json.loads(res.output)
    assert set(pushed) >= {"manifestDigest", "benchmarkDigest", "heldOutSliceDigest"}

    res = cli("benchmark", "inspect", ref, "--json")
    assert res.exit_code == 0, res.output
    info = json.loads(res.output)
    assert (info["id"], info["version"], info["taskCount"], info["publicCount"], info["heldOutCount"]) == (
        "acx-bench-dag-de", "2026.07.1", 160, 64, 96)
    assert info["heldOutSliceDigest"] == pushed["heldOutSliceDigest"]
    assert info["benchmarkDigest"] == pushed["benchmarkDigest"]
    assert info["capability"]["taskType"] == "build-dag"

    out = tmp_path / "held.json"
    res = cli("benchmark", "unseal", ref, "--key", f"{verifier}.key", "-o", str(out))
    assert res.exit_code == 0, res.output
    held = json.loads(out.read_text())
    ids = [t["id"] for t in held["tasks"]]
    assert len(ids) == 96
    assert "sha256:" + hashlib.sha256(canonical(sorted(ids))).hexdigest() == pushed["heldOutSliceDigest"]
    # The whole suite re-assembles to the published benchmark digest.
    bench, _ = bm.load_suite_dir(tmp_path / "bench")
    assert bench.digest == pushed["benchmarkDigest"]

    # No held-out task id in plaintext in any pushed blob (manifest, config, every layer).
    store = open_store(ref)
    manifest = store.fetch_manifest("2026.07.1")
    blobs = [manifest.raw, store.fetch_blob(manifest.config.digest)]
    blobs += [store.fetch_blob(layer.digest) for layer in manifest.layers]
    assert len(blobs) == 5
    for blob in blobs:
        for tid in ids:
            assert tid.encode() not in blob
    public = next(b for b in blobs if b'"acx.benchmark.public-slice/1"' in b)
    assert len(json.loads(public)["tasks"]) == 64

    # Only a recipient can unseal.
    res = cli("benchmark", "unseal", ref, "--key", f"{other}.key", "-o", str(tmp_path / "nope.json"))
    assert res.exit_code == 1 and "not sealed to" in res.output

    if kind == "layout":
        raw = subprocess.run(["skopeo", "inspect", "--raw", f"oci:{tmp_path / 'layout'}:2026.07.1"],
                             capture_output=True, check=True).stdout
        assert json.loads(raw)["artifactType"] == "application/vnd.acx.benchmark.v1"
        assert sha256_digest(raw) == pushed["manifestDigest"]


def test_tampered_public_slice_is_caught_after_unsealing(tmp_path: Path) -> None:
    ident_path, _ = _keys(tmp_path)
    ident = load_identity(f"{ident_path}.key")
    bench = bmodel.from_document(bmodel.demo_document())
    key = b"\x05" * 32
    pub = bm.publish_layers(bench, key, [recipient_from_identity(ident)])
    store = open_store(f"oci:{tmp_path / 'layout'}")
    from acx_oci.oci import EMPTY_JSON, MEDIA_EMPTY, build_manifest

    public_doc: dict[str, Any] = json.loads(pub.public_slice)
    public_doc["tasks"][0]["difficulty"] = 99
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layers = [store.push_blob(pub.descriptor, bmodel.MEDIA_DESCRIPTOR),
              store.push_blob(canonical(public_doc), bmodel.MEDIA_PUBLIC),
              store.push_blob(pub.sealed_slice, bmodel.MEDIA_SEALED)]
    store.push_manifest(build_manifest("application/vnd.acx.benchmark.v1", layers),
                        "application/vnd.oci.image.manifest.v1+json", "evil")
    remote = bm.fetch(store, "evil")
    with pytest.raises(IntegrityError, match="re-assembled suite"):
        bm.unseal_remote(remote, ident)
    sealed = dict(remote.sealed)
    sealed["recipients"] = []
    with pytest.raises(VerificationError):
        bm.unseal_remote(bm.RemoteBenchmark(remote.manifest, remote.descriptor, remote.public_tasks, sealed), ident)


def test_an_uncertified_suite_is_refused_with_the_command_that_certifies_it(tmp_path: Path) -> None:
    """A suite never certified (or --certifications forgotten) named every exam with the same advice, ten of
    them; now the exams without a record are one list, with where push looked and the command to run."""
    assert cli("keygen", tmp_path / "ver").exit_code == 0
    certs = tmp_path / "certs"
    suite = ROOT / "testdata" / "exams-good"
    res = cli("benchmark", "push", suite, f"oci:{tmp_path / 'layout'}:1", "--seal-to", tmp_path / "ver.did.json",
              "--certifications", certs)
    assert res.exit_code == 1, res.output
    line = res.stderr.strip()
    assert "\n" not in line and line.count("no certification record") == 0, line
    assert f"3 exam(s) not certified: 3 without a certification record in {certs} (fx-0001, fx-0002, fx-0003): " \
           f"run acx-oci exam certify {suite} --out {certs}" in line, line
    assert not (tmp_path / "layout").exists()
