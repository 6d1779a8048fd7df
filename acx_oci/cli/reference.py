"""The CLI reference (docs/cli.md), generated from the click commands so it cannot drift from ``--help``.

``python -m acx_oci.cli.reference > docs/cli.md`` rewrites it; tests/test_docs.py fails when the file
differs from this output. The text is rendered at a fixed width, and the home directory (some defaults
are under it) is written ``~``, so the output is the same on every machine and terminal.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from acx_oci.cli import main

WIDTH = 100
REGENERATE = "python -m acx_oci.cli.reference > docs/cli.md"


def _walk(command: click.Command, parent: click.Context | None, name: str) -> Iterator[click.Context]:
    """Every command under ``command``, depth first, in the order ``--help`` lists them."""
    # the command's own context settings (the root's ``-h, --help``) as a real invocation applies them: click
    # caches a command's help option once built, so a reference built without them would depend on what ran first
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    yield ctx
    if isinstance(command, click.Group):
        for sub_name in command.list_commands(ctx):
            sub = command.get_command(ctx, sub_name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, ctx, sub_name)


def render() -> str:
    """The whole reference as Markdown: an index, then each command's ``--help`` verbatim."""
    contexts = list(_walk(main, None, "acx-oci"))
    home = str(Path.home())
    lines = [
        "# CLI reference",
        "",
        f"Generated from the click commands by `{REGENERATE}`; do not edit by hand",
        "(tests/test_docs.py fails when this file and `--help` differ). Exit codes and what each",
        "command returns them for: [concepts.md, \"Exit codes\"](concepts.md#exit-codes).",
        "",
        "With `--json` a command prints one JSON document on stdout, on success and on failure:",
        "`schemaVersion`, `ok`, `exitCode`, on an error its reason `code` and `message`, and the command's",
        "own fields beside them. Each command's JSON Schema ships in the package, in `acx_oci/schemas/cli/`",
        "(`policy check`: `policy-check.schema.json`), each built on `envelope.schema.json`.",
        "",
    ]
    for ctx in contexts:
        path = ctx.command_path
        anchor = path.replace(" ", "-")
        lines.append(f"- [`{path}`](#{anchor})")
    for ctx in contexts:
        text = ctx.command.get_help(ctx).replace(home, "~")
        lines += ["", f"## {ctx.command_path}", "", "```text", text.rstrip(), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    click.echo(render(), nl=False)
