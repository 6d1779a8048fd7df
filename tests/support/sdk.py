"""The official model SDKs, as an agent in the sandbox gets them: ``/usr/bin/python3`` plus ``SDK_DIR``.

``scripts/install-sdk.sh`` installs openai and anthropic into ``/usr/local/lib/acx-oci-sdk`` — off the system
interpreter's default ``sys.path``, so Debian's pytest (the grader) sees no new plugins. Tests never import the
SDKs into the test process (their pinned dependencies would shadow this environment's); they run a snippet
in a fresh interpreter with :func:`run_sdk`, which prints one JSON value.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.env import ci_enabled

SDK_DIR = Path(os.environ.get("ACX_SDK_DIR", "/usr/local/lib/acx-oci-sdk"))
SYSTEM_PYTHON = "/usr/bin/python3"


@functools.cache
def _probe() -> tuple[str, str | None] | str:
    """(interpreter, path to prepend or None), or why there is none."""
    if Path(SYSTEM_PYTHON).exists() and SDK_DIR.is_dir():
        res = subprocess.run([SYSTEM_PYTHON, "-I", "-c", "import sys; sys.path.insert(0, sys.argv[1]); import openai",
                              str(SDK_DIR)], capture_output=True, timeout=60)
        if res.returncode == 0:
            return SYSTEM_PYTHON, str(SDK_DIR)
        why = f"{SYSTEM_PYTHON} cannot import openai from {SDK_DIR}: {res.stderr.decode(errors='replace')[-300:]}"
    else:
        why = f"{SDK_DIR} is missing"
    res = subprocess.run([sys.executable, "-c", "import openai"], capture_output=True, timeout=60)
    if res.returncode == 0:
        return sys.executable, None
    return why


def sdk_python() -> tuple[str, str | None]:
    """The interpreter that has the openai SDK, and the directory to put first on its path (or skip; under
    ``CI=true`` fail). Prefers the sandbox's own: ``/usr/bin/python3`` with :data:`SDK_DIR`."""
    got = _probe()
    if isinstance(got, str):
        msg = f"openai SDK unavailable ({got}); run scripts/install-sdk.sh"
        if ci_enabled():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return got


def run_sdk(code: str, env: Mapping[str, str] | None = None, timeout: float = 60.0,
            stdin: bytes | None = None) -> Any:
    """Run ``code`` (which may ``import openai``/``anthropic``) in a fresh interpreter; return the JSON value
    printed on its last stdout line. No proxy variables reach it (``NO_PROXY=*``)."""
    python, path = sdk_python()
    prelude = f"import sys\nsys.path.insert(0, {path!r})\n" if path else ""
    base = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith(("OPENAI_",
                                                                                                    "ANTHROPIC_"))}
    res = subprocess.run([python, "-c", prelude + code], capture_output=True, timeout=timeout, input=stdin,
                         env={**base, "NO_PROXY": "*", **(env or {})})
    if res.returncode != 0:
        raise AssertionError(f"SDK snippet failed ({res.returncode}):\n{res.stderr.decode(errors='replace')}")
    lines = res.stdout.decode().strip().splitlines()
    return json.loads(lines[-1]) if lines else None
