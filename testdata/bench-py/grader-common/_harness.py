"""Grader helper: call the submission in a separate, isolated Python process.

The submission never runs inside the pytest process, so it cannot patch the
test runner; it runs with -I (no PYTHONPATH, no user site, no cwd on sys.path)
in a copy of the submitted workspace.
"""

import json
import os
import subprocess

DRIVER = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("solution", "solution.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
req = json.loads(sys.stdin.read())
out = []
for args in req["calls"]:
    try:
        out.append({"ok": getattr(mod, req["func"])(*args)})
    except Exception as exc:
        out.append({"raised": type(exc).__name__})
sys.stdout.write("\n@@ACX-RESULT@@" + json.dumps(out))
"""


def call_many(func, calls, timeout=10):
    """[{"ok": value} | {"raised": name}] per call, or an AssertionError when the run breaks."""
    proc = subprocess.run([os.environ.get("ACX_PYTHON", "python3"), "-I", "-B", "-c", DRIVER],
                          cwd=os.environ["ACX_SUBMISSION"], input=json.dumps({"func": func, "calls": calls}),
                          capture_output=True, text=True, timeout=timeout)
    marker = proc.stdout.rfind("@@ACX-RESULT@@")
    assert proc.returncode == 0 and marker >= 0, f"submission failed: {proc.stderr[-500:]}"
    return json.loads(proc.stdout[marker + len("@@ACX-RESULT@@"):])
