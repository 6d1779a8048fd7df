"""Issue 25 item 4: the lazy command tree. ``--version`` and ``--help`` import no command module (timed by
``benchmarks/startup.py``, not here), and the summaries the lazy group lists are the commands' own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click

from acx_oci.cli import load_all
from acx_oci.cli.main import COMMANDS, summary_line
from acx_oci.cli.reference import render

from .support.env import ROOT

#: What a command needs and ``--version`` / ``--help`` must not pay for.
HEAVY = ("cryptography", "requests", "httpx", "jsonschema", "rfc8785", "yaml", "sqlite3", "acx_oci.services",
         "acx_oci.oci", "acx_oci.crypto", "acx_oci.evaluation", "acx_oci.gateway", "acx_oci.cli.common")

_PROBE = """
import json, sys
import click
from acx_oci.cli import main
if sys.argv[1:] == ["reference-help"]:  # the root help as docs/cli.md renders it (width 100)
    print(main.get_help(click.Context(main, info_name="acx-oci", **{**main.context_settings, "terminal_width": 100})))
else:
    try:
        main(sys.argv[1:], prog_name="acx-oci")
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _run(*args: str) -> tuple[str, list[str]]:
    """``acx-oci ARGS`` in a fresh interpreter: (stdout and stderr, the modules it had imported)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=60, check=True)
    *err, modules = proc.stderr.strip().splitlines()
    return proc.stdout + "\n".join(err), json.loads(modules)


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_version_and_help_import_no_command_module() -> None:
    for args in (["--version"], ["--help"], ["-h"]):
        out, modules = _run(*args)
        assert out.strip(), args
        assert _heavy(modules) == [], (args, _heavy(modules))
        assert not [m for m in modules if m.startswith("acx_oci.cli.") and m.endswith("_cmd")], args


def test_a_mistyped_command_is_still_offered_the_right_one() -> None:
    """click suggests only from loaded commands; the lazy group offers every one, and loads none to do so."""
    out, modules = _run("resolv")
    assert "No such command 'resolv'. Did you mean 'resolve'?" in out
    assert _heavy(modules) == []


def test_a_command_loads_its_module_only() -> None:
    """``resolve --help`` imports the module that defines resolve, and not the unrelated ones."""
    out, modules = _run("resolve", "--help")
    assert "Usage: acx-oci resolve [OPTIONS] REF" in out
    assert "acx_oci.cli.referrers_cmd" in modules
    assert "acx_oci.cli.exam_cmd" not in modules and "acx_oci.cli.env_cmd" not in modules


def test_lazy_help_is_what_the_loaded_tree_prints() -> None:
    """The root ``--help`` from the summaries equals the one docs/cli.md renders with every command loaded."""
    out, modules = _run("reference-help")
    assert _heavy(modules) == []
    reference = render()
    root = reference.split("\n## acx-oci\n\n```text\n", 1)[1].split("\n```", 1)[0]
    assert out.rstrip() == root.replace("~", str(os.path.expanduser("~")))


def test_the_command_table_is_the_commands() -> None:
    """Every registered command is in :data:`COMMANDS` with its module and summary, and nothing else is."""
    main = load_all()
    assert set(main.commands) == set(COMMANDS)
    for name, cmd in main.commands.items():
        module = COMMANDS[name][0]
        assert cmd.callback is not None and cmd.callback.__module__ == f"acx_oci.cli.{module}", name
        for limit in (30, 45, 60, 80, 10**6):
            assert summary_line(name, limit) == cmd.get_short_help_str(limit), (name, limit)
    ctx = click.Context(main, info_name="acx-oci")
    assert main.list_commands(ctx) == sorted(main.commands)
