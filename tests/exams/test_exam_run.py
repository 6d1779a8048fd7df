"""Exams at attest time: impossible canaries catch a gaming agent; post-cutoff slicing draws unseen exams only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import identity_from_seed
from acx_oci.services.verifier.ledger import Ledger
from acx_oci.trust import load_identity, write_identity
from tests.support.cli import cli, ok

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH_PY = ROOT / "testdata" / "bench-py"
AGENTS = ROOT / "testdata" / "agents"
CAP = "implement-feature[python+pytest]@software-engineering"

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Fixed-seed keys: ROM digests, hence draw orders and ratings, are the same on every run."""
    tmp = tmp_path_factory.mktemp("examrun")
    write_identity(tmp / "publisher", identity_from_seed(bytes([21]) * 32))
    write_identity(tmp / "verifier", identity_from_seed(bytes([22]) * 32))
    layout = f"oci:{tmp / 'layout'}"
    ok(cli("benchmark", "push", str(BENCH_PY), f"{layout}:bench", "--seal-to", str(tmp / "verifier.did.json"),
           "--allow-uncertified"))  # certifying all 150 exams takes minutes: tests/test_real_agent_page.py does it
    return {"tmp": tmp, "layout": layout, "did": load_identity(tmp / "verifier.key").did}


def _cartridge(arena: dict[str, Any], name: str, agent: Path, cutoff: str | None = None) -> str:
    d = arena["tmp"] / "carts" / name
    args = ["--training-cutoff", cutoff] if cutoff else []
    ok(cli("cartridge", "init", str(d), "--id", f"io.example/{name}", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py", *args))
    shutil.copy(agent, d / "skills" / "agent.py")
    ok(cli("cartridge", "push", str(d), f"{arena['layout']}:{name}", "--key", str(arena["tmp"] / "publisher.key")))
    return f"{arena['layout']}:{name}"


def _attest(arena: dict[str, Any], ref: str, out: str, code: int) -> dict[str, Any]:
    tmp = arena["tmp"]
    return dict(ok(cli("attest", ref, "--benchmark", f"{arena['layout']}:bench", "--key", str(tmp / "verifier.key"),
                       "--issuer", arena["did"], "--state", str(tmp / "state"), "-o", str(tmp / "runs" / out),
                       "--jobs", "2", "--json"), code))


def test_a_pass_on_an_impossible_exam_is_cheating(arena: dict[str, Any]) -> None:
    ref = _cartridge(arena, "cheater", AGENTS / "hostile" / "impossible_cheat.py")
    summary = _attest(arena, ref, "cheater", 1)
    assert summary["issued"] is False and summary["reasons"][0].startswith("cheating_detected")
    out = arena["tmp"] / "runs" / "cheater"
    assert not (out / "credential.json").exists()
    games = json.loads((out / "result.json").read_text())["gameRecords"]
    assert len(games) == 90
    with Ledger(arena["tmp"] / "state") as led:
        attempt = led.attempts(summary["romDigest"])[-1]
        assert attempt.state == "not-issued" and any("cheating_detected" in r for r in attempt.reasons)
    # The cooldown applies: the same ROM cannot simply try again.
    again = _attest(arena, ref, "cheater-again", 2)
    assert any("cooldown" in r for r in again["reasons"])


def test_post_cutoff_slicing(arena: dict[str, Any]) -> None:
    # 24 of the 90 held-out exams were published after 2026-05-31 (two impossible): fewer than minGames 30.
    late = _cartridge(arena, "late-model", AGENTS / "simple_agent.py", "2026-05-31")
    summary = _attest(arena, late, "late", 1)
    assert summary["issued"] is False
    assert summary["reasons"][0].startswith("insufficient_post_cutoff_exams")
    # Moving the cutoff earlier leaves all 90 (88 rateable): the level is issued, the credential records it.
    early = _cartridge(arena, "early-model", AGENTS / "simple_agent.py", "2024-12-31")
    summary = _attest(arena, early, "early", 0)
    assert summary["issued"] is True and summary["games"] == 88
    cred = json.loads((arena["tmp"] / "runs" / "early" / "credential.json").read_text())
    res = cred["credentialSubject"]["result"][0]
    assert res["acx:trainingCutoff"] == "2024-12-31" and res["acx:qualifyingExams"] == 88
