"""Run the ``acx-oci`` click group in process."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result

from acx_oci.cli import main


def cli(*args: Any, catch_exceptions: bool = True) -> Result:
    """``acx-oci ARGS...``; arguments are passed through ``str`` (so ``Path`` and ``int`` are fine)."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=catch_exceptions)


def cli_expect(*args: Any, ok: tuple[int, ...] = (0,)) -> Result:
    """``cli`` that asserts the exit code is one of ``ok``."""
    res = cli(*args)
    assert res.exit_code in ok, f"{args[:2]} -> {res.exit_code}: {res.output}\n{res.exception!r}"
    return res


def ok(res: Result, code: int = 0) -> Any:
    """Assert the exit code; return the output parsed as JSON when it is an object or array, else stripped text."""
    assert res.exit_code == code, res.output
    text = res.output.strip()
    return json.loads(text) if text.startswith(("{", "[")) else text
