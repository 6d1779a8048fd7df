"""Per-exam environment images: push pins each exam's certified image, attest plays each game in its own.

Two exams, each certified in its own image (two small images made from the host's Python and pytest, each
with a marker and an environment report naming its exam's spec digest), pushed to the test registry: the
images are copied into the benchmark's repository and pinned in the tasks; attest proves containment in both
and every game record names the image of its own exam. A tampered copy of an image is refused before any game;
a ROM pinning one image while the tasks need two is refused before any attempt.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from acx_oci.crypto import unseal
from acx_oci.envimage import prune, spec_digest
from acx_oci.envimage.build import MEDIA_CONFIG
from acx_oci.model import commitment_key, task_commitment
from acx_oci.model import exam as mx
from acx_oci.model import exam_record as xr
from acx_oci.oci import MEDIA_MANIFEST, dump, open_store
from acx_oci.sandbox import staging_dir
from acx_oci.services.exams import suite_freeze_hashes
from acx_oci.services.verifier.environment import MAX_IMAGES, draw_environment_problems
from acx_oci.trust import load_identity
from tests.support.cli import cli, ok
from tests.support.hostpython import python_root_tar
from tests.support.jsondoc import check_document

ROOT = Path(__file__).resolve().parent.parent.parent
GOOD = ROOT / "testdata" / "exams-good"
AGENT = ROOT / "testdata" / "agents" / "simple_agent.py"
CAP = "implement-feature[python]@software-engineering"
TAR = "application/vnd.oci.image.layer.v1.tar"
SPECS = {"fx-0001": {"python": "3.11", "requirements": ["iniconfig==2.0.0"]},
         "fx-0002": {"python": "3.11", "requirements": ["pluggy==1.0.0"]}}
MARKER = "etc/acx-exam-image"
PROBE = ("import pathlib as _acx_p\n"
         "print('ACX-IMAGE', _acx_p.Path('/etc/acx-exam-image').read_text() "
         "if _acx_p.Path('/etc/acx-exam-image').exists() else 'host', flush=True)\n")

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


def _image(store_dir: Path, tag: str, base: bytes, exam: str) -> str:
    """An image of the host-Python layer and a layer with the exam's marker and environment report."""
    report = json.dumps({"specDigest": spec_digest(SPECS[exam]), "python": "3.11.2", "packages": []}).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name in ("etc", "opt", "opt/acx-venv"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tf.addfile(info)
        for name, data in ((MARKER, exam.encode()), ("opt/acx-venv/acx-env.json", report)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    layers = [base, buf.getvalue()]
    store = open_store(f"oci:{store_dir}")
    descs = [store.push_blob(t, TAR) for t in layers]
    diff_ids = ["sha256:" + hashlib.sha256(t).hexdigest() for t in layers]
    config = store.push_blob(dump({"architecture": "amd64", "os": "linux",
                                   "rootfs": {"type": "layers", "diff_ids": diff_ids}}), MEDIA_CONFIG)
    raw = dump({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": config.to_json(),
                "layers": [d.to_json() for d in descs]})
    return store.push_manifest(raw, MEDIA_MANIFEST, tag).digest


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("per-exam-env")
    cache = staging_dir("acx-test-imgcache-")  # 0755 under /tmp: the sandbox's uid must reach the unpacked roots
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACX_OCI_CACHE_DIR", str(cache))
        try:
            yield _world(tmp, registry, cache)
        finally:
            prune(cache, 0)
            shutil.rmtree(cache, ignore_errors=True)


def _world(tmp: Path, registry: str, cache: Path) -> dict[str, Any]:
    suite = tmp / "suite"
    shutil.copytree(GOOD, suite)
    shutil.rmtree(suite / "tasks" / "fx-0003")
    doc = json.loads((suite / "benchmark.json").read_text())
    doc["tasks"] = [t for t in doc["tasks"] if t["id"] != "fx-0003"]
    doc["heldOutFraction"] = 0.9  # both exams held out: the draw plays both
    (suite / "benchmark.json").write_text(json.dumps(doc))
    envs, base = tmp / "env-store", python_root_tar()
    digests = {}
    for exam, spec in SPECS.items():
        (suite / "tasks" / exam / "env.json").write_text(json.dumps(spec))
        digests[exam] = _image(envs, exam, base, exam)
    _records(suite, tmp / "certs", digests)
    for name in ("publisher", "verifier", "certifier"):
        ok(cli("keygen", str(tmp / name)))
    return {"tmp": tmp, "suite": suite, "registry": registry, "envs": envs, "digests": digests, "cache": cache,
            "verifier": load_identity(tmp / "verifier.key").did, "certifier": load_identity(tmp / "certifier.key").did}


def _records(suite: Path, out: Path, digests: dict[str, str]) -> None:
    """Sealed certified records naming each exam's image and spec, as ``exam certify --environments`` writes them
    (by the record builder itself: the real certification in an image, and push reading its record, is
    test_exam_env's slow test; certifying two exams here would take most of a minute)."""
    hashes = suite_freeze_hashes(suite)
    for exam, digest in digests.items():
        stages: dict[str, dict[str, Any]] = {s: {"ok": True} for s in mx.STAGES}
        stages["gold"].update(promotionEligible=True, isolated=True)
        stages["grader"].update(promotionEligible=True, isolated=True, controlsDistinguished=True, distinguished=True,
                                controls=dict(mx.EXPECTED))
        stages["attack"].update(promotionEligible=True, trivialExploits=[], passedForPromotion=True,
                                goldStillPassesAfterSuite=True)
        stages["eval"].update(promotionEligible=True)
        env = {"python": "3.11.2", "packages": [], "specDigest": spec_digest(SPECS[exam])}
        stages["freeze"].update(freezeHash=hashes[exam], imageDigest=digest, environment=env)
        stages["promotion"].update(imageDigest=digest)
        rec = xr.CertificationRecord.seal(exam, None, stages, impossible=False)
        assert xr.check_record(rec) == [], xr.check_record(rec)
        (out / "records").mkdir(parents=True, exist_ok=True)
        (out / "records" / f"{exam}.json").write_text(json.dumps(rec.to_json()))


def _cartridge(w: dict[str, Any], name: str, pin: str | None = None) -> str:
    d = w["tmp"] / name
    ok(cli("cartridge", "init", str(d), "--id", f"io.example/{name}", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py"))
    src = AGENT.read_text().replace("from __future__ import annotations\n",
                                    "from __future__ import annotations\n\n" + PROBE, 1)
    (d / "skills" / "agent.py").write_text(src)
    if pin:
        doc = yaml.safe_load((d / "cartridge.yaml").read_text())
        doc["runtime"]["environment"] = {"imageDigest": pin}
        (d / "cartridge.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    ref = f"{w['registry']}/per-exam/{name}:1.0.0"
    ok(cli("cartridge", "push", str(d), ref, "--key", str(w["tmp"] / "publisher.key")))
    return ref


def _push(w: dict[str, Any], target: str, *extra: str) -> dict[str, Any]:
    res = cli("benchmark", "push", str(w["suite"]), target, "--seal-to", str(w["tmp"] / "verifier.did.json"),
              "--env-store", f"oci:{w['envs']}", *extra, "--json")
    assert res.exit_code == 0, res.output
    return check_document("benchmark push", res.stdout, res.exit_code)


def _attest(w: dict[str, Any], cart: str, bench: str, run: str, code: int) -> dict[str, Any]:
    tmp = w["tmp"]
    res = cli("attest", cart, "--benchmark", bench, "--key", str(tmp / "verifier.key"), "--issuer", w["verifier"],
              "--state", str(tmp / f"state-{run}"), "-o", str(tmp / run), "--certifier", w["certifier"],
              "--games", "2", "--min-games", "1", "--sigma-max", "100", "--json")
    assert res.exit_code == code, res.output
    return {"stdout": res.stdout, "output": res.output}


def test_each_game_plays_in_its_own_exams_image(world: dict[str, Any]) -> None:
    w = world
    pushed = _push(w, f"{w['registry']}/per-exam/bench:1", "--certifications", str(w["tmp"] / "certs"),
                   "--certifier-key", str(w["tmp"] / "certifier.key"))
    images = pushed["environmentImages"]
    assert images == {e: f"{w['registry']}/per-exam/bench@{d}" for e, d in w["digests"].items()}, pushed
    assert pushed["unpinnedEnvironments"] == []
    with open_store(f"{w['registry']}/per-exam/bench") as store:  # the copies, kept by a tag per spec
        for exam, digest in w["digests"].items():
            assert store.resolve(f"env-{spec_digest(SPECS[exam])[7:23]}").digest == digest
    cart = _cartridge(w, "agent")
    run = json.loads(_attest(w, cart, f"{w['registry']}/per-exam/bench:1", "run", 1)["stdout"])
    assert run["look"] is True and run["reasons"][0].startswith("below_floor"), run  # 2 games: a look
    ckey = commitment_key(bytes.fromhex((w["suite"] / "seal.key").read_text().strip()))
    by_commitment = {task_commitment(ckey, e): d for e, d in w["digests"].items()}
    preds = [json.loads(base64.b64decode(json.loads(p.read_bytes())["payload"]))["predicate"]
             for p in sorted((w["tmp"] / "run" / "games").glob("*.dsse.json"))]
    assert len(preds) == 2
    for pred in preds:
        assert pred["containment"]["proven"], pred["containment"]
        assert pred["containment"]["imageDigest"] == by_commitment[pred["taskCommitment"]], pred
    ident = load_identity(w["tmp"] / "verifier.key")
    seen = set()
    for p in sorted((w["tmp"] / "run" / "transcripts").glob("*.sealed.json")):
        t = json.loads(unseal(json.loads(p.read_bytes()), ident, b"acx-oci/game-transcript/v1"))
        seen.add(t["agent"]["stdout"].split("ACX-IMAGE ", 1)[1].split()[0])
        assert t["grader"]["reportConsistent"], t["grader"]
    assert seen == set(SPECS), seen  # each agent saw its own exam's image


def test_a_rom_pinning_one_image_is_refused_when_the_tasks_need_two(world: dict[str, Any]) -> None:
    w = world
    _push(w, f"{w['registry']}/per-exam/bench:pin", "--certifications", str(w["tmp"] / "certs"),
          "--certifier-key", str(w["tmp"] / "certifier.key"))
    cart = _cartridge(w, "pinned", w["digests"]["fx-0001"])
    out = json.loads(_attest(w, cart, f"{w['registry']}/per-exam/bench:pin", "run-pin", 2)["stdout"])
    assert out["status"] == "refused", out
    assert any(f"requires image {w['digests']['fx-0001']}" in r and w["digests"]["fx-0002"] in r
               for r in out["reasons"]), out
    assert not (w["tmp"] / "run-pin" / "games").exists()


def test_a_tampered_image_copy_is_refused_before_any_game(world: dict[str, Any], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    w = world
    layout = tmp_path / "layout"
    pushed = _push(w, f"oci:{layout}:bench", "--certifications", str(w["tmp"] / "certs"),
                   "--certifier-key", str(w["tmp"] / "certifier.key"))
    digest = w["digests"]["fx-0002"]
    assert pushed["environmentImages"]["fx-0002"] == f"oci:{layout}@{digest}"
    blob = layout / "blobs" / "sha256" / digest[7:]
    raw = json.loads(blob.read_bytes())
    raw["annotations"] = {"tampered": "yes"}
    blob.write_bytes(json.dumps(raw).encode())
    cache = staging_dir("acx-test-imgcache-")  # nothing unpacked yet: the copy must be read
    monkeypatch.setenv("ACX_OCI_CACHE_DIR", str(cache))
    try:
        cart = _cartridge(w, "agent-t")
        res = _attest(w, cart, f"oci:{layout}:bench", "run-t", 1)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert f"manifest {digest}: digest mismatch" in res["output"], res["output"]
    assert not list((w["tmp"] / "run-t").glob("games/*.dsse.json"))


def test_an_exam_certified_without_its_image_is_named_and_pushed_as_before(world: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    w = world
    res = cli("benchmark", "push", str(w["suite"]), f"oci:{tmp_path / 'layout'}:bench", "--seal-to",
              str(w["tmp"] / "verifier.did.json"), "--certifications", str(tmp_path / "none"),
              "--allow-uncertified", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["environmentImages"] == {} and out["unpinnedEnvironments"] == ["fx-0001", "fx-0002"]
    assert "2 exam(s) carry env.json but their certification names no image built from it (fx-0001, fx-0002)" \
        in res.stderr


def test_draw_environment_problems() -> None:
    d = ["sha256:" + f"{i:064x}" for i in range(MAX_IMAGES + 1)]
    tasks = [{"id": f"t{i}", "environment": {"image": f"reg.example/r@{x}"}} for i, x in enumerate(d)]
    assert "at most 16" in draw_environment_problems(tasks, {}, None)[0]
    two = tasks[:2]
    assert draw_environment_problems(two, {}, None) == []
    assert "local games only" in draw_environment_problems(two, {}, None, executor=True)[0]
    assert draw_environment_problems(two[:1], {}, {"environment": {"imageDigest": d[0]}}) == []
    why = draw_environment_problems([*two[:1], {"id": "h"}], {}, {"environment": {"imageDigest": d[0]}})
    assert "the host (no image)" in why[0]
    assert "not pinned" in draw_environment_problems([{"id": "x", "environment": {"image": "reg.example/r:t"}}],
                                                     {}, None)[0]

