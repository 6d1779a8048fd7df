"""Parsing JSON from outside with one-line errors, and JSON Schema checks (pure: no files).

Every document read at a boundary goes through here so that malformed input
is a :class:`UsageError` naming what it was, never a traceback. Reading the
bytes from disk is :mod:`acx_oci.files`'s job.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from acx_oci.errors import DuplicateMemberError, SchemaError, UsageError

MAX_DOCUMENT_BYTES = 16 * 1024 * 1024


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateMemberError(key)
        out[key] = value
    return out


def loads_ijson(raw: bytes | str) -> Any:
    """``json.loads`` that refuses duplicate member names (raises :class:`DuplicateMemberError`, a ValueError)."""
    return json.loads(raw, object_pairs_hook=_unique_members)


def parse_json(raw: bytes | str, what: str) -> Any:
    """Parse JSON from outside as I-JSON; malformed input is a UsageError naming ``what``.

    Duplicate member names are a :class:`SchemaError` (``schema_invalid``): two readers of
    ``{"acx:acxLevel": 5, "acx:acxLevel": 40}`` may each see a different level.
    """
    try:
        return loads_ijson(raw)
    except DuplicateMemberError as exc:
        raise DuplicateMemberError(exc.name, f"{what}: schema_invalid") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what}: expected JSON, found malformed input ({exc})") from exc


@cache
def schema(name: str) -> dict[str, Any]:
    """Load a JSON Schema shipped in ``acx_oci/schemas``."""
    text = resources.files("acx_oci.schemas").joinpath(name).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


_DRAFT7_UNSUPPORTED = frozenset({"unevaluatedProperties", "unevaluatedItems", "dependentRequired",
                                 "dependentSchemas", "$dynamicRef", "$dynamicAnchor", "minContains", "maxContains"})


def _to_draft7(node: Any) -> Any:
    """The same constraints in draft-07 words (``prefixItems`` -> array ``items``), or KeyError."""
    if isinstance(node, list):
        return [_to_draft7(x) for x in node]
    if not isinstance(node, dict):
        return node
    if _DRAFT7_UNSUPPORTED & node.keys():
        raise KeyError("schema uses a keyword draft-07 lacks")
    out = {k: _to_draft7(v) for k, v in node.items() if k not in ("$schema", "prefixItems", "items")}
    if "prefixItems" in node:
        out["items"] = _to_draft7(node["prefixItems"])
        if "items" in node:
            out["additionalItems"] = _to_draft7(node["items"])
    elif "items" in node:
        out["items"] = _to_draft7(node["items"])
    return out


@cache
def validator(schema_name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(schema_name))


@cache
def _fast_check(schema_name: str) -> Callable[[Any], Any] | None:
    """A compiled (fastjsonschema) validator for the same schema, about 10x faster.

    It only answers "valid": any doubt goes to ``jsonschema`` (the reference,
    which also words the error). None when the schema can't be expressed.
    """
    try:
        import fastjsonschema

        draft7 = _to_draft7(schema(schema_name))
        draft7["$schema"] = "http://json-schema.org/draft-07/schema#"
        compiled: Callable[[Any], Any] = fastjsonschema.compile(draft7)
        return compiled
    except Exception:  # an unsupported schema or library: the reference validator alone
        return None


def first_error(instance: Any, schema_name: str) -> jsonschema.ValidationError | None:
    """None when ``instance`` is valid; else the most relevant error (jsonschema's best_match)."""
    fast = _fast_check(schema_name)
    if fast is not None:
        try:
            fast(instance)
            return None
        except Exception:  # invalid (or undecidable) by the fast path: ask the reference
            pass
    error: jsonschema.ValidationError | None = jsonschema.exceptions.best_match(
        validator(schema_name).iter_errors(instance))
    return error


def validate(instance: Any, schema_name: str, what: str) -> None:
    """Validate against a packaged schema; the first error becomes one line."""
    error = first_error(instance, schema_name)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        if error.validator == "type":  # don't echo the (possibly large or secret) value itself
            message = f"expected {error.validator_value}, found {type(error.instance).__name__}"
        else:
            message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        raise SchemaError(f"{what}: invalid at {where}: {message}")
