"""``exam import``: exams from small git repositories with real history, certified through every stage."""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acx_oci.jsonio import first_error
from acx_oci.model import exam as mx
from acx_oci.model import exam_record as xr
from acx_oci.services.exams import importer
from acx_oci.services.exams.inprocess_probes import PROBES

from ..support.cli import cli
from ..support.jsondoc import check_document

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

BASE_CALC = '''def add(a, b):
    return a + b


def clamp(x, lo, hi):
    """Return x, limited to the range between lo and hi."""
    return x


def sign(x):
    return 1
'''
#: The fix edits clamp's docstring in place (as real fixes do: the line keeps its first 32 bytes) and both bodies.
FIXED_CALC = BASE_CALC.replace("    return x\n", "    return max(lo, min(hi, x))\n").replace(
    "to the range between lo and hi.", "to the closed range between lo and hi (both included).").replace(
    "def sign(x):\n    return 1\n", "def sign(x):\n    if x == 0:\n        return 0\n    return 1 if x > 0 else -1\n")
#: A near miss: clamp right, sign forgets zero (fails one test the incomplete fix fails too, but not the other).
LOOKALIKE_CALC = FIXED_CALC.replace("    if x == 0:\n        return 0\n", "")
HIDDEN = '''from __future__ import annotations

from calc import clamp, sign


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_sign_zero():
    assert sign(0) == 0


def test_sign_negative():
    assert sign(-3) == -1
'''
VISIBLE = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def git(repo: Path, *args: str, date: str = "2026-03-01T10:00:00Z") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example"}
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str, date: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")


def make_repo(path: Path) -> dict[str, str]:
    """base -> an unrelated commit -> the fix (two source hunks + its test) -> a later commit (HEAD)."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    base = commit(path, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE}, "initial", "2026-03-01T10:00:00Z")
    between = commit(path, {"readme.txt": "calc\n"}, "readme", "2026-03-02T10:00:00Z")
    fix = commit(path, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN},
                 "Fix clamp bounds and the sign of zero and negatives", "2026-03-05T10:00:00Z")
    head = commit(path, {"news.txt": "1.1\n"}, "news", "2026-03-09T10:00:00Z")
    return {"base": base, "between": between, "fix": fix, "head": head}


def patch(path: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}"))


def test_incomplete_is_the_fix_without_its_last_hunk() -> None:
    inc = importer.without_last_hunk({"calc.py": BASE_CALC}, {"calc.py": FIXED_CALC})
    assert inc is not None and "max(lo, min(hi, x))" in inc["calc.py"] and "return 1\n" in inc["calc.py"]
    assert inc["calc.py"] != FIXED_CALC
    one = BASE_CALC.replace("    return x\n", "    return max(lo, min(hi, x))\n")
    assert importer.without_last_hunk({"calc.py": BASE_CALC}, {"calc.py": one}) is None


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two exams from one repository in one suite: one with a lookalike, one without; certified together."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    tmp = tmp_path_factory.mktemp("import")
    shas = make_repo(tmp / "calc")
    look = tmp / "near-miss.patch"
    look.write_text(patch("calc.py", BASE_CALC, LOOKALIKE_CALC))
    suite = tmp / "suite"
    res = cli("exam", "import", "--classification", "public",
              "--repo", tmp / "calc", "--base", shas["base"], "--fix", shas["fix"],
              "--lookalike", look, "--id", "calc-look", "-o", suite, "--json")
    doc = check_document("exam import", res.stdout, res.exit_code)
    assert res.exit_code == 0, res.output
    res2 = cli("exam", "import", "--classification", "public",
               "--repo", tmp / "calc", "--base", shas["base"], "--fix", shas["fix"],
               "--id", "calc-nolook", "-o", suite)
    assert res2.exit_code == 0, res2.output
    cert = cli("exam", "certify", suite, "--out", tmp / "certs", "--jobs", "2", "--json",
               "--no-environments")  # the host's Python grades (no image built)
    records = {r["exam"]: r for r in json.loads(cert.stdout)["records"]}
    return {"tmp": tmp, "shas": shas, "suite": suite, "doc": doc, "cert": cert, "records": records,
            "text": res2.stdout}


@needs_bwrap
def test_an_exam_from_a_repository_with_a_lookalike_certifies(imported: dict[str, Any]) -> None:
    shas, rec = imported["shas"], imported["records"]["calc-look"]
    (summary,) = imported["doc"]["exams"]
    assert summary["parentCommit"] == shas["between"] != shas["base"]  # FIX^, not the base, not HEAD
    assert summary["hiddenTests"] == ["tests/test_calc.py"] and summary["sourceFiles"] == ["calc.py"]
    assert summary["publishedAt"] == "2026-03-05"
    # mutants are written beside a human's lookalike: one stands in for a derived incomplete the tests pass
    assert summary["controls"] == {"incomplete": True, "lookalike": True, "mutants": 8}
    assert rec["certified"] is True, xr.failures(rec)
    stated = {"publiclyListable": True, "customerOwned": False}  # --classification public, as the import said
    assert xr.classification_of(rec) == stated == rec["stages"]["seed"]["classification"]
    assert rec["stages"]["freeze"]["parentCommit"] == shas["between"] == git(imported["tmp"] / "calc", "rev-parse",
                                                                            f"{shas['fix']}^")
    assert rec["stages"]["eval"]["plays"]["gold"] == "certified-pass"
    # the hidden tests import calc into pytest's process: graded in-process, every in-process probe (issue 46)
    # graded a fail or found as tampering, and the reference still passes after them
    attack = rec["stages"]["attack"]
    assert set(attack["inProcessProbes"]) == set(PROBES) and attack["inProcessExploits"] == []
    assert set(attack["inProcessProbes"].values()) <= {"F", "void"} and attack["goldStillPassesAfterSuite"]
    assert rec["stages"]["gold"]["grading"]["mode"] == "in-process"
    # --no-environments: the host's Python graded, and the record says so (env.json's image was not used)
    assert rec["stages"]["freeze"]["environment"]["python"] == "host" and rec["stages"]["freeze"]["imageDigest"] is None
    assert list((imported["tmp"] / "certs" / "by-freeze").glob("*-host.json"))
    failing = rec["stages"]["grader"]["failing"]
    assert failing == {"incomplete": ["test_sign_negative", "test_sign_zero"], "lookalike": ["test_sign_zero"]}
    assert first_error(rec, mx.RECORD_SCHEMA_FILE) is None
    exam = imported["suite"] / "tasks" / "calc-look"
    assert not (exam / "workspace" / "tests" / "test_calc.py").exists()  # the hidden test is not model-facing
    assert (exam / "workspace" / "calc.py").read_text() == BASE_CALC
    assert (exam / "reference" / "calc.py").read_text() == FIXED_CALC
    hidden = (exam / "hidden" / "tests" / "test_calc.py").read_text()
    assert len(mx.find_canaries(hidden)) == 1 and "from __future__ import annotations\nimport os" in hidden
    assert json.loads((exam / "source.json").read_text())["fixCommit"] == shas["fix"]


@needs_bwrap
def test_without_a_lookalike_mutants_of_the_fix_are_the_controls(imported: dict[str, Any]) -> None:
    """No hand work: the fix's mutants are written at import, graded at certification, and the controls are
    taken among those the hidden tests kill; the record keeps the test strength (made, killed)."""
    rec = imported["records"]["calc-nolook"]
    assert "mutants: 8 of the fix's added lines" in imported["text"]
    assert len(list((imported["suite"] / "tasks" / "calc-nolook" / "controls").glob("mutant-*"))) == 8
    grader = rec["stages"]["grader"]
    assert rec["certified"] is True, xr.failures(rec)
    assert grader["controlsDerived"] is True and grader["mutantsMade"] == 8
    assert grader["mutantsKilled"] >= 4 and grader["testsKillMutants"] is True
    # the incomplete is the fix without its last hunk; the lookalike the first killed mutant failing other tests
    assert list(grader["chosen"]) == ["lookalike"] and grader["distinguishedBy"] == "failingTests"
    assert rec["stages"]["eval"]["plays"]["lookalike"] == "model-fail"
    assert first_error(rec, mx.RECORD_SCHEMA_FILE) is None


@needs_bwrap
def test_a_one_hunk_fix_certifies_on_its_mutants_and_weak_tests_are_refused(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    shas = make_repo(repo)
    one = BASE_CALC.replace("def sign(x):\n    return 1\n",
                            "def sign(x):\n    if x == 0:\n        return 0\n    return 1 if x > 0 else -1\n")
    git(repo, "checkout", "-q", "-b", "one", shas["base"])
    strong = commit(repo, {"calc.py": one, "tests/test_sign.py": "from calc import sign\n\n\ndef test_zero():\n"
                           "    assert sign(0) == 0\n\n\ndef test_neg():\n    assert sign(-3) == -1\n\n\n"
                           "def test_pos():\n    assert sign(4) == 1\n"}, "Fix sign", "2026-03-12T10:00:00Z")
    git(repo, "checkout", "-q", "-b", "weak", shas["base"])
    clamp = BASE_CALC.replace("    return x\n", "    return max(lo, min(hi, x))\n")
    weak = commit(repo, {"calc.py": clamp, "tests/test_clamp.py": "from calc import clamp\n\n\ndef test_low():\n"
                         "    assert clamp(-5, 0, 10) != -5\n"}, "Fix clamp", "2026-03-13T10:00:00Z")
    suite = tmp_path / "suite"
    for fix, eid in ((strong, "one-strong"), (weak, "one-weak")):
        res = cli("exam", "import", "--classification", "public",
                  "--repo", repo, "--base", f"{fix}^", "--fix", fix, "--id", eid, "-o", suite)
        assert res.exit_code == 0, res.output  # one hunk, no patch given: mutants stand in
    cert = cli("exam", "certify", suite, "--out", tmp_path / "certs", "--jobs", "2", "--json",
               "--no-environments")  # the host's Python grades (no image built)
    assert "records" in json.loads(cert.stdout), cert.stdout
    records = {r["exam"]: r for r in json.loads(cert.stdout)["records"]}
    good, bad = records["one-strong"], records["one-weak"]
    assert good["certified"] is True, xr.failures(good)
    assert set(good["stages"]["grader"]["chosen"]) == {"lookalike", "incomplete"}
    assert bad["certified"] is False and bad["stages"]["gold"]["ok"] is True
    assert bad["stages"]["grader"]["reason"].startswith("weak tests: they kill 0 of 1 mutants")


#: Upstream's test file also holds a test the fix does not make pass (SWE-bench leaves it out of both lists).
HIDDEN_UPSTREAM = HIDDEN + "\n\ndef test_not_this_fix():\n    assert sign(float('nan')) == 0\n"
#: A test of a name the fix adds: on the base its module cannot even be imported (a failing test, not a fault).
HIDDEN_NEW_NAME = "from calc import is_zero\n\n\ndef test_is_zero():\n    assert is_zero(0) and not is_zero(2)\n"
IS_ZERO = "\n\ndef is_zero(x):\n    return sign(x) == 0\n"


@needs_bwrap
def test_swebench_instances_import_and_certify(tmp_path: Path) -> None:
    """Graded: exactly FAIL_TO_PASS + PASS_TO_PASS of the hidden files; the repository's conftest.py and a helper
    module beside the tests come with the grader; a module importing the fix's new name fails on the base."""
    repos = tmp_path / "clones"
    shas = make_repo(repos / "acme__calc")
    clone = repos / "acme__calc"
    support = {"conftest.py": "import pytest\n\n\n@pytest.fixture\ndef zero():\n    return 0\n",
               "tests/helpers.py": "NEGATIVE = -3\n"}
    git(clone, "checkout", "-q", "-b", "support", shas["base"])
    base = commit(clone, support, "test support", "2026-03-03T10:00:00Z")
    other = repos / "acme__calc2"
    shutil.copytree(clone, other)
    hidden = HIDDEN_UPSTREAM.replace("def test_sign_zero():\n    assert sign(0) == 0",
                                     "def test_sign_zero(zero):\n    assert sign(zero) == 0").replace(
        "assert sign(-3) == -1", "assert sign(NEGATIVE) == -1").replace(
        "from calc import clamp, sign\n", "from calc import clamp, sign\nfrom helpers import NEGATIVE\n")
    f2p = [f"tests/test_calc.py::test_{n}" for n in ("sign_zero", "clamp_low", "sign_negative")]
    instances = []
    for iid, repo in (("acme__calc-1", "acme/calc"), ("acme__calc2-7", "acme/calc2")):
        instances.append({
            "instance_id": iid, "repo": repo, "base_commit": base,
            "patch": patch("calc.py", BASE_CALC, FIXED_CALC + IS_ZERO),
            "test_patch": patch("tests/test_calc.py", "", hidden).replace("--- a/tests/test_calc.py", "--- /dev/null")
            + patch("tests/test_zero.py", "", HIDDEN_NEW_NAME).replace("--- a/tests/test_zero.py", "--- /dev/null"),
            "FAIL_TO_PASS": json.dumps([*f2p, "tests/test_zero.py::test_is_zero"]),
            "PASS_TO_PASS": ["tests/test_calc.py::test_clamp_high", "tests/test_visible.py::test_add"],
            "problem_statement": "clamp ignores its bounds and sign is wrong for zero and negatives.\n",
            "created_at": "2026-04-01T12:00:00Z", "version": "1.2", "environment_setup_commit": shas["base"],
            "lookalike_patch": patch("calc.py", BASE_CALC, LOOKALIKE_CALC + IS_ZERO)})
    jsonl = tmp_path / "instances.jsonl"
    jsonl.write_text("".join(json.dumps(i) + "\n" for i in instances))
    res = cli("exam", "import", "--classification", "public",
              "--swebench", jsonl, "--repos", repos, "-o", tmp_path / "suite", "--json")
    doc = check_document("exam import", res.stdout, res.exit_code)
    assert res.exit_code == 0, res.output
    assert [e["exam"] for e in doc["exams"]] == ["acme__calc-1", "acme__calc2-7"]
    assert all(e["parentCommit"] == base and e["publishedAt"] == "2026-04-01" for e in doc["exams"])
    cert = cli("exam", "certify", tmp_path / "suite", "--out", tmp_path / "certs", "--jobs", "2", "--json",
               "--no-environments")  # the host's Python grades (no image built)
    assert cert.exit_code == 0, cert.stderr
    records = json.loads(cert.stdout)["records"]
    assert len(records) == 2 and all(r["certified"] and r["stages"]["eval"]["ok"] for r in records)
    assert records[0]["stages"]["eval"]["plays"]["untouched"] == "model-fail"  # not a lane error
    assert records[0]["stages"]["gold"]["failToPassPassingOnBase"] == []
    task = tmp_path / "suite" / "tasks" / "acme__calc-1"
    src = json.loads((task / "source.json").read_text())
    assert src["failToPass"][0] == "tests/test_calc.py::test_sign_zero" and src["kind"] == "swebench"
    assert src["version"] == "1.2" and src["environment_setup_commit"] == shas["base"]
    assert src["graderSupport"] == ["conftest.py", "tests/helpers.py"] and src["passToPassNotGraded"] == 1
    conf = json.loads((task / "hidden" / "acx-grader.json").read_text())
    assert conf == {"packages": ["calc"], "conftest": True, "tests": sorted(
        [*f2p, "tests/test_calc.py::test_clamp_high", "tests/test_zero.py::test_is_zero"])}
    assert (task / "workspace" / "conftest.py").read_text() == support["conftest.py"]  # the agent keeps its copy


def test_a_helper_package_under_the_test_directory_joins_the_grader() -> None:
    """requests' tests import ``tests.testserver.server``: without it every hidden test of test_requests.py
    failed to import on the reference (issue 37's walk)."""
    from acx_oci.services.exams.importer import support_paths

    names = ["tests/__init__.py", "tests/conftest.py", "tests/test_requests.py", "tests/utils.py",
             "tests/testserver/__init__.py", "tests/testserver/server.py", "tests/testserver/deep/__init__.py",
             "tests/testserver/deep/x.py", "tests/data/gen.py", "tests/testserver/test_server.py", "src/pkg/a.py",
             "tests/static/app.css", "tests/templates/page.html", "docs/conf.py"]
    # issue 45: test applications and data beside the tests (static/, templates/, a folder that is no package)
    # go too; test modules of other files do not, nor anything outside the tests' folders
    assert support_paths(names, ["tests/test_requests.py"]) == [
        "tests/__init__.py", "tests/conftest.py", "tests/data/gen.py", "tests/static/app.css",
        "tests/templates/page.html", "tests/testserver/__init__.py", "tests/testserver/deep/__init__.py",
        "tests/testserver/deep/x.py", "tests/testserver/server.py", "tests/utils.py"]


def _refused(*args: Any) -> str:
    res = cli("exam", "import", "--classification", "public", *args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output
    return lines[0]


def test_untrusted_repositories_are_refused_in_one_line(tmp_path: Path) -> None:
    shas = make_repo(tmp_path / "r")
    out = tmp_path / "suite"
    common = ("--repo", tmp_path / "r", "--base", shas["base"], "-o", out)
    os.symlink("/etc/passwd", tmp_path / "r" / "passwd")
    link_fix = commit(tmp_path / "r", {"calc.py": FIXED_CALC + "\n", "tests/test_x.py": HIDDEN}, "link",
                      "2026-03-10T10:00:00Z")
    assert "symlink" in _refused(*common[:2], "--base", link_fix, "--fix", link_fix, "-o", out)
    (tmp_path / "r" / "passwd").unlink()
    (tmp_path / "r" / "big.txt").write_text("x" * (1024 * 1024 + 1))
    big = commit(tmp_path / "r", {"tests/test_y.py": HIDDEN, "calc.py": FIXED_CALC}, "big", "2026-03-11T10:00:00Z")
    assert "over 1048576" in _refused(*common[:2], "--base", big, "--fix", big, "-o", out)
    r2 = tmp_path / "r2"
    make_repo(r2)
    git(r2, "checkout", "-q", "-b", "one", shas["base"])
    one_line = "import math\n" + BASE_CALC  # one hunk, and no line a mutant can change
    fix2 = commit(r2, {"calc.py": one_line, "tests/test_one.py": HIDDEN}, "one line", "2026-03-13T10:00:00Z")
    assert "--incomplete PATCH" in _refused("--repo", r2, "--base", shas["base"], "--fix", fix2, "-o", out)
    escape = tmp_path / "escape.patch"
    escape.write_text(patch("../outside.py", "", "x = 1\n"))
    assert "--lookalike" in _refused(*common, "--fix", shas["fix"], "--lookalike", escape)
    assert "names no commit" in _refused(*common, "--fix", "no-such-commit")
    assert "--swebench" in _refused("--repo", tmp_path / "r", "-o", out)
    assert not out.exists()  # nothing was written by any refusal
    assert not (tmp_path / "outside.py").exists()


def test_tests_option_chooses_the_hidden_tests(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    shas = make_repo(repo)
    git(repo, "checkout", "-q", "-b", "more", shas["base"])
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN, "tests/test_noise.py": VISIBLE,
                        "checks/verify_calc.py": HIDDEN}, "more tests", "2026-03-20T10:00:00Z")
    out = tmp_path / "suite"
    assert "not a file of the fix" in _refused("--repo", repo, "--base", shas["base"], "--fix", fix,
                                               "--tests", "checks/nope.py", "-o", out)
    assert "test_*.py" in _refused("--repo", repo, "--base", shas["base"], "--fix", fix,
                                   "--tests", "checks/verify_calc.py", "-o", out)
    assert not out.exists()
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", fix, "--tests",
              "tests/test_calc.py", "-o", out, "--json")
    doc = check_document("exam import", res.stdout, res.exit_code)
    (e,) = doc["exams"]
    assert e["hiddenTests"] == ["tests/test_calc.py"] and e["parentCommit"] == shas["base"]
    assert e["sourceFiles"] == ["calc.py", "checks/verify_calc.py"]  # test_noise.py is in neither
    contract = json.loads((Path(e["dir"]) / "exam.yaml").read_text())
    assert contract["grader"] == "hidden/tests/test_calc.py" and contract["publishedAt"] == "2026-03-20"
    assert json.loads((Path(e["dir"]) / "hidden" / "acx-grader.json").read_text()) == {
        "packages": ["calc", "checks"], "conftest": False}
    ids = "tests/test_calc.py::test_sign_zero,tests/test_calc.py::test_clamp_low"
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", fix, "--tests", ids, "--id", "ids",
              "-o", out, "--json")
    (e,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    assert e["hiddenTests"] == ["tests/test_calc.py"]  # the file of the ids; exactly those ids are graded
    assert json.loads((Path(e["dir"]) / "hidden" / "acx-grader.json").read_text())["tests"] == sorted(ids.split(","))
    # a comma inside a parametrized case's brackets is no separator (humanize: "test_natural_list[args0-one, two]")
    case = "tests/test_calc.py::test_clamp_low[<V '[1.0, 2.0)'>-one, two]"  # packaging 55cbf1b's cases too
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", shas["base"], "--fix", fix, "--tests",
              f"{case},tests/test_calc.py::test_sign_zero", "--id", "case", "-o", out, "--json")
    (e,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    assert json.loads((Path(e["dir"]) / "hidden" / "acx-grader.json").read_text())["tests"] == [
        case, "tests/test_calc.py::test_sign_zero"]


SHARED = "from calc import sign\n\n\ndef make(x):\n    return sign(x)\n\n\ndef test_shared():\n    assert 0\n"
USES_SHARED = "from . import test_shared\n\n\ndef test_sign_zero():\n    assert test_shared.make(0) == 0\n"


def _import_two_commits(tmp_path: Path, base_files: dict[str, str], fix_files: dict[str, str]) -> Path:
    """A repository of two commits (base, then a fix of ``calc.py`` and its tests), imported with the docs'
    command: the exam's folder."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    base = commit(repo, {"calc.py": BASE_CALC, **base_files}, "initial", "2026-03-01T10:00:00Z")
    fix = commit(repo, {"calc.py": FIXED_CALC, **fix_files}, "Fix sign of zero", "2026-03-05T10:00:00Z")
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", base, "--fix", fix, "-o", tmp_path / "suite", "--json")
    (e,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    return Path(e["dir"])


def test_an_exam_from_a_fetched_mirror_is_named_for_its_repository(tmp_path: Path) -> None:
    """A mirror kept as ``owner+name/repo`` (as fetched) gave every exam the id ``repo-<commit>``: a suite mixing
    repositories could not tell them apart (a new user's finding). The id is the repository's name."""
    repo = tmp_path / "acme+calc" / "repo"
    shas = make_repo(repo)
    res = cli("exam", "import", "--classification", "public", "--repo", repo, "--base", shas["base"],
              "--fix", shas["fix"], "-o", tmp_path / "suite", "--json")
    (e,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    assert e["exam"] == f"calc-{shas['fix'][:12]}"


def _base_and_fixed_outcomes(tmp_path: Path, exam: Path) -> list[dict[str, str]]:
    """Each test's outcome on the exam's base workspace and on it with the reference's calc.py."""
    from acx_oci.sandbox import grade
    fixed = tmp_path / "fixed"
    shutil.copytree(exam / "workspace", fixed)
    shutil.copy(exam / "reference" / "calc.py", fixed / "calc.py")
    return [{t.nodeid: t.outcome for t in grade(sub, exam / "hidden", time_seconds=60).tests}
            for sub in (exam / "workspace", fixed)]


def test_a_test_module_the_hidden_tests_import_goes_to_the_grader_uncollected(tmp_path: Path) -> None:
    # tenacity 213446e: tests/test_after.py says "from . import test_tenacity" (a shared helper in a test module)
    exam = _import_two_commits(tmp_path, {"tests/__init__.py": "", "tests/test_shared.py": SHARED},
                               {"tests/test_calc.py": USES_SHARED})
    conf = json.loads((exam / "hidden" / "acx-grader.json").read_text())
    assert conf["notCollected"] == ["tests/test_shared.py"] and (exam / "hidden/tests/test_shared.py").exists()
    # the helper module imports (no collection error) and its own failing test is never graded
    assert _base_and_fixed_outcomes(tmp_path, exam) == [{"tests.tests.test_calc::test_sign_zero": "failed"},
                                                        {"tests.tests.test_calc::test_sign_zero": "passed"}]


@needs_bwrap
def test_a_helper_module_a_parent_folder_holds_goes_to_the_grader(tmp_path: Path) -> None:
    """structlog ba1a17857a (a repository nobody here had used): ``tests/processors/test_processors.py`` says
    ``from ..additional_frame import additional_frame``, a helper (not a test module) one folder up. It was left
    out of the grader, every hidden test failed to import on the base and the fix alike, and the exam was
    refused as "the reference fails 1 of its 1 graded tests"."""
    helper = "from calc import sign\n\n\ndef frame(x):\n    return sign(x)\n"
    test = "from ..frames import frame\n\n\ndef test_sign_zero():\n    assert frame(0) == 0\n"
    exam = _import_two_commits(tmp_path, {"tests/__init__.py": "", "tests/frames.py": helper,
                                          "tests/sub/__init__.py": ""}, {"tests/sub/test_calc.py": test})
    assert (exam / "hidden" / "tests" / "frames.py").exists() and (exam / "hidden" / "tests" / "__init__.py").exists()
    assert _base_and_fixed_outcomes(tmp_path, exam) == [{"tests.tests.sub.test_calc::test_sign_zero": "failed"},
                                                        {"tests.tests.sub.test_calc::test_sign_zero": "passed"}]


@needs_bwrap
def test_a_conftest_the_fix_changes_is_hidden_and_still_loaded(tmp_path: Path) -> None:
    """filelock bb16d39: the fix adds a fixture to ``tests/conftest.py`` that its new tests use. The changed
    conftest goes with the hidden tests, but ``conftest`` was set from the support files alone (false), so the
    grader never loaded it and every test using the fixture failed on both trees (``fixture ... not found``)."""
    uses = "from calc import sign\n\n\ndef test_sign_zero(zero):\n    assert sign(zero) == 0\n"
    zero = "import pytest\n\n\n@pytest.fixture\ndef zero():\n    return 0\n"
    exam = _import_two_commits(tmp_path, {"tests/conftest.py": "import pytest\n"},
                               {"tests/test_calc.py": uses, "tests/conftest.py": zero})
    assert (exam / "hidden" / "tests" / "conftest.py").read_text().endswith("return 0\n")
    assert json.loads((exam / "hidden" / "acx-grader.json").read_text())["conftest"] is True
    assert _base_and_fixed_outcomes(tmp_path, exam) == [{"tests.tests.test_calc::test_sign_zero": "failed"},
                                                        {"tests.tests.test_calc::test_sign_zero": "passed"}]


def test_binary_files_of_the_base_are_left_out_and_named(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    shas = make_repo(repo)
    git(repo, "checkout", "-q", "-b", "bin", shas["base"])
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    base = commit(repo, {}, "logo", "2026-03-21T10:00:00Z")
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "fix", "2026-03-22T10:00:00Z")
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", base, "--fix", fix, "-o", tmp_path / "suite", "--json")
    (e,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    assert any("not UTF-8 text" in n and "logo.png" in n for n in e["notes"])
    assert not (Path(e["dir"]) / "workspace" / "logo.png").exists()
    assert json.loads((Path(e["dir"]) / "source.json").read_text())["binaryLeftOut"] == ["logo.png"]


@needs_bwrap
def test_a_fix_edited_in_place_is_no_leak_but_its_new_body_in_the_workspace_is(imported: dict[str, Any],
                                                                                tmp_path: Path) -> None:
    from acx_oci.services.exams.exposure import reference_new as _reference_new
    from acx_oci.services.exams.source import load_exam

    rec = imported["records"]["calc-look"]
    assert rec["stages"]["gold"]["referenceNotLeaked"] is True and rec["stages"]["publication"]["findings"] == []
    exam = tmp_path / "suite" / "tasks" / "calc-look"
    shutil.copytree(imported["suite"] / "tasks" / "calc-look", exam)
    (tmp_path / "suite" / "families.yaml").write_text("families: {imported: active}\n")
    src = load_exam(exam)
    # A fix that repeats what the base already says elsewhere (upstream's own text) leaks nothing ...
    copied = {"calc.py": FIXED_CALC + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"}
    assert _reference_new(dataclasses.replace(src, reference=copied)) == _reference_new(src)
    assert mx.leaks(_reference_new(src), src.model_facing()) == []
    body = "def sign_fixed(x):\n    if x == 0:\n        return 0\n    return 1 if x > 0 else -1\n"
    (exam / "workspace" / "notes").mkdir()
    (exam / "workspace" / "notes" / "draft.py").write_text(body)
    src = load_exam(exam)
    (found,) = mx.leaks(_reference_new(src), src.model_facing())
    assert found["file"] == "workspace/notes/draft.py" and found["rule"] == "reference-new-content"
    # ... but once the workspace is no longer upstream's base tree, every file of it is scanned strictly.
    assert mx.leaks(_reference_new(dataclasses.replace(src, reference=copied)), src.model_facing())


@needs_bwrap
def test_the_fix_commit_message_as_prompt_is_upstream_context_a_human_prompt_is_scanned(
        imported: dict[str, Any]) -> None:
    """A real fix's commit message (the default prompt) often says what the fix's new comment says
    ("Fix splitting of BEGIN TRANSACTION statements"): upstream's own words, like a SWE-bench issue, not a
    leak. A prompt someone wrote (``--prompt``) is still scanned strictly."""
    from acx_oci.services.exams.exposure import reference_new as _reference_new
    from acx_oci.services.exams.source import load_exam

    src = load_exam(imported["suite"] / "tasks" / "calc-look")
    assert src.source is not None and src.source["promptFrom"] == "fixCommitMessage"
    said = src.prompt + "\nif x == 0: return 0 return 1 if x > 0 else -1\n"
    upstream = dataclasses.replace(src, prompt=said)
    assert mx.leaks(_reference_new(upstream), {"prompt.md": said}) == []
    human = dataclasses.replace(src, prompt=said, source={k: v for k, v in src.source.items() if k != "promptFrom"})
    (found,) = mx.leaks(_reference_new(human), {"prompt.md": said})
    assert found["file"] == "prompt.md"


@needs_bwrap
def test_a_grader_that_says_the_fix_docstring_example_publishes_no_solution(imported: dict[str, Any]) -> None:
    """boltons 967864f added ``mode()`` with the doctest ``mode(['a', 'b', 'b', 'c', 'c', 'c'])``, and its test
    asks the same: prose, not a solution, and the publication scan of the grader passed it (issue 37). The
    fix's new code in a grader file is still found."""
    from acx_oci.services.exams.exposure import reference_new as _reference_new
    from acx_oci.services.exams.source import load_exam
    from acx_oci.services.exams.stages import _publication

    src = load_exam(imported["suite"] / "tasks" / "calc-look")
    example = "    >>> sign_of_many(['a', 'b', 'b', 'c', 'c', 'c'], strict=True)\n    'c'\n"
    ref = {"calc.py": FIXED_CALC.replace('both included)."""', f'both included).\n\n{example}    """')}
    test = "def test_many():\n    assert sign_of_many(['a', 'b', 'b', 'c', 'c', 'c'], strict=True) == 'c'\n"
    grader = {**src.hidden, "tests/test_many.py": test}
    told = dataclasses.replace(src, reference=ref, hidden=grader)
    assert _publication(told, (), _reference_new(told))["findings"] == []
    body = "def test_body():\n    if x == 0:\n        return 0\n    return 1 if x > 0 else -1\n"
    leaky = dataclasses.replace(told, hidden={**grader, "tests/test_body.py": body})
    (found,) = _publication(leaky, (), _reference_new(leaky))["findings"]
    assert found["file"] == "grader/tests/test_body.py" and found["rule"] == "reference-new-content"


@needs_bwrap
def test_a_secret_looking_line_of_upstreams_own_tree_is_named_not_refused(imported: dict[str, Any]) -> None:
    """pyparsing's public example says ``PASSWORD = "swordfish"``: while the workspace is upstream's tree as
    imported, a pattern finding there is named (``upstreamFindings``), not a refusal; once the workspace is
    edited, or for a canary marker, it is a finding as before (issue 37)."""
    from acx_oci.services.exams.exposure import reference_new as _reference_new
    from acx_oci.services.exams.source import load_exam
    from acx_oci.services.exams.stages import _publication

    src = load_exam(imported["suite"] / "tasks" / "calc-look")
    example = {**src.workspace, "examples/scan.py": '#define PASSWORD = "swordfish"\n'}
    assert src.source is not None and src.source["baseTreeDigest"] == src.tree_hash()
    upstream = dataclasses.replace(src, workspace=example)  # (the tree digest is the exam folder's, unchanged)
    edited = dataclasses.replace(upstream, source={**src.source, "baseTreeDigest": "sha256:" + "0" * 64})
    facts = _publication(upstream, mx.DEFAULT_PATTERNS, _reference_new(upstream))
    assert facts["ok"] and [f["rule"] for f in facts["upstreamFindings"]] == ["secret-assignment"]
    facts = _publication(edited, mx.DEFAULT_PATTERNS, _reference_new(edited))
    assert not facts["ok"] and [f["file"] for f in facts["findings"]] == ["workspace/examples/scan.py"]


@needs_bwrap
def test_an_exam_with_derived_controls_is_frozen_as_its_files_say(imported: dict[str, Any]) -> None:
    """The freeze hash was taken after the derived controls were chosen, so it never matched the suite's own:
    the record was never served from the cache (every run certified the corpus again) and read as stale
    (issue 37)."""
    from acx_oci.services import exams as ex

    rec = imported["records"]["calc-nolook"]
    assert rec["stages"]["grader"]["controlsDerived"] is True
    assert rec["stages"]["freeze"]["freezeHash"] == ex.suite_freeze_hashes(imported["suite"])["calc-nolook"]


def test_a_parametrized_test_is_named_by_its_function_when_every_case_passes() -> None:
    """The derivation (moved from benchmarks/real_exams.py into the product, issue 45): case ids made from the
    clock (marshmallow 78393d8's ``[16:53:22 2026-12-03]``) differ between the base's run and the fix's, and
    were graded as ids no later run collects."""
    from acx_oci.services.exams.derivation import split_ids
    before = {"t.py::f[16:53:20 x]": "passed", "t.py::f[a, b]": "passed", "t.py::g": "failed", "t.py::h[1]": "failed",
              "t.py::h[2]": "passed", "t.py::k[1]": "passed", "t.py::k[2]": "passed"}
    after = {"t.py::f[16:53:22 x]": "passed", "t.py::f[a, b]": "passed", "t.py::g": "passed", "t.py::h[1]": "passed",
             "t.py::h[2]": "passed", "t.py::new[x]": "passed", "t.py::k[1]": "passed", "t.py::k[2]": "failed"}
    assert split_ids(before, after) == (["t.py::g", "t.py::h", "t.py::new"], ["t.py::f", "t.py::k[1]"])
