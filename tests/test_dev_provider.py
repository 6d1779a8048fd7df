"""``acx-oci dev provider``: the stand-in model provider the model-agent walk-through runs against, as a command
(a real process on a real port, spoken to with the official openai SDK's wire format)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .support.cli import cli_expect as cli
from .support.gateway_proc import free_port


def _suite(root: Path) -> Path:
    for name, prompt, solution in (("t1", "Write add(a, b).", "def add(a, b):\n    return a + b\n"),
                                   ("t2", "Write mul(a, b).", "def mul(a, b):\n    return a * b\n")):
        (root / "tasks" / name / "reference").mkdir(parents=True)
        (root / "tasks" / name / "prompt.md").write_text(prompt)
        (root / "tasks" / name / "reference" / "solution.py").write_text(solution)
    return root


def test_the_stand_in_answers_a_task_with_its_reference_and_checks_the_key(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    address = f"127.0.0.1:{free_port()}"
    env = {**os.environ, "STANDIN_KEY": "sk-standin"}
    with (tmp_path / "log").open("w+b") as log:
        proc = subprocess.Popen([sys.executable, "-m", "acx_oci", "dev", "provider", "--suite", str(suite),
                                 "--listen", address, "--api-key-env", "STANDIN_KEY", "--model", "m1"],
                                stdout=subprocess.DEVNULL, stderr=log, env=env)
        try:
            for _ in range(200):
                log.seek(0)
                if b"STAND-IN" in log.read() or proc.poll() is not None:
                    break
                time.sleep(0.05)
            url = f"http://{address}/v1/chat/completions"
            ask = {"model": "m1", "messages": [{"role": "system", "content": "You write Python."},
                                               {"role": "user", "content": "Task:\nWrite mul(a, b).\n"}]}
            ok = httpx.post(url, json=ask, headers={"Authorization": "Bearer sk-standin"}, timeout=10)
            assert ok.status_code == 200, ok.text
            doc = ok.json()
            assert doc["object"] == "chat.completion" and doc["choices"][0]["finish_reason"] == "stop"
            content = doc["choices"][0]["message"]["content"]
            assert '"solution.py": "def mul(a, b):' in content and "add" not in content
            assert doc["usage"]["total_tokens"] == doc["usage"]["prompt_tokens"] + doc["usage"]["completion_tokens"]
            wrong = httpx.post(url, json=ask, headers={"Authorization": "Bearer sk-other"}, timeout=10)
            assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "invalid_request_error"
            other = httpx.post(url, json={**ask, "model": "m2"}, headers={"Authorization": "Bearer sk-standin"},
                               timeout=10)
            assert other.status_code == 404
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)
        log.seek(0)
        banner = log.read().decode()
    assert "STAND-IN, not a model" in banner and "2 task(s)" in banner


def test_the_stand_in_needs_its_key_and_a_suite(tmp_path: Path) -> None:
    res = cli("dev", "provider", "--suite", _suite(tmp_path / "s"), "--api-key-env", "ACX_UNSET_KEY_VAR", ok=(2,))
    assert "ACX_UNSET_KEY_VAR: expected the key in that environment variable" in res.output
    (tmp_path / "empty").mkdir()
    res = cli("dev", "provider", "--suite", tmp_path / "empty", "--listen", "127.0.0.1:0", ok=(2,))
    assert "no tasks/*/prompt.md" in res.output


def test_with_a_maximum_difficulty_it_knows_only_the_easier_tasks(tmp_path: Path) -> None:
    """A stand-in that solves every task wins every game and its sigma never reaches the gate; with
    ``max_difficulty`` the tasks above it get an answer with no files (the untouched tree then fails)."""
    import json

    from acx_oci.egress import SuiteReferenceSolver

    suite = _suite(tmp_path / "suite")
    with pytest.raises(ValueError, match=r"expected benchmark\.json listing each task's id and difficulty"):
        SuiteReferenceSolver(suite, max_difficulty=20)
    (suite / "benchmark.json").write_text(json.dumps({"tasks": [{"id": "t1", "difficulty": 15},
                                                                {"id": "t2", "difficulty": 25}]}))
    solver = SuiteReferenceSolver(suite, max_difficulty=20, fenced=False)
    known = json.loads(solver.answer("Write add(a, b)."))["files"]
    assert known == {"solution.py": "def add(a, b):\n    return a + b\n"}
    assert json.loads(solver.answer("Write mul(a, b)."))["files"] == {}
    assert solver.solved == ["t1", "t2"]
    assert json.loads(SuiteReferenceSolver(suite, fenced=False).answer("Write mul(a, b)."))["files"]  # default: all
    res = cli("dev", "provider", "--suite", tmp_path / "nothing-here", "--max-difficulty", "20", ok=(2,))
    assert "does not exist" in res.output
