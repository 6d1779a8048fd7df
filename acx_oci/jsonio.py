"""Parsing JSON from outside with one-line errors, and JSON Schema checks (pure: no files).

Every document read at a boundary goes through here so that malformed input
is a :class:`UsageError` naming what it was, never a traceback. Reading the
bytes from disk is :mod:`acx_oci.files`'s job.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from itertools import accumulate
from typing import Any

import jsonschema
import orjson
import yaml

from acx_oci.errors import DuplicateMemberError, SchemaError, ShapeError, UsageError

MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
#: How deep any document from outside may nest (objects and arrays). Far below Python's recursion
#: limit (1000) so that every walker after the parser — schema validation, JCS, our own code — is safe
#: too; a level credential nests 6 levels, the deepest conformance vector in shared/vectors 10.
MAX_DEPTH = 64
#: A YAML document's size with every alias expanded (billion laughs): more nodes than this is refused.
MAX_YAML_NODES = 1_000_000
#: Integers beyond this magnitude are refused (no field here needs more than 64 bits; a float() of a
#: 4,000-digit integer would raise OverflowError wherever it lands).
MAX_INT_MAGNITUDE = 2**64
_MAX_INT_TEXT = 100  # characters of a YAML integer (2**64 in binary with a sign and a few underscores fits)

_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
for _open in b"[{":
    _STEP[_open] = 1
for _close in b"]}":
    _STEP[_close] = -1
#: brackets to parentheses (their kind does not change a depth) and quotes kept; everything else deleted
_TO_PARENS = bytes.maketrans(b"[]{}", b"()()")
_NOT_PARENS_OR_QUOTES = bytes(b for b in range(256) if b not in b'[]{}"')


def nesting_depth(raw: bytes | str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings, without parsing (all in C: replace, split, translate).

    With escaped backslashes and escaped quotes removed, every quote left delimits a string, so the text
    outside strings is every other piece between quotes; an unterminated string runs to the end (where the
    decoder stops with an error too, before it could descend into any bracket inside it). A backslash
    outside a string is malformed JSON: the decoder stops there, and the text before it is counted exactly.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(data.split(b'"')[0::2]).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_depth(raw: bytes | str, what: str) -> None:
    """Refuse a document nested deeper than :data:`MAX_DEPTH` before anything parses it."""
    if isinstance(raw, str):
        few = raw.count("[") + raw.count("{") <= MAX_DEPTH
    else:
        few = raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH
    if not few and nesting_depth(raw) > MAX_DEPTH:  # (few brackets cannot nest too deep: no scan needed)
        raise ShapeError(f"{what}: schema_invalid: nested deeper than {MAX_DEPTH} levels")


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateMemberError(key)
        out[key] = value
    return out


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    value = int(text)
    if abs(value) > MAX_INT_MAGNITUDE:
        raise ValueError(f"integer {text[:40]}… is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(raw: bytes | str, what: str = "document", *, ijson: bool = True) -> Any:
    """THE parser for JSON from outside: depth-checked first, then parsed with bounded numbers.

    Raises :class:`ShapeError` (too deep, or the parser ran out of memory or stack),
    :class:`DuplicateMemberError` (with ``ijson``) — both ValueErrors and SchemaErrors — or a
    plain ``ValueError``/``UnicodeDecodeError`` for malformed input. ``NaN``/``Infinity`` and
    overflowing numbers are malformed here (RFC 8259 and I-JSON have no such numbers).
    """
    strict = False  # decoded strictly: no surrogate can be in the text itself, only escaped
    if isinstance(raw, (bytes, bytearray)):
        # json.loads reads UTF-16/32 bytes too; the depth scan works on UTF-8, where a code unit such as U+2200
        # (00 22 in UTF-16-LE) cannot pass for a quote and hide the brackets after it. Decode first, as json does.
        data, encoding = raw, json.detect_encoding(raw)
        try:
            raw, strict = data.decode(encoding), True
        except UnicodeDecodeError:
            raw = data.decode(encoding, "surrogatepass")
    check_depth(raw, what)
    try:
        doc = json.loads(raw, object_pairs_hook=_unique_members if ijson else None, parse_float=_finite,
                         parse_int=_bounded_int, parse_constant=_no_constant)
    except (RecursionError, MemoryError):
        raise ShapeError(f"{what}: schema_invalid: too deep or too large to parse") from None
    if _may_hold_surrogate(raw, strict) and _holds_lone_surrogate(doc):
        raise ValueError("a string holds a lone surrogate (\\ud800-\\udfff unpaired): not UTF-8 text (RFC 7493)")
    return doc


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _may_hold_surrogate(text: str, decoded_strictly: bool = False) -> bool:
    """A \\uD800-\\uDFFF escape (paired or not), or a surrogate already in the text: only then is the parsed
    value walked. (The strict UTF-8 encode finds a raw surrogate ten times faster than a character class.)"""
    if "\\u" in text and _ESCAPED_SURROGATE.search(text):
        return True
    if decoded_strictly:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")  # (a pair decodes to one code point: any left is unpaired)


def _holds_lone_surrogate(doc: Any) -> bool:
    """Whether any key or string holds an unpaired surrogate: Python keeps one, but no UTF-8 encoder will
    (a referrer index entry with one crashed the next writer of that index with UnicodeEncodeError)."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return True
        elif isinstance(node, dict):
            stack += node.keys()
            stack += node.values()
        elif isinstance(node, list):
            stack += node
    return False


def as_object(value: Any) -> dict[str, Any]:
    """A member that must be an object, as one (anything else reads as absent): no AttributeError on ``.get``."""
    return value if isinstance(value, dict) else {}


def as_array(value: Any) -> list[Any]:
    """A member that must be an array, as one (anything else reads as absent): no TypeError on iteration."""
    return value if isinstance(value, list) else []


def loads_ijson(raw: bytes | str) -> Any:
    """:func:`loads` as I-JSON (refuses duplicate member names: :class:`DuplicateMemberError`, a ValueError)."""
    return loads(raw)


def loads_claims(raw: bytes) -> Any | None:
    """A quicker parse of a document read only for what it *claims* (which claim, issuer and time it says
    it has, to order candidates); None when only the strict :func:`loads` may read it (then use that).

    orjson (Rust; strict UTF-8, no BOM, no lone surrogate, no NaN) and the same depth bound as :func:`loads`
    (a lax tree nested 900 deep crashed the grouping with RecursionError; a surrogate in a status URL crashed
    SQLite), but no Python hooks: a third of the time of ``json.loads`` with them, which matters for the 999
    superseded credentials of a 1,000-attestation resolve. What it lets through that :func:`loads` refuses (a
    duplicate name, the last wins here; an integer past 64 bits, a float here) is still a plain tree, and the
    strict parse refuses it when the document is judged.
    """
    if deeper_than(raw, MAX_DEPTH):  # first: orjson would build a tree up to 1,024 deep before it is refused
        return None
    try:
        return orjson.loads(raw)
    except (orjson.JSONDecodeError, MemoryError):
        return None


def deeper_than(raw: bytes, limit: int) -> bool:
    """Whether well-formed JSON nests deeper than ``limit``, in C but for one loop of at most ``limit``
    passes: strings dropped as in :func:`nesting_depth`, each pass deletes every innermost pair. (On
    malformed JSON the answer may be either: the parser after it refuses that anyway.)"""
    data = raw.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in raw else bytes(raw)
    parens = data.translate(_TO_PARENS, _NOT_PARENS_OR_QUOTES)
    if parens.count(b"(") <= limit:  # (few brackets, inside strings or not, cannot nest too deep)
        return False
    parens = parens.replace(b'""', b"")  # (two quotes with no text between: the parity of the rest is kept)
    if b'"' in parens:
        parens = b"".join(parens.split(b'"')[0::2])
    for _ in range(limit):
        if not parens:
            return False
        parens = parens.replace(b"()", b"")
    return bool(parens)


def too_many_containers(raw: bytes, limit: int) -> bool:
    """More than ``limit`` ``[`` and ``{`` (inside strings too: an overcount): 2 MiB of ``[],`` is 70 MB of
    Python lists once parsed, and a resolve keeps every credential it read until it has judged them."""
    return len(raw) > 2 * limit and raw.count(b"[") + raw.count(b"{") > limit  # (each needs two bytes)


def parse_json(raw: bytes | str, what: str) -> Any:
    """Parse JSON from outside as I-JSON; malformed input is a UsageError naming ``what``.

    Duplicate member names are a :class:`SchemaError` (``schema_invalid``): two readers of
    ``{"acx:acxLevel": 5, "acx:acxLevel": 40}`` may each see a different level. Too deep a
    document is a :class:`ShapeError` (``schema_invalid``).
    """
    try:
        return loads(raw, what)
    except ShapeError:
        raise
    except DuplicateMemberError as exc:
        raise DuplicateMemberError(exc.name, f"{what}: schema_invalid") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what}: expected JSON, found malformed input ({_one_line(exc)})") from None


def _one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
VERSION_KEYS = frozenset({"version", "benchmarkVersion", "minVersion"})


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with a nesting cap and an expanded-size cap (aliases count at full size).

    A plain number under a version key stays the text written: YAML 1.1 reads ``version: 1.10`` as the float 1.1
    (and ``2026.10`` as 2026.1), but a version is a name, not a quantity.
    """

    def __init__(self, stream: Any, what: str) -> None:
        super().__init__(stream)
        self._what = what
        self._depth = 0
        self._sizes: dict[int, int] = {}

    def _compose_bounded(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise ShapeError(f"{self._what}: schema_invalid: nested deeper than {MAX_DEPTH} levels")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if isinstance(node, yaml.ScalarNode) and _SURROGATE.search(node.value):  # from a "\ud800" escape
            raise ValueError("a string holds a lone surrogate (\\ud800-\\udfff unpaired): not UTF-8 text")
        if id(node) not in self._sizes:
            size = 1
            if isinstance(node, yaml.SequenceNode):
                size += sum(self._sizes.get(id(child), 1) for child in node.value)
            elif isinstance(node, yaml.MappingNode):
                size += sum(self._sizes.get(id(k), 1) + self._sizes.get(id(v), 1) for k, v in node.value)
            if size > MAX_YAML_NODES:
                raise ShapeError(f"{self._what}: schema_invalid: more than {MAX_YAML_NODES} nodes with aliases "
                                 "expanded")
            self._sizes[id(node)] = size
        return node

    def construct_bounded_int(self, node: yaml.ScalarNode) -> int:
        """An integer as JSON's reader bounds it; the length is checked first (PyYAML builds a long
        ``1:59:59:…`` sexagesimal integer in quadratic time: 600 KB of it took 12 s)."""
        if len(node.value) > _MAX_INT_TEXT:
            raise ValueError(f"integer {node.value[:40]}… is out of range")
        value: int = super().construct_yaml_int(node)
        if abs(value) > MAX_INT_MAGNITUDE:
            raise ValueError(f"integer {node.value[:40]}… is out of range")
        return value

    def construct_finite_float(self, node: yaml.ScalarNode) -> float:
        """No ``.nan``/``.inf`` (nor ``1e400``): the JSON reader refuses them too, and a NaN bound compares false
        with everything."""
        value: float = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise ValueError(f"number {node.value[:40]} is not finite")
        return value

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            anchor = self.peek_event().anchor  # type: ignore[no-untyped-call]
            if anchor in self.anchors and id(self.anchors[anchor]) not in self._sizes:
                # an alias inside the node it names: a structure that contains itself, on which every walker
                # (schema validation, JCS, json.dumps) recurses without end
                raise ShapeError(f"{self._what}: schema_invalid: alias *{anchor} is inside the node it names")
        return self._compose_bounded(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # A key written twice is last-wins in PyYAML and first-wins or an error elsewhere: in a policy or trust
        # file (`default: deny` ... `default: allow`) two readers would enforce different rules. Refused, as JSON's
        # duplicate members are (merge keys `<<` are YAML's explicit override and stay allowed).
        seen: set[tuple[str, str]] = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                if (key.tag, key.value) in seen:
                    raise DuplicateMemberError(key.value, self._what)
                seen.add((key.tag, key.value))
        for key, value in node.value:
            if (isinstance(key, yaml.ScalarNode) and key.value in VERSION_KEYS
                    and isinstance(value, yaml.ScalarNode) and value.tag in _NUMBER_TAGS and value.style is None):
                value.tag = "tag:yaml.org,2002:str"
        return super().construct_mapping(node, deep)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_bounded_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_finite_float)


def parse_yaml(raw: bytes | str, what: str) -> Any:
    """THE parser for YAML from outside (safe types only, nesting and alias expansion bounded)."""
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(raw, what)  # (the reader decodes and checks characters here already)
        return loader.get_single_data()
    except (ShapeError, DuplicateMemberError):
        raise
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise UsageError(f"{what}: expected YAML, found malformed input ({first})") from None
    except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError, UnicodeDecodeError) as exc:
        # a timestamp YAML matches but Python refuses; an explicit tag on a scalar its constructor cannot take
        # (``!!bool maybe``: KeyError, ``!!timestamp x``: AttributeError, ``!!int ""``: IndexError)
        raise UsageError(f"{what}: expected YAML, found malformed input ({_one_line(exc)})") from None
    except (RecursionError, MemoryError):
        raise ShapeError(f"{what}: schema_invalid: too deep or too large to parse") from None
    finally:
        if loader is not None:
            loader.dispose()


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
    """The compiled validator of a bundled schema, built once per name (compiling is the slow part)."""
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
