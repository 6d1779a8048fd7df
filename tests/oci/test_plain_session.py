"""The registry transport's session (acx_oci.net.session): no cookie jar, requests' header merge kept, and the
claims parse (acx_oci.jsonio.loads_claims) it feeds: orjson with our depth bound."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acx_oci.errors import NotFoundError
from acx_oci.jsonio import MAX_DEPTH, deeper_than, loads_claims, nesting_depth, parse_json
from acx_oci.net import PlainSession
from acx_oci.oci import parse_reference
from acx_oci.oci.registry.client import RegistryStore

from ..support.httpserver import QuietHTTPServer

SEEN: list[dict[str, str]] = []


class _SetsCookies(BaseHTTPRequestHandler):
    """Answers every GET with a Set-Cookie (and a redirect for /hop) and remembers the headers it was sent."""

    def do_GET(self) -> None:
        SEEN.append({k.lower(): v for k, v in self.headers.items()})
        if self.path == "/hop":
            self.send_response(307)
            self.send_header("Location", "/end")
        else:
            self.send_response(404)
        self.send_header("Set-Cookie", "session=abc123; Path=/")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def cookie_server() -> Iterator[str]:
    SEEN.clear()
    server = QuietHTTPServer(("127.0.0.1", 0), _SetsCookies)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_cookie_a_registry_sets_is_never_sent_back(cookie_server: str) -> None:
    """requests' Session would keep ``session=abc123`` and send it on every later request and redirect."""
    import requests

    plain = requests.Session()
    plain.get(f"http://{cookie_server}/a", timeout=5)
    plain.get(f"http://{cookie_server}/b", timeout=5)
    assert SEEN[-1].get("cookie") == "session=abc123"  # the default: the cookie rides along
    SEEN.clear()
    store = RegistryStore(parse_reference(f"{cookie_server}/c/r"))
    for _ in range(2):
        with pytest.raises(NotFoundError):
            store.fetch_manifest_raw("sha256:" + "0" * 64)
    s = PlainSession()
    s.get(f"http://{cookie_server}/a", timeout=5)
    s.get(f"http://{cookie_server}/hop", timeout=5)  # a redirect, then its target
    assert len(SEEN) == 5
    assert all("cookie" not in h for h in SEEN), SEEN
    assert len(s.cookies) == 0


def test_explicit_cookies_and_the_header_merge_are_requests_own(cookie_server: str) -> None:
    """A caller's own cookies still go out; a request header of None removes the session's, as in requests."""
    s = PlainSession()
    s.headers["User-Agent"] = "acx-oci"
    s.headers["X-Session"] = "kept"
    s.get(f"http://{cookie_server}/a", cookies={"mine": "1"}, timeout=5)
    s.get(f"http://{cookie_server}/b", headers={"X-Session": None, "X-Mine": "2"}, timeout=5)
    s.get(f"http://{cookie_server}/c", params={"n": "5"}, timeout=5)
    assert SEEN[0]["cookie"] == "mine=1" and SEEN[0]["x-session"] == "kept"
    assert "x-session" not in SEEN[1] and SEEN[1]["x-mine"] == "2" and SEEN[1]["user-agent"] == "acx-oci"
    assert "cookie" not in SEEN[1] and "cookie" not in SEEN[2]


def test_a_session_header_set_to_none_is_dropped_and_a_bytes_method_is_text() -> None:
    """Found by the attack review: the first raised InvalidHeader, the second sent ``B'GET'``."""
    import requests

    for session in (requests.Session(), PlainSession()):
        session.headers["X-Drop"] = None  # type: ignore[assignment]
        p = session.prepare_request(requests.Request("GET", "http://h.example/", headers={"X-Mine": "1"}))
        assert "X-Drop" not in p.headers and p.headers["X-Mine"] == "1"
        assert session.prepare_request(requests.Request(b"GET", "http://h.example/")).method == "GET"  # type: ignore[arg-type]


def test_the_claims_parse_refuses_what_the_strict_one_refuses_for_shape() -> None:
    """None (the strict parser decides) for: too deep, a lone surrogate escaped or raw, NaN, a BOM, UTF-16."""
    ok = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert loads_claims(ok) is not None
    for bad in (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), b'["\\ud800"]', b'["\\udc00x"]',
                b'["\xed\xa0\x80"]', b'{"a": NaN}', b'\xef\xbb\xbf{"a": 1}', '{"a": 1}'.encode("utf-16"),
                b'{"a": 1} trailing', b'{"a": "\xff"}'):
        assert loads_claims(bad) is None, bad
    # deep but inside strings: not nesting
    assert loads_claims(json.dumps({"a": "[" * 500, "b": "\\\"{" * 300}).encode()) is not None
    # what only the strict parse refuses is still a plain tree here
    assert loads_claims(b'{"a": 1, "a": 2}') == {"a": 2}
    assert isinstance(loads_claims(b'{"a": 123456789012345678901234567890}')["a"], float)  # type: ignore[index]


_json = st.recursive(st.none() | st.booleans() | st.integers(-10, 10) | st.text("[]{}\"\\ab", max_size=6),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text("[]{}\"\\k", max_size=4), inner, max_size=3), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(_json, st.integers(0, 12), st.booleans())
def test_deeper_than_agrees_with_the_exact_depth(value: object, limit: int, compact: bool) -> None:
    raw = json.dumps(value, separators=(",", ":") if compact else None).encode()
    assert deeper_than(raw, limit) == (nesting_depth(raw) > limit)
    assert loads_claims(raw) == (parse_json(raw, "doc") if nesting_depth(raw) <= MAX_DEPTH else None)
