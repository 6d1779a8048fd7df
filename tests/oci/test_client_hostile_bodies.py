"""Bodies a hostile registry controls that the client used to read whole: a bearer token service's answer
and a redirect's body (``requests`` reads both without a cap), and error bodies nested past Python's
recursion limit. A small hostile HTTP server on loopback answers; it counts what it managed to send.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from acx_oci.errors import AcxError, NotFoundError, RegistryError
from acx_oci.oci import StoreOptions, open_store

from ..support.httpserver import QuietHTTPServer

HUGE = 256 * 1024 * 1024  # what the server offers to send
PIECE = b"x" * (1024 * 1024)
DIGEST = "sha256:" + "ab" * 32


class Hostile(QuietHTTPServer):

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.sent = 0
        self.mode = ""
        self.lock = threading.Lock()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Hostile
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _endless(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(HUGE))
        self.end_headers()
        try:
            for _ in range(HUGE // len(PIECE)):
                self.wfile.write(PIECE)
                with self.server.lock:
                    self.server.sent += len(PIECE)
        except OSError:
            pass
        self.close_connection = True

    def _small(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        mode = self.server.mode
        if self.path.startswith("/token"):
            self._endless(200, {"Content-Type": "application/json"})
        elif mode == "bearer":
            realm = f"http://{self.server.host}/token"
            self._small(401, b"{}", {"WWW-Authenticate": f'Bearer realm="{realm}",service="x",scope="y"'})
        elif mode == "redirect" and not self.path.startswith("/final"):
            self._endless(302, {"Location": "/final"})
        elif mode == "tags-loop":
            self.server.sent += 1
            self._small(200, b'{"name":"acx/x","tags":[]}', {"Link": '</v2/acx/x/tags/list?n=1000>; rel="next"'})
        elif mode == "referrers-loop" and "/referrers/" in self.path:
            self.server.sent += 1
            here = self.path.split("?", 1)[0]
            body = b'{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}'
            self._small(200, body, {"Content-Type": "application/vnd.oci.image.index.v1+json",
                                    "Link": f'<{here}>; rel="next"'})
        elif mode.startswith("tags-all-"):  # Debian's Distribution: n and last ignored, every tag, unsorted
            self.server.sent += 1
            count = int(mode.rsplit("-", 1)[1])
            names = [f"t{(i * 7919) % count:05d}" for i in range(count)][::-1]  # first > last: no order to rely on
            self._small(200, json.dumps({"name": "acx/x", "tags": names}).encode(),
                        {"Content-Type": "application/json"})
        elif mode.startswith("tags-first-n-"):  # honours n, ignores last: the same first page every time
            self.server.sent += 1
            n = int(parse_qs(urlsplit(self.path).query).get("n", ["100000"])[0])
            names = [f"t{i:05d}" for i in range(int(mode.rsplit("-", 1)[1]))][:n]
            self._small(200, json.dumps({"name": "acx/x", "tags": names}).encode(),
                        {"Content-Type": "application/json"})
        elif mode == "tags-repeats":  # a Link chain of pages that repeat 999 tags and add one
            self.server.sent += 1
            k = self.server.sent
            names = [f"r{i:03d}" for i in range(999)] + [f"new{k:05d}"]
            self._small(200, json.dumps({"name": "acx/x", "tags": names}).encode(),
                        {"Content-Type": "application/json", "Link": f'</v2/acx/x/tags/list?page={k}>; rel="next"'})
        elif mode == "tags-int":
            self._small(200, b'{"name":"acx/x","tags":5}', {"Content-Type": "application/json"})
        elif mode == "nested":
            self._small(500, b"[" * 60000, {"Content-Type": "application/json"})
        else:
            self._small(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"none"}]}')


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    server = Hostile()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def fetch(server: Hostile) -> None:
    store = open_store(f"{server.host}/acx/x:1", StoreOptions(timeout=20, retries=0))
    try:
        store.fetch_manifest_raw(DIGEST)
    finally:
        store.close()  # type: ignore[attr-defined]


def test_endless_token_response_is_refused_at_its_cap(hostile: Hostile) -> None:
    hostile.mode = "bearer"
    with pytest.raises(RegistryError, match="token response exceeds the 1048576-byte limit"):
        fetch(hostile)
    # what the socket buffers took beyond the cap, not the 256 MiB on offer
    assert hostile.sent < 32 * 1024 * 1024, hostile.sent


def test_redirect_body_is_not_read(hostile: Hostile) -> None:
    hostile.mode = "redirect"
    with pytest.raises(NotFoundError):  # the redirect was followed to /final: 404
        fetch(hostile)
    assert hostile.sent < 32 * 1024 * 1024, hostile.sent


def test_error_body_nested_past_the_recursion_limit_is_one_line(hostile: Hostile) -> None:
    hostile.mode = "nested"
    with pytest.raises(AcxError) as info:
        fetch(hostile)
    assert "HTTP 500" in str(info.value)


def test_tag_list_that_is_not_an_array_is_a_registry_error(hostile: Hostile) -> None:
    hostile.mode = "tags-int"
    store = open_store(f"{hostile.host}/acx/x:1", StoreOptions(timeout=20, retries=0))
    try:
        with pytest.raises(RegistryError, match="expected tags to be an array"):
            store.list_tags()  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("count", [1004, 1000])
def test_a_registry_that_ignores_n_and_last_lists_every_tag_once(hostile: Hostile, count: int) -> None:
    """Debian's Distribution sends all 1,004 tags, unsorted, whatever ``n`` and ``last`` say: that page is the
    whole listing (it once ran to 100,000 repeated tags and made a resolve of 1,000 attestations partial). With
    exactly ``n`` tags the follow-up page repeats them and ends the listing."""
    hostile.mode = f"tags-all-{count}"
    store = open_store(f"{hostile.host}/acx/x:1", StoreOptions(timeout=20, retries=0))
    try:
        tags, truncated = store.list_tags_bounded(100_000)  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]
    # with exactly n tags the follow-up page repeats them: complete, but indistinguishable from a registry that
    # honours n and ignores last, so reported cut (the safe side)
    assert (len(tags), len(set(tags)), truncated) == (count, count, count == 1000)
    assert hostile.sent == (1 if count > 1000 else 2)


def test_a_registry_that_honours_n_but_ignores_last_is_a_cut_listing(hostile: Hostile) -> None:
    """1,500 tags, the first 1,000 served whatever ``last`` says: the 500 it never shows (a newer attestation's
    tag among them, say) make the listing truncated, so a resolve says partial (it was silently complete)."""
    hostile.mode = "tags-first-n-1500"
    store = open_store(f"{hostile.host}/acx/x:1", StoreOptions(timeout=20, retries=0))
    try:
        tags, truncated = store.list_tags_bounded(100_000)  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]
    assert (len(tags), truncated, hostile.sent) == (1000, True, 2)


def test_pages_of_repeated_tags_count_against_the_bound(hostile: Hostile) -> None:
    """A Link chain whose pages repeat 999 tags and add one: the tags read count, not only the new ones, so a
    10,000-tag bound stops it after 10 pages (it took 1,000 requests, 12 MB)."""
    hostile.mode = "tags-repeats"
    store = open_store(f"{hostile.host}/acx/x:1", StoreOptions(timeout=20, retries=0))
    try:
        tags, truncated = store.list_tags_bounded(10_000)  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]
    assert truncated and len(tags) < 1_100 and hostile.sent <= 11, (len(tags), hostile.sent)


def test_an_empty_tag_page_linking_to_itself_ends_the_listing(hostile: Hostile) -> None:
    """Without a deadline (attest, the gateway) such a Link loop never ended; here a 5 s one would cut it."""
    from acx_oci.timeutil import Deadline, deadline_scope

    hostile.mode = "tags-loop"
    store = open_store(f"{hostile.host}/acx/x:1", StoreOptions(timeout=20, retries=0))
    try:
        with deadline_scope(Deadline.after(5)):
            assert store.list_tags_bounded(100) == ([], False)  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]
    assert hostile.sent == 1


def test_a_referrers_page_linking_to_itself_ends_the_listing_partial(hostile: Hostile) -> None:
    """It was followed 100 times (MAX_API_PAGES), each request up to --timeout, with no deadline in attest."""
    hostile.mode = "referrers-loop"
    store = open_store(f"{hostile.host}/acx/x:1", StoreOptions(timeout=20, retries=0))
    try:
        listing = store.referrers(DIGEST)
    finally:
        store.close()  # type: ignore[attr-defined]
    assert listing.descriptors == [] and listing.partial and listing.source == "api"
    assert hostile.sent == 1
