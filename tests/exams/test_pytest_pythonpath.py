"""pytest's ``pythonpath`` setting (filelock: ``[".", "tasks"]``, its tests import ``capabilities`` from ``tasks/``):
the folders it names go with the hidden tests and are first on the grader's ``sys.path``, inside the hidden tree.

Before, ``tasks/`` never reached the grader: the reference failed with "No module named 'capabilities'" and
filelock's real fixes were refused as "nothing to solve"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acx_oci.services.exams import pytestconf

from ..support.cli import cli
from .test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, commit, git, patch

PYPROJECT = '[project]\nname = "calc"\n[tool.pytest.ini_options]\npythonpath = [".", "tasks"]\n'
CAPABILITIES = "ZERO_IS_SIGNED = False\n"
USES_TASKS = HIDDEN.replace("from calc import clamp, sign\n",
                            "from calc import clamp, sign\nfrom capabilities import ZERO_IS_SIGNED\n")


def test_the_setting_is_read_and_a_path_out_of_the_tree_is_dropped() -> None:
    ini, where = pytestconf.settings({"pyproject.toml": PYPROJECT})
    assert ini == {"pythonpath": ".\ntasks"} and where == "pyproject.toml"
    names = ["tasks/capabilities.py", "tasks/deep/x.py", "tasks/data.txt", "calc.py", "tests/test_calc.py"]
    assert pytestconf.path_files(names, ini) == ["tasks/capabilities.py", "tasks/deep/x.py"]
    for bad in ('["../outside"]', '["/etc"]', '["a/../../b"]', '["' + '", "'.join("abcdefghi") + '"]'):
        text = f'[tool.pytest.ini_options]\npythonpath = {bad}\nxfail_strict = true\n'
        assert pytestconf.settings({"pyproject.toml": text})[0] == {"xfail_strict": "true"}, bad


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_tests_importing_a_pythonpath_folder_grade_the_reference_a_pass(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    base = commit(repo, {"calc.py": BASE_CALC, "pyproject.toml": PYPROJECT, "tasks/capabilities.py": CAPABILITIES},
                  "initial", "2026-03-01T10:00:00Z")
    fix = commit(repo, {"calc.py": FIXED_CALC, "tests/test_calc.py": USES_TASKS}, "fix clamp", "2026-03-03T10:00:00Z")
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", base, "--fix", fix, "--id", "calc", "-o", tmp_path / "s")
    assert res.exit_code == 0, res.output
    source = json.loads((tmp_path / "s" / "tasks" / "calc" / "source.json").read_text())
    assert "tasks/capabilities.py" in source["graderSupport"]
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"instance_id": "calc", "model_name_or_path": "m",
                                 "model_patch": patch("calc.py", BASE_CALC, FIXED_CALC)}) + "\n")
    res = cli("exam", "grade", tmp_path / "s", "--predictions", preds, "--no-environments", "--json")
    doc = json.loads(res.stdout)
    assert doc["resolved_ids"] == ["calc"], doc["instances"]
