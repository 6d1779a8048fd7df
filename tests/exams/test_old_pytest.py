"""The grader under pytest before 4 (iniconfig's history pins pytest 3.0.2): every base grade was a harness
lane error there, "ValueError: not enough values to unpack" (issue 45).

pytest 3's ``-o`` took every following word, the tests' folder too; the py library of its time leaves a
``None`` key in ``sys.modules``, which the runner's integrity snapshot split as a name.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from acx_oci.sandbox import grade, pytest_argv

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def test_the_command_line_reads_the_same_under_pytest_3s_override_option() -> None:
    """pytest 3.0's option, as it declared it: ``-o``/``--override-ini`` with ``nargs='*'``, appended."""
    old = argparse.ArgumentParser(add_help=False)
    old.add_argument("-o", "--override-ini", nargs="*", action="append", dest="override_ini")
    for opt in ("-c", "-p"):
        old.add_argument(opt)
    old.add_argument("file_or_dir", nargs="*")
    argv = pytest_argv()
    known, _ = old.parse_known_args(argv[5:])
    assert known.file_or_dir == ["/tmp/acx-grader/tests"], known
    assert all("=" in v for group in known.override_ini for v in group), known.override_ini
    boot = argv[4]
    assert '"-o"' not in boot and '"--override-ini=%s=%s"' in boot  # the repository's settings, one word each


@needs_bwrap
def test_a_none_key_in_sys_modules_is_no_broken_grader(tmp_path: Path) -> None:
    ws, tests = tmp_path / "ws", tmp_path / "tests"
    ws.mkdir()
    tests.mkdir()
    (ws / "m.py").write_text("def f():\n    return 1\n")
    (tests / "test_m.py").write_text("import sys\n\nsys.modules[None] = sys  # as py 1.4 leaves it\n\n\n"
                                     "def test_f():\n    sys.path.insert(0, '/workspace')\n    from m import f\n"
                                     "    assert f() == 1\n")
    graded = grade(ws, tests, time_seconds=60)
    assert graded.passed and graded.report_ok and not graded.tamper, graded.stderr.decode()[-600:]
