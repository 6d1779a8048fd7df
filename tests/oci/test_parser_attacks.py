"""Attacks on the bounded parsers (review of the parsers merge): shapes that slipped past the caps.

* a UTF-16 JSON document hid its brackets from the byte-level depth scan (U+2200 is ``00 22`` in UTF-16-LE: the
  scan saw a quote) while ``json.loads`` read it nested 500 deep;
* a YAML alias inside the node it names (``require: &r {allOf: [*r]}``) built a structure that contains itself:
  ``policy check`` died in schema validation with a RecursionError ("internal error");
* YAML integers were unbounded (JSON's are not) and a long sexagesimal one (``1:59:59:…``) took quadratic time
  (600 KB: 12 s); ``.nan``/``.inf`` passed where JSON refuses NaN/Infinity.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from acx_oci.errors import ShapeError, UsageError
from acx_oci.jsonio import MAX_DEPTH, loads, parse_json, parse_yaml

from ..support.cli import cli
from ..support.httpserver import QuietHTTPServer

# --------------------------------------------------------------------------- JSON


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32"])
def test_a_utf16_document_cannot_hide_its_nesting_from_the_depth_scan(encoding: str) -> None:
    deep = 500
    doc = '["\u2200", ' + "[" * deep + "]" * deep + "]"
    with pytest.raises(ShapeError, match=f"nested deeper than {MAX_DEPTH}"):
        parse_json(doc.encode(encoding), "credential")
    shallow = '{"a": ["\u2200", [[1]]]}'
    assert loads(shallow.encode(encoding)) == {"a": ["\u2200", [[1]]]}  # what json.loads reads, still read
    assert loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a UTF-8 BOM as json.loads(bytes) allows it


# --------------------------------------------------------------------------- YAML


@pytest.mark.parametrize("text", ["a: &a [*a]", "a: &a {b: [1, {c: *a}]}", "&a [*a]", "a: &a {<<: *a}"])
def test_a_yaml_alias_inside_its_own_anchor_is_refused(text: str) -> None:
    with pytest.raises(ShapeError, match="inside the node it names"):
        parse_yaml(text, "policy file")


def test_a_self_containing_policy_is_one_line_not_an_internal_error(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: [a]\n    require: &r {allOf: [*r]}\n")
    trust = tmp_path / "trust.yaml"
    trust.write_text("publishers: []\n")
    res = cli("policy", "check", "oci:/nonexistent:1", "--policy", policy, "--trust", trust)
    assert res.exit_code == 2, res.output
    assert "schema_invalid" in res.output and "internal error" not in res.output
    assert parse_yaml("a: &x [1, {b: 2}]\nc: [*x, *x]\nd: {<<: {e: 1}}", "t") == {  # ordinary aliases still work
        "a": [1, {"b": 2}], "c": [[1, {"b": 2}], [1, {"b": 2}]], "d": {"e": 1}}


@pytest.mark.parametrize("text", [
    "a: 1" + ":59" * 60_000,  # sexagesimal: 180 KB (took 1.2 s, quadratic, before the bound)
    "a: 0x" + "f" * 17,
    "a: 18446744073709551617",
    "a: -0b" + "1" * 70,
    "a: .nan", "a: -.inf", "a: 1.0e+400",
], ids=["sexagesimal", "hex", "decimal", "binary", "nan", "inf", "overflow"])
def test_yaml_numbers_are_bounded_as_json_numbers_are(text: str) -> None:
    with pytest.raises(UsageError, match="expected YAML"):
        parse_yaml(text, "trust file")


def test_ordinary_yaml_numbers_still_read() -> None:
    assert parse_yaml("a: 0x10\nb: 1:30\nc: -1.5e+3\nd: 18446744073709551616\ne: 017\nversion: 1.10", "t") == {
        "a": 16, "b": 90, "c": -1500.0, "d": 2**64, "e": 15, "version": "1.10"}


# --------------------------------------------------------------------------- lone surrogates


@pytest.mark.parametrize("raw", [b'{"a": "\\ud800"}', b'{"\\uDFFF": 1}', b'["x\\udc00y"]', b'["\\ude00\\ud83d"]',
                                 b'["\xed\xa0\x80"]', '["\ud800"]'])
def test_a_lone_surrogate_in_json_is_malformed(raw: bytes | str) -> None:
    with pytest.raises(UsageError, match="lone surrogate"):
        parse_json(raw, "referrers index")
    with pytest.raises(ValueError):  # callers that catch ValueError (registry client, layout) still do
        loads(raw, ijson=False)


def test_paired_surrogates_and_escaped_backslashes_still_read() -> None:
    assert loads(b'["\\ud83d\\ude00", "\\\\ud800", "\\u00e9"]') == ["\U0001f600", "\\ud800", "\u00e9"]


@pytest.mark.parametrize("text", ['a: "\\ud800"', '"\\udc00": 1', "a: [\"x\\udfffy\"]"])
def test_a_lone_surrogate_in_yaml_is_malformed(text: str) -> None:
    with pytest.raises(UsageError, match="lone surrogate"):
        parse_yaml(text, "trust file")
    assert parse_yaml('a: "\\U0001F600\\u00e9"', "t") == {"a": "\U0001f600\u00e9"}


# --------------------------------------------------------------------------- agent cards


@pytest.mark.parametrize("signatures", [5, True, "abc", {"protected": "x"}, [5, None, {"protected": 7}]])
def test_an_agent_card_with_malformed_signatures_is_not_verified_not_an_internal_error(
        tmp_path: Path, signatures: object) -> None:
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"name": "x", "signatures": signatures}))
    res = cli("agent-card", "verify", card)
    assert res.exit_code == 1, (res.output, res.exception)
    assert "NOT VERIFIED" in res.output and "internal error" not in res.output


# --------------------------------------------------------------------------- token responses


class _TokenRegistry(BaseHTTPRequestHandler):
    """A registry that wants a bearer token, and a token service that hands out ``token``."""

    token = ""

    def do_GET(self) -> None:
        if self.path.startswith("/token"):
            body = json.dumps({"token": self.token}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(401)
        self.send_header("WWW-Authenticate", f'Bearer realm="http://127.0.0.1:{self.server.server_address[1]}/token",'
                                             'service="x",scope="repository:a/b:pull"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_HEAD = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("token", ["\u20acuro", "a\u2028b", "tok en"])
def test_a_token_that_cannot_go_into_a_header_is_a_registry_error(token: str) -> None:
    """A '€' in the token died in http.client's latin-1 header encoding: "internal error: UnicodeEncodeError"."""
    handler = type("H", (_TokenRegistry,), {"token": token})
    server = QuietHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        res = cli("inspect", f"127.0.0.1:{server.server_address[1]}/a/b:1", "--plain-http")
    finally:
        server.shutdown()
        server.server_close()
    assert res.exit_code == 3, (res.output, res.exception)
    assert "internal error" not in res.output and "token" in res.output


@pytest.mark.parametrize("text", ['a: !!bool maybe', 'a: !!timestamp nope', 'a: !!float ""', 'a: !!int',
                                  'failClosed: !!bool x'])
def test_an_explicit_yaml_tag_its_constructor_cannot_take_is_malformed(text: str, tmp_path: Path) -> None:
    """PyYAML's constructors raise KeyError/AttributeError/IndexError there: "internal error" from a trust file."""
    with pytest.raises(UsageError, match="expected YAML"):
        parse_yaml(text, "trust file")
    trust = tmp_path / "trust.yaml"
    trust.write_text(f"publishers: []\nstatus:\n  {text.replace('a: ', 'failClosed: ')}\n")
    res = cli("resolve", "oci:/nonexistent:1", "--trust", trust)
    assert res.exit_code == 2 and "expected YAML" in res.output, res.output
