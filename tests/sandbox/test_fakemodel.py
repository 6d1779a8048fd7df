"""The fake upstream model (tests/support/fakemodel.py) against the real SDKs, and the example model agents.

The SDKs run where agents run them: ``/usr/bin/python3`` with ``/usr/local/lib/acx-oci-sdk`` first on its path
(``scripts/install-sdk.sh``), in a subprocess (:mod:`tests.support.sdk`). Anthropic Messages is also spoken
over plain urllib, so its wire format is checked byte for byte too.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.env import ROOT
from tests.support.fakemodel import (
    DEFAULT_KEY,
    Fail,
    FakeModel,
    ModelRequest,
    SlowStream,
    count_tokens,
    files_answer,
    solve_from_reference,
)
from tests.support.sdk import run_sdk, sdk_python

AGENTS = ROOT / "testdata" / "agents"
BENCH_PY = ROOT / "testdata" / "bench-py"


def post(url: str, body: Any, headers: dict[str, str] | None = None, method: str = "POST"
         ) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data if method != "GET" else None, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def sse(raw: bytes) -> list[tuple[str | None, str]]:
    out = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        event = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        out.append((event, "\n".join(data)))
    return out


def bearer(key: str = DEFAULT_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def chat(model: str = "m", text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


# --- the openai SDK -------------------------------------------------------------------------------------------

OPENAI_SNIPPET = r'''
import json, openai
c = openai.OpenAI(max_retries=0)
out = {}
r = c.chat.completions.create(model="gpt-test", messages=[{"role": "system", "content": "be brief"},
                                                           {"role": "user", "content": "say hello world"}])
out["chat"] = {"text": r.choices[0].message.content, "finish": r.choices[0].finish_reason, "model": r.model,
               "usage": [r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens]}
s = c.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "stream please"}],
                              stream=True, stream_options={"include_usage": True})
chunks = [[ch.choices[0].delta.content if ch.choices else None, ch.usage.total_tokens if ch.usage else None]
          for ch in s]
out["chat_stream"] = chunks
r = c.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "x"}], max_tokens=2)
out["chat_truncated"] = [r.choices[0].message.content, r.choices[0].finish_reason, r.usage.completion_tokens]
r = c.responses.create(model="gpt-test", instructions="be brief", input="one two three")
out["responses"] = {"text": r.output_text, "status": r.status,
                    "usage": [r.usage.input_tokens, r.usage.output_tokens, r.usage.total_tokens]}
s = c.responses.create(model="gpt-test", input=[{"role": "user", "content": [{"type": "input_text", "text": "q"}]}],
                       stream=True)
events = [[e.type, getattr(e, "delta", None)] for e in s]
out["responses_stream"] = events
with c.responses.stream(model="gpt-test", input="q") as st:
    for _ in st:
        pass
    final = st.get_final_response()
out["responses_final"] = [final.output_text, final.usage.output_tokens]
try:
    openai.OpenAI(api_key="wrong", max_retries=0).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "x"}])
except openai.AuthenticationError as exc:
    out["wrong_key"] = [exc.status_code, exc.body]
print(json.dumps(out))
'''


@pytest.mark.parametrize("framing,compress", [("chunked", False), ("close", True)])
def test_openai_sdk_chat_and_responses(framing: str, compress: bool) -> None:
    sdk_python()
    answer = "hello there world"
    with FakeModel(script=answer, key="sk-up", stream_framing=framing, gzip=compress) as fm:  # type: ignore[arg-type]
        out = run_sdk(OPENAI_SNIPPET, {"OPENAI_BASE_URL": fm.base_url, "OPENAI_API_KEY": "sk-up"})
        reqs = fm.requests
    assert out["chat"] == {"text": answer, "finish": "stop", "model": "gpt-test", "usage": [5, 3, 8]}
    texts = [t for t, _ in out["chat_stream"]]
    assert texts[0] == "" and "".join(t or "" for t in texts) == answer
    assert texts[1:4] == ["hello ", "there ", "world"]  # one SSE event per word: the SDK yields each
    assert out["chat_stream"][-1] == [None, 2 + 3]  # the usage chunk: no choices
    assert out["chat_truncated"] == ["hello there", "length", 2]
    assert out["responses"] == {"text": answer, "status": "completed", "usage": [5, 3, 8]}
    types = [t for t, _ in out["responses_stream"]]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert "".join(d for t, d in out["responses_stream"] if t == "response.output_text.delta") == answer
    assert out["responses_final"] == [answer, 3]
    assert out["wrong_key"][0] == 401 and out["wrong_key"][1]["code"] == "invalid_api_key"
    # what arrived: every request, the SDK's own headers (lower-case names), the exact body bytes
    assert [(r.method, r.path) for r in reqs] == [("POST", "/v1/chat/completions")] * 3 + \
        [("POST", "/v1/responses")] * 3 + [("POST", "/v1/chat/completions")]
    assert reqs[0].headers["authorization"] == "Bearer sk-up" and reqs[-1].headers["authorization"] == "Bearer wrong"
    assert reqs[0].headers["user-agent"].startswith("OpenAI/Python")
    assert reqs[1].json()["stream"] is True and reqs[1].json()["stream_options"] == {"include_usage": True}
    assert int(reqs[0].headers["content-length"]) == len(reqs[0].body)
    assert fm.answered == 6


def test_anthropic_sdk() -> None:
    python, path = sdk_python()
    probe = subprocess.run([python, "-c", f"import sys; sys.path.insert(0, {path!r}); import anthropic"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip("anthropic SDK not installed (scripts/install-sdk.sh installs it)")
    with FakeModel(script="one two three", key="sk-ant") as fm:
        out = run_sdk(r'''
import json, anthropic
c = anthropic.Anthropic(max_retries=0)
r = c.messages.create(model="claude-test", max_tokens=100, system="be nice",
                      messages=[{"role": "user", "content": "hi you"}])
out = {"json": [r.content[0].text, r.stop_reason, r.usage.input_tokens, r.usage.output_tokens]}
with c.messages.stream(model="claude-test", max_tokens=2, messages=[{"role": "user", "content": "hi"}]) as s:
    texts = list(s.text_stream)
    final = s.get_final_message()
out["stream"] = [texts, final.stop_reason, final.usage.output_tokens]
try:
    anthropic.Anthropic(api_key="wrong", max_retries=0).messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
except anthropic.AuthenticationError as exc:
    out["wrong_key"] = [exc.status_code, exc.body]
print(json.dumps(out))
''', {"ANTHROPIC_BASE_URL": fm.url, "ANTHROPIC_API_KEY": "sk-ant"})
        reqs = fm.requests
    assert out["json"] == ["one two three", "end_turn", 4, 3]
    assert out["stream"] == [["one ", "two"], "max_tokens", 2]
    assert out["wrong_key"][0] == 401 and out["wrong_key"][1]["error"]["type"] == "authentication_error"
    assert all(r.path == "/v1/messages" and "anthropic-version" in r.headers for r in reqs)
    # this SDK version sends the key as a bearer token, not x-api-key: a proxy must replace both
    assert reqs[0].headers.get("authorization") == "Bearer sk-ant" or reqs[0].headers.get("x-api-key") == "sk-ant"


# --- Anthropic Messages on the wire ---------------------------------------------------------------------------

def test_anthropic_messages_wire_format() -> None:
    hdrs = {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01"}
    body = {"model": "claude-test", "max_tokens": 50, "system": "sys words",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hello there"}]}]}
    with FakeModel(script=lambda r: f"you said {r.last_user}", key="sk-ant") as fm:
        st, h, raw = post(f"{fm.base_url}/messages", body, hdrs)
        assert st == 200 and h["content-type"] == "application/json" and "request-id" in h
        doc = json.loads(raw)
        assert doc["type"] == "message" and doc["role"] == "assistant" and doc["model"] == "claude-test"
        assert doc["content"] == [{"type": "text", "text": "you said hello there"}]
        assert doc["stop_reason"] == "end_turn"
        assert (doc["usage"]["input_tokens"], doc["usage"]["output_tokens"]) == (4, 4)
        st, h, raw = post(f"{fm.base_url}/messages", {**body, "stream": True}, hdrs)
        assert st == 200 and h["content-type"].startswith("text/event-stream")
        assert h.get("transfer-encoding") == "chunked"
        events = sse(raw)
        assert all(e == json.loads(d)["type"] for e, d in events)
        kinds = [e for e, _ in events]
        assert kinds[:3] == ["message_start", "content_block_start", "ping"] and kinds[-1] == "message_stop"
        assert kinds[-3:-1] == ["content_block_stop", "message_delta"]
        deltas = [json.loads(d)["delta"]["text"] for e, d in events if e == "content_block_delta"]
        assert deltas == ["you ", "said ", "hello ", "there"]
        delta = json.loads(events[-2][1])
        assert delta["usage"] == {"output_tokens": 4} and delta["delta"]["stop_reason"] == "end_turn"
        assert json.loads(events[0][1])["message"]["usage"]["input_tokens"] == 4
        # errors in Anthropic's format
        st, _, raw = post(f"{fm.base_url}/messages", body, {**hdrs, "x-api-key": "wrong"})
        assert st == 401 and json.loads(raw)["error"]["type"] == "authentication_error"
        assert json.loads(raw)["type"] == "error"
        st, _, raw = post(f"{fm.base_url}/messages", body, {"x-api-key": "sk-ant"})
        assert st == 400 and "anthropic-version" in json.loads(raw)["error"]["message"]
        st, _, raw = post(f"{fm.base_url}/messages", {**body, "max_tokens": None}, hdrs)
        assert st == 400 and json.loads(raw)["error"]["type"] == "invalid_request_error"
        st, _, raw = post(f"{fm.base_url}/messages/batches", body, hdrs)
        assert st == 404 and json.loads(raw)["error"]["type"] == "not_found_error"


# --- errors, switches, recording ------------------------------------------------------------------------------

def test_errors_in_openai_format_and_recording() -> None:
    with FakeModel(script=["first", Fail(429, "slow down", {"retry-after": "7"})], models={"m"}) as fm:
        st, _, raw = post(f"{fm.base_url}/chat/completions", chat(), bearer("nope"))
        assert st == 401 and json.loads(raw)["error"]["code"] == "invalid_api_key"
        st, _, raw = post(f"{fm.base_url}/chat/completions", chat(), {})
        assert st == 401
        st, _, raw = post(f"{fm.base_url}/files", {"purpose": "batch"}, bearer())
        assert st == 404 and json.loads(raw)["error"]["code"] == "unknown_url"
        st, _, raw = post(f"{fm.base_url}/chat/completions", b"", bearer(), method="GET")
        assert st == 405
        st, _, raw = post(f"{fm.base_url}/chat/completions", chat(model="other"), bearer())
        assert st == 404 and json.loads(raw)["error"]["code"] == "model_not_found"
        st, _, raw = post(f"{fm.base_url}/chat/completions", b"{not json", bearer())
        assert st == 400 and json.loads(raw)["error"]["type"] == "invalid_request_error"
        st, _, raw = post(f"{fm.base_url}/chat/completions", {"messages": []}, bearer())
        assert st == 400
        st, _, raw = post(f"{fm.base_url}/models", b"", bearer(), method="GET")
        assert st == 200 and [m["id"] for m in json.loads(raw)["data"]] == ["m"]
        # the script: item 0, then a scripted 429 (with its headers), then exhausted -> 500
        st, _, raw = post(f"{fm.base_url}/chat/completions", chat(), bearer())
        assert st == 200 and json.loads(raw)["choices"][0]["message"]["content"] == "first"
        st, h, raw = post(f"{fm.base_url}/chat/completions", chat(), bearer())
        assert st == 429 and h["retry-after"] == "7" and json.loads(raw)["error"]["message"] == "slow down"
        st, _, raw = post(f"{fm.base_url}/chat/completions", chat(), bearer())
        assert st == 500 and "exhausted" in json.loads(raw)["error"]["message"]
        assert fm.answered == 1
        # anything at all is recorded as it arrived: CONNECT, absolute-URI targets, odd methods
        for line in (b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
                     b"POST http://evil.example/v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\n"
                     b"Content-Length: 2\r\nConnection: close\r\n\r\n{}",
                     b"PROPFIND /v1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"):
            with socket.create_connection((fm.host, fm.port), timeout=5) as s:
                s.sendall(line)
                assert s.recv(100).startswith(b"HTTP/1.1 401")
        reqs = fm.requests
    assert [r.method for r in reqs[-3:]] == ["CONNECT", "POST", "PROPFIND"]
    assert reqs[-2].path == "http://evil.example/v1/chat/completions" and reqs[-2].body == b"{}"
    assert reqs[-2].headers["host"] == "evil.example"
    assert reqs[0].headers["authorization"] == "Bearer nope" and "authorization" not in reqs[1].headers
    assert reqs[0].json() == chat()


def test_fail_with_answers_every_request() -> None:
    with FakeModel(fail_with=503) as fm:
        for path, hdrs in (("/v1/chat/completions", bearer()), ("/v1/files", {}),
                           ("/v1/messages", {"anthropic-version": "2023-06-01"})):
            st, _, raw = post(fm.url + path, chat(), hdrs)
            assert st == 503, path
            err = json.loads(raw)["error"]
            assert err["type"] == ("overloaded_error" if path == "/v1/messages" else "server_error")
        assert fm.answered == 0 and len(fm.requests) == 3


def test_token_counts_are_words_and_limits_truncate() -> None:
    assert count_tokens("  a bb\n ccc\t") == 3 and count_tokens("") == 0
    seen: list[ModelRequest] = []

    def script(req: ModelRequest) -> str:
        seen.append(req)
        return "w1 w2 w3 w4 w5"

    with FakeModel(script=script) as fm:
        body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "a b"},
                                                                        {"type": "text", "text": "c"}]},
                                           {"role": "system", "content": "s t"}], "max_completion_tokens": 3}
        st, _, raw = post(f"{fm.base_url}/chat/completions", body, bearer())
        doc = json.loads(raw)
        assert doc["choices"][0] == {"index": 0, "message": {"role": "assistant", "content": "w1 w2 w3",
                                                             "refusal": None, "annotations": []},
                                     "logprobs": None, "finish_reason": "length"}
        assert doc["usage"]["prompt_tokens"] == 5 and doc["usage"]["completion_tokens"] == 3
        assert doc["usage"]["total_tokens"] == 8
        st, _, raw = post(f"{fm.base_url}/responses", {"model": "m", "input": "x", "max_output_tokens": 1},
                          bearer())
        doc = json.loads(raw)
        assert st == 200 and doc["status"] == "incomplete" and doc["output"][0]["content"][0]["text"] == "w1"
        assert doc["incomplete_details"] == {"reason": "max_output_tokens"}
    assert seen[0].messages == [{"role": "system", "content": "s t"}, {"role": "user", "content": "a b\nc"}]
    assert seen[0].api == "chat" and seen[1].api == "responses" and [r.index for r in seen] == [0, 1]


def test_chunked_request_bodies_and_gzip() -> None:
    with FakeModel(script="zipped answer", gzip=True) as fm:
        conn = http.client.HTTPConnection(fm.host, fm.port, timeout=10)
        body = json.dumps(chat()).encode()
        conn.request("POST", "/v1/chat/completions", body=iter([body[:7], body[7:]]), encode_chunked=True,
                     headers={**bearer(), "Content-Type": "application/json", "Accept-Encoding": "gzip"})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Encoding") == "gzip"
        doc = json.loads(gzip.decompress(resp.read()))
        assert doc["choices"][0]["message"]["content"] == "zipped answer"
        # keep-alive: the same connection serves the next request
        conn.request("POST", "/v1/chat/completions", body=body, headers={**bearer(), "Content-Type": "x"})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Encoding") is None
        resp.read()
        conn.close()
        assert fm.requests[0].body == body and fm.requests[0].headers["transfer-encoding"] == "chunked"


# --- slow streams ---------------------------------------------------------------------------------------------

def wait_for(cond: Any, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.01)


def agent_env(fm: FakeModel, ws: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("OPENAI_")}
    return {**base, "NO_PROXY": "*", "OPENAI_BASE_URL": fm.base_url, "OPENAI_API_KEY": DEFAULT_KEY,
            "ACX_MODEL_ID": "gpt-test", "ACX_WORKSPACE": str(ws), **extra}


def test_slow_stream_first_chunk_reaches_the_client_before_the_rest_is_sent(tmp_path: Path) -> None:
    python, _ = sdk_python()
    release = threading.Event()
    with FakeModel(script="alpha beta gamma delta", slow_stream=SlowStream(1, 30.0, release)) as fm:
        proc = subprocess.Popen([python, str(AGENTS / "llm_streaming_agent.py")], cwd=tmp_path,
                                env=agent_env(fm, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_for(fm.paused.is_set)

            def first_chunk_seen() -> bool:
                try:
                    doc = json.loads((tmp_path / "stream.json").read_text())
                except (OSError, ValueError):
                    return False
                return any(c["text"] == "alpha " for c in doc["chunks"])

            wait_for(first_chunk_seen)
            held = fm.sent
            assert fm.paused.is_set()
            # the server has sent the role chunk and the first word, nothing more, and the client has both
            assert [json.loads(t[6:])["choices"][0]["delta"].get("content") for _, _, t in held] == ["", "alpha "]
            time.sleep(0.2)
            assert len(fm.sent) == len(held)  # still held
            release.set()
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        sent = fm.sent
    assert proc.returncode == 0, err.decode()
    doc = json.loads((tmp_path / "stream.json").read_text())
    assert doc["done"] and doc["text"] == "alpha beta gamma delta"
    assert doc["usage"]["completion_tokens"] == 4
    assert doc["usage"]["total_tokens"] == doc["usage"]["prompt_tokens"] + 4
    first = next(c for c in doc["chunks"] if c["text"] == "alpha ")
    second_sent = sent[2][0]  # after the role chunk and "alpha "
    assert first["t"] < second_sent  # the monotonic clock is system-wide: one time line for both processes
    assert [c["text"] for c in doc["chunks"]][:5] == ["", "alpha ", "beta ", "gamma ", "delta"]


def test_slow_stream_without_event_waits_the_delay() -> None:
    with FakeModel(script="a b", slow_stream=(1, 0.3, None)) as fm:
        t0 = time.monotonic()
        st, _, raw = post(f"{fm.base_url}/responses", {"model": "m", "input": "x", "stream": True}, bearer())
        assert st == 200 and time.monotonic() - t0 >= 0.3
        deltas = [json.loads(d)["delta"] for e, d in sse(raw) if e == "response.output_text.delta"]
        assert deltas == ["a ", "b"]
        t_a = next(t for t, _, txt in fm.sent if '"delta": "a "' in txt)
        t_b = next(t for t, _, txt in fm.sent if '"delta": "b"' in txt)
        assert t_b - t_a >= 0.3


def test_stop_releases_held_streams_and_cuts_connections() -> None:
    fm = FakeModel(slow_stream=(0, 60.0, threading.Event()))
    got: dict[str, Any] = {}

    def client() -> None:
        try:
            got["r"] = post(f"{fm.base_url}/chat/completions", chat(stream=True), bearer())
        except Exception as exc:
            got["r"] = exc

    t = threading.Thread(target=client)
    t.start()
    wait_for(fm.paused.is_set)
    t0 = time.monotonic()
    fm.stop()
    t.join(30)  # a backstop: a held stream would keep the client past it
    assert not t.is_alive()
    assert isinstance(got["r"], Exception) or got["r"][0] == 200, got  # cut, or ended by the release
    assert time.monotonic() - t0 >= 0
    fm.stop()  # idempotent


# --- the example agents ---------------------------------------------------------------------------------------

def test_solve_from_reference_knows_every_bench_py_task() -> None:
    solver = solve_from_reference(BENCH_PY)
    for name, _, files in solver.tasks:
        prompt = (BENCH_PY / "tasks" / name / "prompt.md").read_text()
        req = ModelRequest("chat", "m", {}, [{"role": "system", "content": "sys"},
                                             {"role": "user", "content": f"# Task\n\n{prompt.strip()}\n\nfiles"}],
                           False, 0, {})
        answer = solver(req)
        assert solver.solved[-1] == name
        assert files and answer.endswith("```") and json.dumps({"files": files}, indent=1) in answer
    assert solver(ModelRequest("chat", "m", {}, [{"role": "user", "content": "unknown"}], False, 0, {})) \
        .endswith(files_answer({}, fenced=True))
    assert solver.solved[-1] is None


def test_llm_agent_writes_the_models_answer(tmp_path: Path) -> None:
    python, _ = sdk_python()
    task = BENCH_PY / "tasks" / "py-0001"
    ws = tmp_path / "ws"
    shutil.copytree(task / "workspace", ws)
    (tmp_path / "PROMPT.md").write_text((task / "prompt.md").read_text())
    solver = solve_from_reference(BENCH_PY)
    with FakeModel(script=solver, models={"gpt-test"}) as fm:
        res = subprocess.run([python, str(AGENTS / "llm_agent.py")], cwd=ws, capture_output=True, timeout=60,
                             env=agent_env(fm, ws, ACX_PROMPT_FILE=str(tmp_path / "PROMPT.md")))
        reqs = fm.requests
    assert res.returncode == 0, res.stderr.decode()
    assert solver.solved == ["py-0001"]
    assert (ws / "solution.py").read_text() == (task / "reference" / "solution.py").read_text()
    body = reqs[0].json()
    assert body["model"] == "gpt-test" and "test_visible.py" in body["messages"][1]["content"]
    assert reqs[0].headers["authorization"] == f"Bearer {DEFAULT_KEY}"


def test_llm_agent_parses_and_confines_answers(tmp_path: Path) -> None:
    python, _ = sdk_python()
    answer = 'Sure.\n```json\n{"files": {"a/b.py": "x = 1\\n", "../escape.py": "no", "/abs.py": "no", ' \
             '".hidden": "no", "n.py": 3}}\n```\ntrailing prose {with braces}'
    (tmp_path / "P.md").write_text("do it")
    with FakeModel(script=answer) as fm:
        res = subprocess.run([python, str(AGENTS / "llm_agent.py")], cwd=tmp_path, capture_output=True, timeout=60,
                             env=agent_env(fm, tmp_path, ACX_PROMPT_FILE=str(tmp_path / "P.md")))
    assert res.returncode == 0, res.stderr.decode()
    assert (tmp_path / "a" / "b.py").read_text() == "x = 1\n"
    assert not (tmp_path.parent / "escape.py").exists() and not Path("/abs.py").exists()
    assert not (tmp_path / ".hidden").exists() and not (tmp_path / "n.py").exists()


def test_looping_agent_stops_at_the_first_429(tmp_path: Path) -> None:
    python, _ = sdk_python()
    with FakeModel(script=lambda r: "two words" if r.index < 5 else Fail(429, "budget spent")) as fm:
        res = subprocess.run([python, str(AGENTS / "llm_looping_agent.py")], cwd=tmp_path, capture_output=True,
                             timeout=60, env=agent_env(fm, tmp_path))
        n_requests = len(fm.requests)
    assert res.returncode == 0, res.stderr.decode()
    doc = json.loads((tmp_path / "calls.json").read_text())
    assert doc["ok"] == 5 and doc["attempted"] == 6 and doc["done"] is True
    assert doc["stopped"]["status"] == 429 and doc["stopped"]["error"] == "RateLimitError"
    assert doc["completion_tokens"] == 10 and doc["statuses"] == {"200": 5, "429": 1}
    assert n_requests == 6  # max_retries=0: the SDK did not retry the 429


def test_hostile_agent_bare_run_touches_nothing(tmp_path: Path) -> None:
    with FakeModel() as fm:
        res = subprocess.run(["/usr/bin/python3" if Path("/usr/bin/python3").exists() else "python3",
                              str(AGENTS / "llm_hostile_agent.py")], cwd=tmp_path, capture_output=True, timeout=60,
                             env={**agent_env(fm, tmp_path), "ACX_WORKSPACE": str(tmp_path)})
        assert fm.requests == []
    assert res.returncode == 0
    attempts = json.loads((tmp_path / "attempts.json").read_text())
    assert [a["name"] for a in attempts] == ["bare run"]
    dump = (tmp_path / "dump.txt").read_text()
    assert "bare run: would read" in dump and "=== /proc" not in dump
