"""``exam candidates`` and ``exam harvest`` (issue 43; the selection in the product, issue 45): which commits a
history offers, each left-out commit counted by its reason, and a harvest's funnel, resumption and push."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acx_oci.services.exams import candidates as cand
from acx_oci.services.exams import harvest as hv

from ..support.cli import cli
from ..support.jsondoc import check_document
from .test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, VISIBLE, commit, git

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

STRONG = BASE_CALC.replace("def sign(x):\n    return 1\n",
                           "def sign(x):\n    if x == 0:\n        return 0\n    return 1 if x > 0 else -1\n")
STRONG_TESTS = ("from calc import sign\n\n\ndef test_zero():\n    assert sign(0) == 0\n\n\n"
                "def test_neg():\n    assert sign(-3) == -1\n\n\ndef test_pos():\n    assert sign(4) == 1\n")
WEAK = STRONG.replace("    return x\n", "    return max(lo, min(hi, x))\n")
WEAK_TESTS = "from calc import clamp\n\n\ndef test_low():\n    assert clamp(-5, 0, 10) != -5\n"


def history(path: Path) -> dict[str, str]:
    """A history with one commit of each kind the filter tells apart (newest last)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    shas = {"base": commit(path, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE}, "initial",
                           "2026-01-01T10:00:00Z")}
    shas["docs"] = commit(path, {"README.md": "calc\n"}, "docs", "2026-01-02T10:00:00Z")
    shas["old_fix"] = commit(path, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "Fix clamp and sign",
                             "2026-01-05T10:00:00Z")
    shas["tests_only"] = commit(path, {"tests/test_more.py": "def test_more():\n    assert 1\n"}, "more tests",
                                "2026-02-01T10:00:00Z")
    shas["wide"] = commit(path, {**{f"pkg/m{i}.py": f"X = {i}\n" for i in range(16)},
                                 "tests/test_wide.py": "def test_wide():\n    assert 2\n"}, "wide change",
                          "2026-02-02T10:00:00Z")
    shas["no_new_test"] = commit(path, {"calc.py": FIXED_CALC + "\n# note\n",
                                        "tests/test_calc.py": HIDDEN + "\n# a comment\n"}, "Fix a comment",
                                 "2026-02-03T10:00:00Z")
    git(path, "checkout", "-q", "-b", "side")
    side = commit(path, {"calc.py": STRONG.replace("def add", "def add2(a, b):\n    return a\n\n\ndef add"),
                         "tests/test_sign.py": STRONG_TESTS}, "sign on a branch", "2026-02-04T10:00:00Z")
    git(path, "checkout", "-q", "main")
    git(path, "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", side, date="2026-02-05T10:00:00Z")
    shas["plain_merge"] = git(path, "rev-parse", "HEAD")
    return shas


def test_candidates_follow_the_filter_and_count_what_they_leave_out(tmp_path: Path) -> None:
    shas = history(tmp_path / "r")
    found = cand.scan(tmp_path / "r", limit=20)
    assert [c.commit for c in found.candidates] == [shas["old_fix"]]
    c = found.candidates[0]
    assert (c.parent, c.date, c.tests, c.sources, c.needs) == (shas["docs"], "2026-01-05", ("tests/test_calc.py",),
                                                                ("calc.py",), ())
    assert found.left_out == {cand.MERGE: 1, cand.NO_NEW_TEST: 1, cand.TOO_MANY_FILES: 1, cand.NO_SOURCE: 1,
                              cand.NO_TESTS: 1}
    assert found.scanned == 6  # the root commit is no fix of anything
    # the window: --since after the fix leaves nothing; --until before it too
    after = cand.parse_date("2026-01-06", "--since")
    assert cand.scan(tmp_path / "r", since=after).candidates == []
    assert cand.scan(tmp_path / "r", until=cand.parse_date("2026-01-05T09:00:00Z", "--until")).candidates == []
    assert cand.scan(tmp_path / "r", fixes_only=True).candidates[0].commit == shas["old_fix"]
    assert cand.scan(tmp_path / "r", max_source_lines=2).candidates == []


def test_a_fix_that_deletes_a_file_outside_its_tests_is_left_out_not_offered(tmp_path: Path) -> None:
    """glom d285e73 moved ``requirements-rtd.txt`` into ``docs/``: ``exam candidates`` offered it and ``exam
    import`` refused it (an exam overlay cannot delete a file), so a harvest lost it at import (a new user's
    finding). It is left out by that reason; a test file the fix deletes is still fine."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE, "docs-reqs.txt": "sphinx\n"}, "initial",
           "2026-01-01T10:00:00Z")
    (repo / "docs-reqs.txt").rename(repo / "reqs-docs.txt")
    moved = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN}, "Fix clamp", "2026-01-05T10:00:00Z")
    (repo / "tests" / "test_visible.py").unlink()
    kept = commit(repo, {"calc.py": FIXED_CALC + "\n\ndef two():\n    return 2\n",
                         "tests/test_two.py": "from calc import two\n\n\ndef test_two():\n    assert two() == 2\n"},
                  "Fix two", "2026-01-06T10:00:00Z")
    found = cand.scan(repo)
    assert [c.commit for c in found.candidates] == [kept] and found.left_out == {cand.DELETES: 1}
    assert moved not in [c.commit for c in found.candidates]


def test_a_pull_request_merge_is_a_candidate_read_against_its_first_parent(tmp_path: Path) -> None:
    shas = history(tmp_path / "r")
    git(tmp_path / "r", "commit", "-q", "--amend", "-m", "Merge pull request #12 from someone/side",
        date="2026-02-05T10:00:00Z")
    found = cand.scan(tmp_path / "r", limit=1)
    (c,) = found.candidates
    assert c.merge and c.parent == shas["no_new_test"] and c.tests == ("tests/test_sign.py",)
    assert found.left_out == {}


def test_the_cli_lists_candidates_and_refuses_a_bad_date_in_one_line(tmp_path: Path) -> None:
    shas = history(tmp_path / "r")
    res = cli("exam", "candidates", "--repo", tmp_path / "r", "--json")
    assert res.exit_code == 0, res.output
    doc = check_document("exam candidates", res.stdout, res.exit_code)  # its shipped schema
    assert [c["commit"] for c in doc["candidates"]] == [shas["old_fix"]] and doc["scanned"] == 6
    assert doc["leftOut"][cand.TOO_MANY_FILES] == 1
    text = cli("exam", "candidates", "--repo", tmp_path / "r")
    assert text.exit_code == 0 and "1 candidate(s) of 6 commit(s) read; left out:" in text.output
    bad = cli("exam", "candidates", "--repo", tmp_path / "r", "--since", "last tuesday")
    assert bad.exit_code == 2 and "expected a date (YYYY-MM-DD)" in bad.output and "Traceback" not in bad.output
    odd = cli("exam", "candidates", "--repo", tmp_path / "r", "--since", "2026-02-01", "--until", "2026-01-01")
    assert odd.exit_code == 2 and "is not after --since" in odd.output
    # a date is parsed here, never handed to git as text: an option-looking value is a bad date, nothing else
    hostile = cli("exam", "candidates", "--repo", tmp_path / "r", "--since", "--output=/tmp/x")
    assert hostile.exit_code == 2


def test_the_funnel_counts_each_stage_reached() -> None:
    rows = [hv.Row("a", "a", "certified", verdict=True), hv.Row("b", "b", "failToPass", "weak", True),
            hv.Row("c", "c", "candidates", "import: no", True), hv.Row("d", "d", "imported", "lane", False)]
    assert hv.funnel(rows) == {"candidates": 4, "imported": 3, "environment": 2, "referencePasses": 2,
                               "failToPass": 2, "certified": 1}


def test_a_harvest_state_that_is_not_one_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / hv.STATE_FILE).write_text('{"rows": [{"commit": "a", "exam": "a", "stage": "done"}]}')
    with pytest.raises(Exception, match="a row is not"):
        hv.load_state(tmp_path)


def two_fixes(path: Path) -> dict[str, str]:
    """base -> a strong fix (certifies) -> a weak fix (its test kills no mutant: refused)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    base = commit(path, {"calc.py": BASE_CALC, "tests/test_visible.py": VISIBLE}, "initial", "2026-03-01T10:00:00Z")
    strong = commit(path, {"calc.py": STRONG, "tests/test_sign.py": STRONG_TESTS}, "Fix sign", "2026-03-12T10:00:00Z")
    weak = commit(path, {"calc.py": WEAK, "tests/test_clamp.py": WEAK_TESTS}, "Fix clamp", "2026-03-13T10:00:00Z")
    return {"base": base, "strong": strong, "weak": weak}


def harvest(repo: Path, tmp: Path, *extra: Any) -> Any:
    return cli("exam", "harvest", "--repo", repo, "-o", tmp / "suite", "--out", tmp / "certs", "--classification",
               "public", "--no-environments", "--json", *extra)


@needs_bwrap
@pytest.mark.slow
def test_a_harvest_certifies_what_it_can_says_where_the_rest_dropped_and_picks_up_where_it_left(
        tmp_path: Path) -> None:
    shas = two_fixes(tmp_path / "calc")
    res = harvest(tmp_path / "calc", tmp_path)
    assert res.exit_code == 0, res.output
    doc = check_document("exam harvest", res.stdout, res.exit_code)  # its shipped schema
    assert doc["funnel"] == {"candidates": 2, "imported": 2, "environment": 2, "referencePasses": 2,
                             "failToPass": 2, "certified": 1}
    rows = {c["commit"]: c for c in doc["candidates"]}
    assert rows[shas["strong"]]["certified"] and rows[shas["strong"]]["stage"] == "certified"
    weak = rows[shas["weak"]]
    assert weak["stage"] == "failToPass" and "weak tests" in weak["reason"] and weak["verdict"]
    # the suite holds what benchmark push takes; the refused exam is kept to read, beside the records
    assert sorted(p.name for p in (tmp_path / "suite" / "tasks").iterdir()) == [rows[shas["strong"]]["exam"]]
    assert (tmp_path / "certs" / hv.REFUSED_DIR / weak["exam"] / "exam.yaml").is_file()
    # again: nothing imported twice, the certified exam served from the cache, the same funnel
    again = harvest(tmp_path / "calc", tmp_path)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["funnel"] == doc["funnel"]
    assert "imported [" not in again.stderr
    events = (tmp_path / "certs" / "certify-events.jsonl").read_text().splitlines()
    assert json.loads(events[-1]).get("cached") is True, events[-1]
    # and the suite pushes as it is, its certification checked
    assert cli("keygen", tmp_path / "verifier").exit_code == 0
    assert cli("keygen", tmp_path / "certifier").exit_code == 0
    push = cli("benchmark", "push", tmp_path / "suite", f"oci:{tmp_path / 'layout'}:bench", "--seal-to",
               tmp_path / "verifier.did.json", "--certifications", tmp_path / "certs", "--certifier-key",
               tmp_path / "certifier.key", "--json")
    assert push.exit_code == 0, push.output


@needs_bwrap
@pytest.mark.slow
def test_an_interrupted_harvest_prints_its_funnel_and_the_next_run_finishes_it(tmp_path: Path) -> None:
    two_fixes(tmp_path / "calc")
    argv = [sys.executable, "-m", "acx_oci", "exam", "harvest", "--repo", str(tmp_path / "calc"), "-o",
            str(tmp_path / "suite"), "--out", str(tmp_path / "certs"), "--classification", "public",
            "--no-environments", "--jobs", "1", "--json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent.parent)})
    deadline = time.monotonic() + 120
    while not (tmp_path / "certs" / "certify-events.jsonl").exists() and not (
            tmp_path / "certs" / "records").exists():  # certification under way: the imports are done
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    doc = json.loads(out)
    assert doc["interrupted"] is True and doc["funnel"]["imported"] == 2 and doc["funnel"]["certified"] < 2
    assert "Traceback" not in err
    state = json.loads((tmp_path / "certs" / hv.STATE_FILE).read_text())
    assert len(state["rows"]) == 2
    res = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent.parent)})
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["funnel"]["certified"] == 1
    assert "imported [" not in res.stderr  # the first run's imports were kept


# --- what an attack review of the harvest found (each failed on the first version) ---------------------------


def test_a_commit_too_big_to_read_is_left_out_and_the_walk_goes_on(tmp_path: Path) -> None:
    shas = history(tmp_path / "r")
    git(tmp_path / "r", "commit", "-q", "--allow-empty", "-m", "x" * 100_000, date="2026-03-01T10:00:00Z")
    found = cand.scan(tmp_path / "r")
    assert [c.commit for c in found.candidates] == [shas["old_fix"]]
    assert found.left_out[cand.UNREADABLE] == 1


def test_dates_before_1970_and_a_capped_walk_say_what_they_mean(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    shas = history(tmp_path / "r")
    assert cand.scan(tmp_path / "r", until=cand.parse_date("1960-01-01", "--until")).candidates == []
    early = cand.scan(tmp_path / "r", since=cand.parse_date("0001-01-01", "--since"))
    assert [c.commit for c in early.candidates] == [shas["old_fix"]] and not early.capped
    monkeypatch.setattr(cand, "MAX_SCANNED", 3)
    capped = cand.scan(tmp_path / "r")
    assert capped.capped and capped.scanned == 3


def test_text_from_a_repository_reaches_a_terminal_without_its_control_characters() -> None:
    assert cand.printable("Fix \x1b]0;PWNED\x07 and \x1b[2J\rdone\x9b") == "Fix  ]0;PWNED  and  [2J done "


def test_an_exam_id_is_the_repositorys_real_name_and_always_ends_in_the_commit(tmp_path: Path) -> None:
    (tmp_path / "calc" / "tests").mkdir(parents=True)
    commit_a, commit_b = "a" * 40, "a" * 10 + "b" * 30
    assert hv.exam_ids(tmp_path / "calc" / "tests" / "..", commit_a) == hv.exam_ids(tmp_path / "calc", commit_a)
    long = tmp_path / ("n" * 200)
    long.mkdir()
    first, second = hv.exam_ids(long, commit_a)
    assert first.endswith(commit_a[:10]) and second.endswith(commit_a[:16]) and len(first) <= 128
    # two commits sharing their first 10 digits get different exams; a state row never names a foreign one
    h = hv.Harvest(long, tmp_path / "suite", tmp_path / "certs", {}, {}, {})
    h.rows[commit_a] = hv.Row(commit_a, h.exam_of(commit_a), "imported")
    assert h.exam_of(commit_b) == hv.exam_ids(long, commit_b)[1] != h.rows[commit_a].exam
    h.rows[commit_b] = hv.Row(commit_b, "someone-elses-exam", "failToPass", "planted", True)
    assert h.exam_of(commit_b) != "someone-elses-exam"


def test_a_broken_suite_stops_the_harvest_in_one_line_and_costs_no_candidate(tmp_path: Path) -> None:
    two_fixes(tmp_path / "calc")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "benchmark.json").write_text('{"tasks": "not a list"}')
    res = harvest(tmp_path / "calc", tmp_path)
    assert res.exit_code == 2 and "expected a benchmark suite with a tasks list" in res.output, res.output
    assert hv.load_state(tmp_path / "certs") == {}  # no candidate was judged on the suite's fault


def test_an_import_cut_short_before_the_suite_listed_it_is_imported_again(tmp_path: Path) -> None:
    shas = two_fixes(tmp_path / "calc")
    (c,) = [c for c in cand.scan(tmp_path / "calc").candidates if c.commit == shas["strong"]]
    h = hv.Harvest(tmp_path / "calc", tmp_path / "suite", tmp_path / "certs",
                   {"publiclyListable": True, "customerOwned": False}, {}, {})
    eid = h.exam_of(c.commit)
    (tmp_path / "suite" / "tasks" / eid / "workspace").mkdir(parents=True)  # half written, never listed
    h.rows[c.commit] = hv.Row(c.commit, eid, "candidates", hv.IMPORTING)
    h.import_all([c], lambda line: None)
    assert h.rows[c.commit].stage == hv.PENDING and eid in h.listed()
    assert (tmp_path / "suite" / "tasks" / eid / "exam.yaml").is_file()


def test_two_harvests_never_share_their_records(tmp_path: Path) -> None:
    two_fixes(tmp_path / "calc")
    with hv.locked(tmp_path / "certs"):
        res = harvest(tmp_path / "calc", tmp_path)
    assert res.exit_code == 2 and "another harvest is running" in res.output


@needs_bwrap
@pytest.mark.slow
def test_a_harvest_on_a_dask_cluster_of_two_local_workers(tmp_path: Path) -> None:
    from ..support.dask_cluster import start_cluster

    shas = two_fixes(tmp_path / "calc")
    cluster = start_cluster(tmp_path / "cluster")
    try:
        cluster.add_worker("w1")
        cluster.add_worker("w2")
        res = harvest(tmp_path / "calc", tmp_path, "--executor", cluster.url)
    finally:
        cluster.stop()
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["funnel"]["certified"] == 1 and doc["funnel"]["failToPass"] == 2
    assert {c["commit"]: c["stage"] for c in doc["candidates"]} == {shas["strong"]: "certified",
                                                                   shas["weak"]: "failToPass"}


def test_an_environment_that_could_not_be_had_is_no_verdict_on_the_exam() -> None:
    """An unreachable --env-store refused every exam at gold; the harvest kept that as a verdict and never tried
    those candidates again (the store's fault, not the commits')."""
    from acx_oci.model import CertificationRecord
    from acx_oci.model import exam as mx

    stages: dict[str, Any] = {s: {"ok": True} for s in mx.STAGES}
    stages["gold"] = {"ok": False, "environmentBuilt": False,
                      "reason": "environment not built: the environment image store 127.0.0.1:9/acx/env cannot be read"}
    rec = CertificationRecord.seal("x", None, stages, impossible=False)
    stage, reason, verdict = hv.stage_of(rec)
    assert (stage, verdict) == ("imported", False) and "cannot be read" in reason


def test_a_harvest_can_state_every_exams_python_and_a_wrong_one_is_said_once(tmp_path: Path) -> None:
    """attrs f53fc5440d's new tests skip on the derived 3.11 ("requires Python 3.13+"), so it had nothing to
    solve; ``exam import --python`` was the way out, and ``exam harvest`` now takes it too. A Python we do not
    offer stops the run in one line before any candidate, not as every candidate's refusal."""
    shas = two_fixes(tmp_path / "calc")
    (c,) = [c for c in cand.scan(tmp_path / "calc").candidates if c.commit == shas["strong"]]
    h = hv.Harvest(tmp_path / "calc", tmp_path / "suite", tmp_path / "certs",
                   {"publiclyListable": True, "customerOwned": False}, {}, {}, python="3.13")
    h.import_all([c], lambda line: None)
    spec = json.loads((tmp_path / "suite" / "tasks" / h.exam_of(c.commit) / "env.json").read_text())
    assert spec["python"] == "3.13" and spec["overridden"] == ["python"]
    res = harvest(tmp_path / "calc", tmp_path / "other", "--python", "2.7")
    assert res.exit_code == 2 and "--python 2.7: expected one of 3.9, 3.11, 3.13" in res.output
    assert not (tmp_path / "other" / "certs" / "harvest.json").exists()
