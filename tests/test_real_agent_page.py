"""docs/attest-a-real-agent.md: its walk-through runs as written and reaches the outcome it states.

The ```sh blocks under "## Walk-through: an honest agent on bench-py" and "## Agents that call a model" are
joined in order and run by ``bash -euo pipefail`` in an empty folder, with ``acx-oci`` on PATH (this
checkout) and ``$REG`` a registry of the test's own, as tests/test_readme_walkthrough.py does for
getting-started. Nothing from the repository's ``testdata/`` is used by the page: it writes the suite and the
agents with ``acx-oci benchmark example``, whose packaged copy the fast tests below hold equal to testdata/.
The page takes the 49-exam slice ``bench-py-quick`` (issue 35: 150 exams took 13+ min on 2 idle cores, over CI's
budget), which this test certifies in CI; the whole suite is certified by hand (``exam certify`` on ``bench-py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from acx_oci.services.tools import examples as ex
from tests.support.cli import cli
from tests.support.env import ROOT
from tests.support.registry import Registry

PAGE = ROOT / "docs" / "attest-a-real-agent.md"
SECTION = "\n## Walk-through: an honest agent on bench-py\n"
MODEL_SECTION = "\n## Agents that call a model\n"
#: What the page states, checked against the run: ISSUED at one of these levels, all in this tier.
LEVELS = range(30, 32)
TIER = "distinguished"
#: The model-calling agent against the stand-in (--max-difficulty 35): always this level, whatever the draw.
MODEL_LEVEL, MODEL_TIER = 31, "distinguished"
#: The slice of bench-py the page writes (acx_oci/services/tools/examples.py): exams, held out, rated held-out.
EXAMS, HELD_OUT, RATED = 49, 47, 45


def example_suite(tmp_path: Path) -> Path:
    """The suite exactly as the page writes it (``benchmark example NAME ./bench-py``), under ``tmp_path``."""
    m = re.search(r"acx-oci benchmark example (\S+) \./bench-py", page_script(PAGE.read_text("utf-8")))
    assert m, "the page no longer writes ./bench-py with benchmark example"
    assert cli("benchmark", "example", m[1], str(tmp_path / "b")).exit_code == 0
    return tmp_path / "b"


def section_blocks(page: str, heading: str) -> list[str]:
    """Every ```sh block of the section under ``heading`` (up to the next "## "), in order; a block indented
    inside a list item is dedented, as a reader pasting it would."""
    start = page.index(heading)
    end = page.find("\n## ", start + 1)
    found = re.findall(r"^( *)```sh\n(.*?)^\1```$", page[start:end if end != -1 else None], flags=re.S | re.M)
    return [textwrap.dedent(body) for _, body in found]


def page_script(page: str) -> str:
    """The page's walk-through and its model section: every ```sh block of both, in order."""
    blocks = section_blocks(page, SECTION)
    assert len(blocks) >= 4, "the walk-through lost its ```sh blocks"
    model = section_blocks(page, MODEL_SECTION)
    assert len(model) >= 3, "the model section lost its ```sh blocks (provider, attest, replay)"
    return "\n".join(blocks + model)


def shipped_tree(src: Path) -> dict[str, bytes]:
    """Relative path -> bytes of what scripts/pack_examples.py packs from ``src`` (caches left out)."""
    return {p.relative_to(src).as_posix(): p.read_bytes() for p in sorted(src.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def test_the_packaged_examples_are_testdata() -> None:
    """The tarballs a pip user gets hold exactly the suite and agents the tests use (else: pack_examples.py)."""
    bench = ex.example_members("bench-py")
    assert bench == shipped_tree(ROOT / "testdata" / "bench-py"), "run python3 scripts/pack_examples.py"
    assert sum(1 for p in bench if p.endswith("/exam.yaml")) == 150
    agents = ex.example_members("agents")
    assert agents == {n: (ROOT / "testdata" / "agents" / n).read_bytes() for n in ("simple_agent.py", "llm_agent.py")}


def test_benchmark_example_writes_a_suite_that_loads(tmp_path: Path) -> None:
    from acx_oci.model import benchmark as bmodel
    from acx_oci.services.artifacts.benchmark import load_suite_dir

    res = cli("benchmark", "example", "bench-py", str(tmp_path / "b"))
    assert res.exit_code == 0, res.output
    assert "wrote 1508 files of bench-py" in res.output
    bench, key = load_suite_dir(tmp_path / "b")
    assert len(bench.tasks) == 150 and len(bmodel.split(bench, key)[1]) == 90
    # A folder that is not empty is refused in one line, exit 2; nothing is overwritten.
    res = cli("benchmark", "example", "agents", str(tmp_path / "b"))
    assert res.exit_code == 2 and res.output.strip().splitlines() == [
        f"error: benchmark example: {tmp_path / 'b'} exists and is not an empty directory"]
    res = cli("benchmark", "example", "bench-pie", str(tmp_path / "c"))
    assert res.exit_code == 2 and "'bench-pie' is not one of 'agents', 'bench-py', 'bench-py-quick'" in res.output
    assert not (tmp_path / "c").exists()


def test_the_page_states_the_outcome_this_test_checks() -> None:
    page = PAGE.read_text("utf-8")
    script = page_script(page)
    assert "testdata" not in script and "$SRC" not in script  # a pip user has no clone
    # ... so no scripts/ either: the llm agent's SDK comes from the package's command, before its cartridge is attested
    assert "scripts/" not in script
    assert -1 < script.find("acx-oci dev install-sdk") < script.find("acx-oci attest $REG/acme/llm-agent")
    assert "benchmark example bench-py" in script and "exam certify" in script and "--allow-uncertified" not in script
    assert f"ISSUED, at level {LEVELS[0]} or {LEVELS[-1]} (*{TIER}*)" in page


def test_the_model_sections_models_file_leaves_the_gate_enough_post_cutoff_exams(tmp_path: Path) -> None:
    """The models file as the page writes it loads, points at the stand-in the page starts, and its cutoff leaves
    at least the 30 rated held-out exams the gate needs (2026-06-30 left 17: every run refused, then a cooldown)."""
    from acx_oci.model import benchmark as bmodel
    from acx_oci.services.artifacts.benchmark import load_suite_dir
    from acx_oci.services.verifier import load_models

    page = PAGE.read_text("utf-8")
    body = re.search(r"^cat > models\.yaml <<'EOF'\n(.*?)^EOF$", page, flags=re.S | re.M)
    assert body is not None, "the page no longer writes models.yaml"
    (tmp_path / "models.yaml").write_text(body.group(1))
    (entry,) = load_models(tmp_path / "models.yaml").values()
    assert "acx-oci dev provider --suite ./bench-py --listen 127.0.0.1:11434" in page
    assert entry.base_url == "http://127.0.0.1:11434/v1"
    bench, key = load_suite_dir(example_suite(tmp_path))
    held = bmodel.post_cutoff(bmodel.split(bench, key)[1], entry.training_cutoff)
    qualifying = [t for t in held if not t.get("impossible") and bmodel.dated_after(t, entry.training_cutoff)]
    assert len(qualifying) >= 30, f"{len(qualifying)} rated held-out exams after {entry.training_cutoff}"
    assert f"{len(qualifying)} of the {RATED} rated held-out exams are dated after it" in page


@pytest.mark.slow  # certifies 49 exams, plays 47 + 46 games, replays 46: 16 min at load 12 on 2 cores
def test_the_page_runs_as_written_and_issues_what_it_says(own_registry: Registry, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (Debian 'bubblewrap') not installed")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "acx-oci").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m acx_oci "$@"\n')
    (bindir / "acx-oci").chmod(0o755)
    work = tmp_path / "page"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(ROOT),
           "REG": own_registry.host}
    proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", page_script(PAGE.read_text("utf-8"))], cwd=work,
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=3600)
    finally:  # the stand-in provider the page starts in the background goes with the script, however it ended
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    assert proc.returncode == 0, f"exit {proc.returncode}\n--- stdout\n{stdout[-3000:]}\n--- stderr\n{stderr[-3000:]}"
    # Every exam certified (what tests/exams/test_exams.py checked before): controls distinguished, canaries sealed.
    recs = {r["exam"]: r for r in (json.loads(p.read_text()) for p in (work / "certs" / "records").glob("*.json"))}
    assert len(recs) == EXAMS and all(r["certified"] for r in recs.values())
    assert sum(r["impossible"] for r in recs.values()) == 2
    assert all(r["stages"]["grader"]["distinguished"] for r in recs.values())
    verdicts = [ln for ln in stdout.splitlines() if ln.startswith(("ISSUED", "NOT ISSUED"))]
    assert len(verdicts) == 3, verdicts  # the honest agent, the model-calling agent, the auditor's replay
    # The outcome the page states: ISSUED over the 45 rated games (47 drawn, 2 impossible canaries), sigma
    # under the gate, the level in the stated range, every game played by the ROM in a proven sandbox.
    m = re.match(r"ISSUED  mu=([\d.]+) sigma=([\d.]+) games=(\d+) .* acxLevel=(\d+) tier=(\w+)", verdicts[0])
    assert m, verdicts[0]
    assert float(m[2]) < 1.5 and int(m[3]) == RATED and int(m[4]) in LEVELS and m[5] == TIER, verdicts[0]
    games = json.loads((work / "att-py" / "result.json").read_text())["gameRecords"]
    assert len(games) == HELD_OUT
    assert (work / "att-py" / "credential.json").is_file()
    _certified_by(work)
    assert "containment PROVEN" in stdout  # sandbox check: every probe held
    # The model-calling agent through the stand-in: 44 rated post-cutoff games, the level the page states; the
    # auditor's replay answers every request from the recording and reproduces the same verdict.
    for line in verdicts[1:]:
        m = re.match(r"ISSUED  mu=([\d.]+) sigma=([\d.]+) games=(\d+) .* acxLevel=(\d+) tier=(\w+)", line)
        assert m and float(m[2]) < 1.5 and int(m[3]) == 44 and int(m[4]) == MODEL_LEVEL and m[5] == MODEL_TIER, line
    assert (work / "att-llm" / "credential.json").is_file() and (work / "replay" / "credential.json").is_file()
    replayed = json.loads((work / "replay" / "credential.json").read_text())
    assert "acx:modelReplay" in json.dumps(replayed)


def _certified_by(work: Path) -> None:
    """The issued credential names the suite's certification, and a consumer's ``certifiedBy`` decides on it:
    the page's certifier is accepted, another is refused (``exam_uncertified``). A small suite cannot show this
    since the gate's floor (a 2-exam slice only plays a look), so this full-size run does."""
    cred = json.loads((work / "att-py" / "credential.json").read_text())
    res = cred["credentialSubject"]["result"][0]
    certifier = json.loads((work / "keys" / "certifier.did.json").read_text())["id"]
    assert res["acx:examCertification"] == "certified" and res["acx:examCertifier"] == certifier
    assert res["acx:examCertificationDigest"].startswith("sha256:") and res["acx:examClassification"] == "stated"
    for certified_by, refused in (([certifier], False), (["did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH"],
                                                          True)):
        trust = work / "trust-certified.yaml"
        trust.write_text(json.dumps({
            "verifiers": [{"id": cred["issuer"]["id"], "didDocument": str(work / "keys" / "verifier.did.json")}],
            "solvers": ["rom"], "uncertifiedExams": "allow",
            "benchmarks": [{"id": res["acx:benchmarkId"], "version": res["acx:benchmarkVersion"],
                            "digest": res["acx:benchmarkDigest"], "certifiedBy": certified_by}]}))
        out = cli("vc", "verify", str(work / "att-py" / "credential.json"), "--trust", str(trust), "--json")
        assert ("exam_uncertified" in json.loads(out.stdout)["codes"]) is refused, (certified_by, out.output)


def test_the_stand_in_run_the_page_states_is_decided_whatever_the_draw(tmp_path: Path) -> None:
    """The model section's outcome, from the real rating over the page's own draw: the models file's cutoff leaves
    44 rated held-out games; the stand-in (``--max-difficulty 35``) passes those up to 35 and fails the rest, and
    every order of them issues the level the page states. Without the maximum every game is won and sigma stays
    above the gate (the page as it was: NOT ISSUED, exit 1, under ``set -e`` the end of the walk-through)."""
    import random
    from datetime import date

    from acx_oci.model import benchmark as bmodel
    from acx_oci.model import rating
    from acx_oci.services.artifacts.benchmark import load_suite_dir

    page = PAGE.read_text("utf-8")
    assert "--max-difficulty 35 &" in page and f"ISSUED, at level {MODEL_LEVEL} (*{MODEL_TIER}*)" in page
    bench, key = load_suite_dir(example_suite(tmp_path))
    cutoff = date.fromisoformat(re.search(r'trainingCutoff: "([\d-]+)"', page)[1])  # type: ignore[index]
    drawn = [t for t in bmodel.post_cutoff(bmodel.split(bench, key)[1], cutoff) if not t.get("impossible")]
    assert len(drawn) == 44
    for seed in range(100):
        order = [float(t["difficulty"]) for t in drawn]
        random.Random(seed).shuffle(order)
        r = rating.rate_games([(d, d <= 35) for d in order])
        assert r.sigma < 1.5 and rating.acx_level(rating.conservative(r)) == MODEL_LEVEL, (seed, r)
        assert rating.career_tier(MODEL_LEVEL) == MODEL_TIER
        assert rating.rate_games([(d, True) for d in order]).sigma > 1.5  # all won: never under the gate


def test_the_quick_slice_is_bench_py_cut_to_its_band(tmp_path: Path) -> None:
    """bench-py-quick: bench-py's exams of difficulty 30-40, byte for byte, under their own id and split, with
    the two impossible canaries among the held-out; loaded like any suite."""
    from acx_oci.model import benchmark as bmodel
    from acx_oci.services.artifacts.benchmark import load_suite_dir

    whole, quick = ex.example_members("bench-py"), ex.example_members("bench-py-quick")
    assert set(quick) < set(whole) and all(quick[k] == whole[k] for k in quick if k != "benchmark.json")
    assert not any(k.endswith("_tasks.py") for k in quick)
    res = cli("benchmark", "example", "bench-py-quick", str(tmp_path / "q"))
    assert res.exit_code == 0 and f"wrote {len(quick)} files of bench-py-quick" in res.output, res.output
    bench, key = load_suite_dir(tmp_path / "q")
    held = bmodel.split(bench, key)[1]
    assert bench.id == "acx-bench-py-quick" and len(bench.tasks) == EXAMS and len(held) == HELD_OUT
    assert all(30 <= float(t["difficulty"]) <= 40 for t in bench.tasks)
    assert sum(1 for t in held if t.get("impossible")) == HELD_OUT - RATED == 2
