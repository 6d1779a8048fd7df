"""Stage ``eval``: the reference and the controls played as games through the real ROM-solver path.

The grader stage grades trees directly; this stage proves the same verdicts survive the way a score is
actually made. Each submission (untouched, gold, incomplete, lookalike) becomes a tiny ROM whose signed-style
runtime writes that tree into ``/workspace``; :class:`acx_oci.solvers.rom.RomSolver` then plays the exam's
task with it exactly as ``attest`` does (containment proven in the game's own spec, the agent sandboxed, the
submission graded in a separate sandbox, :func:`acx_oci.sandbox.game_outcome` deciding the outcome), inside the
environment image when promoting. The gold must come out ``certified-pass`` (``model-fail`` for an impossible
exam) and every control ``model-fail``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import HarnessFault, SandboxUnavailable
from acx_oci.files import read_bytes_inside
from acx_oci.jsonio import parse_json
from acx_oci.model import CERTIFIED_PASS, LANE_ERROR, MODEL_FAIL
from acx_oci.sandbox import remove_tree
from acx_oci.services.exams.harness import BACKOFF_SECONDS, RETRIES, transient
from acx_oci.services.exams.source import ExamSource
from acx_oci.solvers import RomSolver, materialize_rom, new_rom_dir, prove

#: The player ROM: copies its answer (a JSON map of relative path -> text) into the workspace.
PLAYER = '''import json, os
with open("/rom/answer.json", encoding="utf-8") as fh:
    answer = json.load(fh)
for rel, text in sorted(answer.items()):
    path = os.path.join("/workspace", rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
'''
RUNTIME: dict[str, Any] = {"command": ["python3", "-I", "/rom/play.py"],
                           "limits": {"timeSeconds": 60, "memoryMiB": 1024, "pids": 64, "diskMiB": 256}}
PLAYS = ("untouched", "gold", "incomplete", "lookalike")


def exam_task(src: ExamSource) -> dict[str, Any]:
    """The task exactly as ``benchmark push`` expands the exam directory (``task.json`` extras included)."""
    raw = read_bytes_inside(src.dir, "task.json", "exam task.json")
    extra = parse_json(raw, f"task.json ({src.dir})") if raw is not None else {}
    extra = extra if isinstance(extra, dict) else {}
    grader = {"kind": "pytest", "files": src.grader_files(), **(extra.get("grader") or {})}
    return {**{k: v for k, v in extra.items() if k != "grader"}, "id": src.exam_id, "prompt": src.prompt,
            "workspace": {"files": dict(src.workspace)}, "grader": grader}


def _submissions(src: ExamSource) -> dict[str, dict[str, str]]:
    return {"untouched": {}, "gold": dict(src.reference),
            "incomplete": dict(src.controls.get("incomplete", {})),
            "lookalike": dict(src.controls.get("lookalike", {}))}


def _play(task: dict[str, Any], answer: dict[str, str], rootfs: Path | None,
          secrets: tuple[Path, ...]) -> tuple[str, str, bool]:
    """(outcome, detail, containment proven) of one game played by a player ROM answering ``answer``."""
    files = {"play.py": PLAYER.encode("utf-8"), "answer.json": json.dumps(answer, sort_keys=True).encode("utf-8")}
    rom_digest = sha256_digest(canonical({k: v.decode("utf-8") for k, v in files.items()}))
    root = new_rom_dir()
    try:
        rom = materialize_rom(files, root / "rom")
        proof = prove(secrets, rom, RUNTIME, rootfs)
        result = RomSolver(rom, RUNTIME, proof, rootfs=rootfs).solve(task, rom_digest)
        return result.outcome, result.detail, bool(proof.get("proven"))
    finally:
        remove_tree(root)


#: Lane errors of the harness (a retry may not meet them), as against a grader the exam breaks every time.
_TRANSIENT = re.compile(r"timed out|could not start|Resource temporarily unavailable|signal|sandbox lost")


def hang_fails(outcome: str, detail: str, *, expect_pass: bool) -> tuple[str, str]:
    """A play that should fail and whose grader timed out has failed (the code hangs: pyparsing 51560ca's base
    recurses for minutes on the bug the fix is about), as a control that hangs fails in the grader stage; a
    timeout where the play should pass stays a lane error (the harness's, retried)."""
    if outcome == LANE_ERROR and not expect_pass and "timed out" in detail:
        return MODEL_FAIL, f"{detail} (a run that should fail and hangs has failed)"
    return outcome, detail


def _steady_play(name: str, task: dict[str, Any], answer: dict[str, str], rootfs: Path | None,
                 secrets: tuple[Path, ...], expect_pass: bool = False) -> tuple[str, str, bool]:
    """A play, replayed while it is a lane error (no play here should be one: a lane error is the harness's
    fault under load, EAGAIN, a lost sandbox); still one after the retries, it is a :class:`HarnessFault`."""
    why = ""
    for attempt in range(RETRIES + 1):
        if attempt:
            time.sleep(BACKOFF_SECONDS * attempt)
        try:
            outcome, detail, proven = _play(task, answer, rootfs, secrets)
            outcome, detail = hang_fails(outcome, detail, expect_pass=expect_pass)
        except SandboxUnavailable as exc:
            if not transient(exc):
                raise
            why = str(exc)
            continue
        if outcome != LANE_ERROR or not _TRANSIENT.search(detail):
            return outcome, detail, proven
        why = detail
    raise HarnessFault(f"eval play {name}: {why} ({RETRIES + 1} attempts)")


def evaluate(src: ExamSource, rootfs: Path | None, secrets: tuple[Path, ...],
             note: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Stage ``eval``: every play's outcome against the expected one; ok only when all match and every
    game's containment was proven (an unproven sandbox withholds, and a withheld play is not a verdict)."""
    task = exam_task(src)
    expected = {p: MODEL_FAIL for p in PLAYS}
    if not src.impossible:
        expected["gold"] = CERTIFIED_PASS
    plays: dict[str, str] = {}
    details: dict[str, str] = {}
    contained = True
    for n, (name, answer) in enumerate(_submissions(src).items(), 1):
        if note is not None:
            note("eval", n, len(PLAYS))
        outcome, detail, proven = _steady_play(name, task, answer, rootfs, secrets,
                                               expect_pass=expected[name] == CERTIFIED_PASS)
        plays[name], contained = outcome, contained and proven
        if outcome != expected[name]:
            details[name] = detail
    ok = plays == expected and contained
    facts: dict[str, Any] = {"ok": ok, "solver": "rom", "plays": plays, "expected": expected,
                             "containmentProven": contained, "promotionEligible": ok}
    if details:
        facts["unexpected"] = details
    return facts
