"""One JSON document per ``--json`` run: the result inside an envelope, printed once, on success and failure.

A machine reading stdout must get JSON whatever happens, so no command prints its own document: a
command hands its result to :func:`emit_json`, and the ``acx-oci`` group prints it when the command
ends, with the envelope ``{schemaVersion, ok, exitCode, code?, message?}`` that only the group can
know (the exit code of a verdict, the reason code of an exception). The result's own fields stay at
the top level beside the envelope's, so readers of the older output keep working. The schemas are
in ``acx_oci/schemas/cli/`` (one per command, each an ``allOf`` with ``envelope.schema.json``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import click

#: The envelope's version: bumped when an envelope field changes meaning (result fields are the command's).
SCHEMA_VERSION = 1
ENVELOPE_KEYS = ("schemaVersion", "ok", "exitCode", "code", "message")
_KEY = "acx_oci.json"


@dataclass
class JsonRun:
    """What one command invocation will print: wanted once ``--json`` is seen, printed at most once."""

    wanted: bool = False
    result: dict[str, Any] = field(default_factory=dict)
    printed: bool = False


def envelope(result: Mapping[str, Any], exit_code: int, code: str | None = None,
             message: str | None = None) -> dict[str, Any]:
    """The document: envelope fields first, then the result's (which may not override them)."""
    doc: dict[str, Any] = {"schemaVersion": SCHEMA_VERSION, "ok": exit_code == 0, "exitCode": exit_code}
    if code is not None:
        doc["code"] = code
    if message is not None:
        doc["message"] = message
    doc.update((k, v) for k, v in result.items() if k not in ENVELOPE_KEYS)
    return doc


def _render(doc: Mapping[str, Any]) -> None:
    click.echo(json.dumps(doc, indent=2, sort_keys=False))


def begin(ctx: click.Context) -> JsonRun:
    """The run's record, made by the outermost group (``ctx.meta`` is shared with every sub-context)."""
    run: JsonRun = ctx.meta.setdefault(_KEY, JsonRun())
    return run


def current() -> JsonRun | None:
    """The record of the command running now, or None outside the ``acx-oci`` group."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.meta.get(_KEY)


def want_json() -> None:
    """``--json`` was given: the group prints a document however the command ends."""
    run = current()
    if run is not None:
        run.wanted = True


def emit_json(result: Mapping[str, Any]) -> None:
    """Hand the command's result to the group, which prints it (with its envelope) when the command ends.

    A second call adds to the first: there is still one document. Without ``--json`` (a command whose
    human output is a JSON document, as ``agent-card show``) the document is printed now, as it is;
    outside the group (a command invoked on its own) it is printed now, as a success.
    """
    run = current()
    if run is None:
        _render(envelope(result, 0))
    elif not run.wanted:
        _render(result)
    else:
        run.result.update(result)


def partial_json(result: Mapping[str, Any]) -> None:
    """What a failing command already knows, for the failure document (a no-op without ``--json``)."""
    run = current()
    if run is not None and run.wanted:
        run.result.update(result)


def finish(run: JsonRun, exit_code: int, code: str | None = None, message: str | None = None) -> None:
    """Print the document once, if ``--json`` was wanted; a later call (an outer handler) prints nothing."""
    if run.wanted and not run.printed:
        run.printed = True
        _render(envelope(run.result, exit_code, code, message))
