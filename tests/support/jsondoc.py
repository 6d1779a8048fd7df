"""Check a ``--json`` run's stdout against the schema the package ships for its command."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import jsonschema
from referencing import Registry as SchemaRegistry
from referencing import Resource

from acx_oci import reasons

SCHEMAS = files("acx_oci") / "schemas" / "cli"


def schema_for(command: str) -> dict[str, Any]:
    """The schema of ``acx-oci COMMAND --json`` (``"exam verify"`` -> ``exam-verify.schema.json``)."""
    doc: dict[str, Any] = json.loads((SCHEMAS / f"{command.replace(' ', '-')}.schema.json").read_text())
    return doc


def _registry() -> SchemaRegistry:
    envelope = json.loads((SCHEMAS / "envelope.schema.json").read_text())
    return SchemaRegistry().with_resource(envelope["$id"], Resource.from_contents(envelope))


def check_document(command: str, stdout: str, exit_code: int) -> dict[str, Any]:
    """stdout is one JSON document (json.loads refuses trailing text), valid against the command's schema,
    whose envelope agrees with the process's exit code; returns it."""
    assert stdout.strip(), f"{command}: nothing on stdout with --json (exit {exit_code})"
    doc: dict[str, Any] = json.loads(stdout)
    jsonschema.Draft202012Validator(schema_for(command), registry=_registry()).validate(doc)
    assert doc["exitCode"] == exit_code and doc["ok"] is (exit_code == 0), doc
    if not doc["ok"] and "code" in doc:
        assert doc["code"] in reasons.REASONS, doc["code"]
    return doc
