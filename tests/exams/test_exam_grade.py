"""``exam grade --predictions``: SWE-bench's predictions file graded on imported exams (issue 46, rule 5).

Every test here fails on 8c6af49, where ``exam grade`` did not exist (exit 2: no such command)."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from acx_oci.services.exams import predictions as pr

from ..support.cli import cli
from ..support.jsondoc import check_document
from .test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, LOOKALIKE_CALC, make_repo, patch

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
SWE_KEYS = ("submitted_ids", "completed_ids", "resolved_ids", "unresolved_ids", "error_ids", "empty_patch_ids")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One exam from a repository's fix (``calc``) and one from a SWE-bench instance (``acme__calc-1``)."""
    tmp = tmp_path_factory.mktemp("grade")
    shas = make_repo(tmp / "calc")
    out = tmp / "suite"
    res = cli("exam", "import", "--classification", "public",
              "--repo", tmp / "calc", "--base", shas["base"], "--fix", shas["fix"], "--id", "calc",
              "-o", out)
    assert res.exit_code == 0, res.output
    make_repo(tmp / "clones" / "acme__calc")
    inst = {"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": shas["base"],
            "patch": patch("calc.py", BASE_CALC, FIXED_CALC),
            "test_patch": patch("tests/test_calc.py", "", HIDDEN).replace("--- a/tests/test_calc.py", "--- /dev/null"),
            "FAIL_TO_PASS": ["tests/test_calc.py::test_sign_zero"], "PASS_TO_PASS": [],
            "problem_statement": "sign is wrong for zero.\n", "created_at": "2026-04-01T12:00:00Z"}
    (tmp / "instances.jsonl").write_text(json.dumps(inst) + "\n")
    res = cli("exam", "import", "--classification", "public",
              "--swebench", tmp / "instances.jsonl", "--repos", tmp / "clones", "-o", out)
    assert res.exit_code == 0, res.output
    return out


def _predictions(path: Path, preds: dict[str, str | None]) -> Path:
    path.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": p}) + "\n"
                            for i, p in preds.items()))
    return path


def _graded(suite: Path, path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    res = cli("exam", "grade", suite, "--predictions", path, "--no-environments", "--json", *extra)
    return res.exit_code, check_document("exam grade", res.stdout, res.exit_code)


GOLD = patch("calc.py", BASE_CALC, FIXED_CALC)
WRONG = patch("calc.py", BASE_CALC, LOOKALIKE_CALC)


@needs_bwrap
def test_gold_empty_and_wrong_patches_are_resolved_empty_and_unresolved(suite: Path, tmp_path: Path) -> None:
    """SWE-bench's keys, by exam id and by SWE-bench instance id; exit 0: every prediction was graded."""
    preds = _predictions(tmp_path / "p.jsonl", {"calc": GOLD, "acme__calc-1": WRONG})
    code, doc = _graded(suite, preds, "--jobs", "2")
    assert code == 0, doc
    assert all(k in doc for k in SWE_KEYS) and doc["schema_version"] == 2
    assert doc["resolved_ids"] == ["calc"] and doc["unresolved_ids"] == ["acme__calc-1"]
    assert doc["completed_ids"] == ["acme__calc-1", "calc"] and doc["void_ids"] == doc["error_ids"] == []
    wrong = doc["instances"]["acme__calc-1"]
    assert wrong["outcome"] == "unresolved" and wrong["failingTests"] == ["test_sign_zero"]
    assert wrong["exam"] == "acme__calc-1" and doc["instances"]["calc"]["failingTests"] == []
    empty = _predictions(tmp_path / "e.jsonl", {"calc": "", "acme__calc-1": None})
    code, doc = _graded(suite, empty)
    assert code == 0 and doc["empty_patch_ids"] == ["acme__calc-1", "calc"] and doc["completed_ids"] == []


@needs_bwrap
def test_a_patch_the_import_rules_refuse_is_an_error_never_graded(suite: Path, tmp_path: Path) -> None:
    """Links, binaries, names outside the tree and patches that do not apply: errors, exit 1, nothing written."""
    link = ("diff --git a/evil b/evil\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/evil\n"
            "@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n")
    binary = ("diff --git a/blob.bin b/blob.bin\nnew file mode 100644\nindex 0000000..2222222\n"
              "GIT binary patch\nliteral 3\nKcmZ>Y%KrcW|Nj9O\n\nliteral 0\nHcmV?d00001\n\n")
    outside = patch("../outside.py", "", "x = 1\n")
    stale = patch("calc.py", BASE_CALC.replace("a + b", "b + a"), FIXED_CALC)
    for name, bad, says in (("link", link, "symlink"), ("binary", binary, "binary"),
                            ("outside", outside, "refused"), ("stale", stale, "does not apply")):
        code, doc = _graded(suite, _predictions(tmp_path / f"{name}.jsonl", {"calc": bad}))
        assert code == 1 and doc["error_ids"] == ["calc"], (name, doc)
        assert doc["instances"]["calc"]["outcome"] == "error" and says in doc["instances"]["calc"]["reason"], name
    assert not (tmp_path / "outside.py").exists() and not (suite.parent / "outside.py").exists()


@pytest.mark.parametrize(("line", "says"), [
    ("not json", "not JSON"),
    ('["calc"]', "a JSON list"),
    ('{"instance_id": "calc", "model_patch": ""}', "model_name_or_path missing"),
    ('{"instance_id": 7, "model_name_or_path": "m", "model_patch": ""}', "instance_id not a string"),
])
def test_a_malformed_prediction_is_one_line_naming_it(suite: Path, tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"instance_id": "acme__calc-1", "model_name_or_path": "m", "model_patch": ""})
                    + "\n" + line + "\n")
    res = cli("exam", "grade", suite, "--predictions", path, "--no-environments")
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "p.jsonl:2: expected a JSON object" in lines[0] and says in lines[0], lines


def test_unknown_twice_predicted_and_oversized_predictions_are_refused_before_grading(suite: Path,
                                                                                      tmp_path: Path) -> None:
    cases = {"unknown": ([("no-such-exam", "x")], "is no exam of"),
             "twice": ([("calc", ""), ("calc", "")], "predicted twice (first on line 1)"),
             "big": ([("calc", "+" * (pr.MAX_PATCH_BYTES + 1))], "over 8388608 bytes")}
    for name, (rows, says) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": p}) + "\n"
                                for i, p in rows))
        res = cli("exam", "grade", suite, "--predictions", path, "--no-environments")
        assert res.exit_code == 2 and says in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output


#: Two submissions that leave calc.py as the base has it and forge the grade from inside the package under test
#: (issue 46's attack: the hidden tests import it into pytest's process): every test run made a no-op, and every
#: report rewritten to "passed".
NO_OP_RUNS = ("\n\nimport sys as _s\nif '_pytest.python' in _s.modules:\n    import _pytest.python as _p\n"
              "    _p.Function.runtest = lambda self: None\n")
PASSED_REPORTS = ("\n\nimport sys as _s\nif '_pytest.reports' in _s.modules:\n    import _pytest.reports as _r\n"
                  "    _init = _r.TestReport.__init__\n\n    def _forged(self, *a, **k):\n"
                  "        _init(self, *a, **k)\n        self.outcome, self.longrepr = 'passed', None\n\n"
                  "    _r.TestReport.__init__ = _forged\n")


@needs_bwrap
def test_gold_empty_wrong_and_two_tampering_patches(suite: Path, tmp_path: Path) -> None:
    """Issue 46's acceptance: resolved / empty / unresolved / void / void. On 8c6af49 there was no ``exam grade``;
    on the main before the in-process tamper checks both tampering patches were graded a pass (resolved)."""
    preds = tmp_path / "p.jsonl"
    rows = [("calc", GOLD), ("acme__calc-1", "")]
    rows += [(f"t{i}", p) for i, p in enumerate((WRONG, patch("calc.py", BASE_CALC, BASE_CALC + NO_OP_RUNS),
                                                 patch("calc.py", BASE_CALC, BASE_CALC + PASSED_REPORTS)))]
    # the same exam under three more names: a prediction names an exam, so the suite gets copies
    for i in range(3):
        shutil.copytree(suite / "tasks" / "calc", tmp_path / "s" / "tasks" / f"t{i}")
    shutil.copytree(suite / "tasks" / "calc", tmp_path / "s" / "tasks" / "calc")
    shutil.copytree(suite / "tasks" / "acme__calc-1", tmp_path / "s" / "tasks" / "acme__calc-1")
    shutil.copy(suite / "families.yaml", tmp_path / "s" / "families.yaml")
    for i in range(3):
        y = tmp_path / "s" / "tasks" / f"t{i}" / "exam.yaml"
        y.write_text(y.read_text().replace('"id": "calc"', f'"id": "t{i}"'))
    preds.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": p}) + "\n"
                             for i, p in rows))
    code, doc = _graded(tmp_path / "s", preds, "--jobs", "2")
    assert code == 0, doc
    assert {i: r["outcome"] for i, r in doc["instances"].items()} == {
        "calc": "resolved", "acme__calc-1": "empty", "t0": "unresolved", "t1": "void", "t2": "void"}
    assert doc["void_ids"] == ["t1", "t2"] and "t1" not in doc["resolved_ids"]
    for forged in ("t1", "t2"):
        res = doc["instances"][forged]
        assert res["reason"].startswith("grader_tampering:") and res["grading"]["mode"] == "in-process", res
        assert res["grading"]["tamperChecks"], res


#: A patch whose sign is right only inside an image carrying the marker: graded resolved only in the exam's image.
IN_IMAGE = FIXED_CALC.replace("def sign(x):\n", "def sign(x):\n    if not __import__('os').path.exists("
                              "'/etc/acx-exam-image'):\n        return 1\n")


def _image(store_dir: Path, tag: str, base: bytes, spec: dict[str, Any]) -> None:
    """An image of the host-Python layer and a layer with a marker and the environment report of ``spec``."""
    from acx_oci.envimage import spec_digest
    from acx_oci.envimage.build import MEDIA_CONFIG
    from acx_oci.oci import MEDIA_MANIFEST, dump, open_store

    report = json.dumps({"specDigest": spec_digest(spec), "python": "3.11.2", "packages": []}).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name in ("etc", "opt", "opt/acx-venv"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tf.addfile(info)
        for name, data in (("etc/acx-exam-image", b"calc"), ("opt/acx-venv/acx-env.json", report)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    layers = [base, buf.getvalue()]
    store = open_store(f"oci:{store_dir}")
    descs = [store.push_blob(t, "application/vnd.oci.image.layer.v1.tar") for t in layers]
    config = store.push_blob(dump({"architecture": "amd64", "os": "linux", "rootfs": {
        "type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(t).hexdigest() for t in layers]}}), MEDIA_CONFIG)
    store.push_manifest(dump({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": config.to_json(),
                              "layers": [d.to_json() for d in descs]}), MEDIA_MANIFEST, tag)


def test_each_exam_is_graded_in_its_image_from_the_env_store(suite: Path, tmp_path: Path) -> None:
    """The image ``exam certify`` keeps for the exam's env.json (by spec tag, here made from the host's Python with a
    marker) grades the prediction; ``--no-environments`` grades on the host, where the marker is absent."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    from acx_oci.envimage import prune
    from acx_oci.envimage.pyenv import spec_tag
    from acx_oci.sandbox import staging_dir

    from ..support.hostpython import python_root_tar

    spec = json.loads((suite / "tasks" / "calc" / "env.json").read_text())
    envs = tmp_path / "env-store"
    _image(envs, spec_tag(spec), python_root_tar(), spec)
    preds = _predictions(tmp_path / "p.jsonl", {"calc": patch("calc.py", BASE_CALC, IN_IMAGE)})
    cache = staging_dir("acx-test-imgcache-")  # 0755 under /tmp: the sandbox's uid must reach the unpacked root
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACX_OCI_CACHE_DIR", str(cache))
            res = cli("exam", "grade", suite, "--predictions", preds, "--env-store", f"oci:{envs}", "--json")
        doc = check_document("exam grade", res.stdout, res.exit_code)
        assert res.exit_code == 0 and doc["resolved_ids"] == ["calc"], doc
    finally:
        prune(cache, 0)
        shutil.rmtree(cache, ignore_errors=True)
    code, host = _graded(suite, preds)
    assert code == 0 and host["unresolved_ids"] == ["calc"], host


def test_an_exam_is_graded_on_the_ids_its_current_certification_derived(suite: Path) -> None:
    """exam grade grades what certification graded: the derived FAIL_TO_PASS and PASS_TO_PASS of a record of the
    exam as it is now (as benchmark push pins them); a stale record, or none, leaves every hidden test. Before
    this, the derived ids lived only in the record and every hidden test graded each prediction."""
    from acx_oci.services.exams.source import exam_freeze_hash, load_exam

    src = pr.index_exams(suite)["calc"]
    assert load_exam(src.dir).exam_id == "calc"
    tests = {"derived": True, "failToPass": ["tests/test_calc.py::test_sign_zero"], "passToPass": []}
    from acx_oci.model import CertificationRecord
    from acx_oci.model.exam import STAGES

    stages: dict[str, dict[str, Any]] = {s: {"ok": True} for s in STAGES}
    stages.update(freeze={"ok": True, "freezeHash": exam_freeze_hash(src)}, gold={"ok": True, "tests": tests})
    record = CertificationRecord.seal("calc", "1", stages, impossible=False)
    files, how = pr.graded_files(src, record)
    assert json.loads(files["acx-grader.json"])["tests"] == ["tests/test_calc.py::test_sign_zero"]
    assert how == "the ids its certification derived"
    stages["freeze"] = {"ok": True, "freezeHash": "sha256:" + "0" * 64}
    stale = CertificationRecord.seal("calc", "1", stages, impossible=False)
    assert pr.graded_files(src, stale) == (src.grader_files(), pr.graded_files(src, None)[1])
    assert "tests" not in json.loads(pr.graded_files(src, None)[0]["acx-grader.json"])
