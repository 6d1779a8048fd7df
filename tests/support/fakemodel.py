"""A local upstream language model that speaks the providers' real wire formats, for model-egress tests.

There is no model to download here, so tests point the real SDKs (and the verifier's proxy) at this server::

    with FakeModel(script=lambda req: "hello " + req.model, key="sk-up") as fm:
        client = OpenAI(base_url=fm.base_url, api_key="sk-up")   # http://127.0.0.1:PORT/v1
        ...
        fm.requests[-1].headers["authorization"]                  # "Bearer sk-up"

It serves, on 127.0.0.1 (an ephemeral port) over HTTP/1.1 with keep-alive:

* OpenAI Chat Completions ``POST /v1/chat/completions`` — JSON, or with ``"stream": true`` server-sent events
  (``chat.completion.chunk`` deltas; a last chunk with ``usage`` and no choices when
  ``stream_options.include_usage``; then ``data: [DONE]``);
* OpenAI Responses ``POST /v1/responses`` — JSON, or SSE (``response.created`` … ``response.output_text.delta``
  … ``response.completed`` carrying the full response and its usage);
* Anthropic Messages ``POST /v1/messages`` — JSON, or SSE (``message_start``, ``content_block_*``, ``ping``,
  ``message_delta`` with ``usage.output_tokens``, ``message_stop``); the ``anthropic-version`` header and
  ``max_tokens`` are required, as on the real API;
* ``GET /v1/models`` (the models it accepts), and errors in each provider's own format: 401 for a wrong key
  (OpenAI: ``Authorization: Bearer``; Anthropic: ``x-api-key`` or ``Authorization: Bearer``), 404 for any other
  path or an unknown model (when ``models`` is given), 405, 400 for a malformed body, and any status on demand
  (``fail_with`` for every request, or a script answer :class:`Fail` for one).

Streams are sent with ``Transfer-Encoding: chunked`` (as the providers do), one HTTP chunk per SSE event,
each written straight to the socket; ``stream_framing="close"`` sends them close-delimited instead. Both work
with the openai SDK (httpx2). Each event's send time (``time.monotonic()``, which is system-wide, so
comparable with times taken by another process on this host, including a sandboxed one) is in :attr:`sent`.

Token counts are deterministic: :func:`count_tokens` is the number of whitespace-separated words. Input tokens
count every text of the request (system, instructions and all messages); output tokens count the answer.
A request's ``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens`` truncates the answer to that many
words (``finish_reason: "length"``, ``stop_reason: "max_tokens"``, Responses ``status: "incomplete"``).
Streams send one word (with its trailing whitespace) per delta, so the deltas concatenate to the answer.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

from acx_oci.egress import SuiteReferenceSolver as SuiteReferenceSolver
from acx_oci.egress.standin import files_answer as files_answer
from tests.support.httpserver import QuietHTTPServer

DEFAULT_KEY = "sk-acx-fake-upstream"
DEFAULT_ANSWER = "This is the fake model's answer."
MAX_BODY = 16 * 1024 * 1024
Api = Literal["chat", "responses", "messages"]


def count_tokens(text: str) -> int:
    """The fake model's tokenizer: whitespace-separated words."""
    return len(text.split())


def _pieces(text: str) -> list[str]:
    """Stream deltas: each word with its trailing whitespace (leading whitespace alone); they join to ``text``."""
    return re.findall(r"\S+\s*|\s+", text)


@dataclass(frozen=True)
class Received:
    """One HTTP request as it arrived: request-line method and target, headers (lower-case names; repeated
    headers joined with ``", "``), the body (de-chunked), and when (``time.monotonic()``)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class ModelRequest:
    """What a script is asked: one well-formed model request that passed the key check.

    ``messages`` is the request's text, normalised across the three APIs: ``[{"role", "content"}]`` with
    system text (chat ``system``/``developer`` messages, Responses ``instructions``, Anthropic ``system``)
    first as role ``"system"``, and every content part's text joined. ``index`` counts model requests
    (0 for the first one this server answered).
    """

    api: Api
    model: str
    body: dict[str, Any]
    messages: list[dict[str, str]]
    stream: bool
    index: int
    headers: dict[str, str]

    @property
    def prompt(self) -> str:
        """All the request's text, system first, joined by blank lines."""
        return "\n\n".join(m["content"] for m in self.messages)

    @property
    def last_user(self) -> str:
        users = [m["content"] for m in self.messages if m["role"] == "user"]
        return users[-1] if users else ""


@dataclass(frozen=True)
class Fail:
    """A script answer that makes this one request fail with ``status`` (body in the provider's format)."""

    status: int
    message: str = "the fake model was told to fail"
    headers: Mapping[str, str] = field(default_factory=dict)


Answer = str | Fail
Script = Callable[[ModelRequest], Answer] | Sequence[Answer] | str | None


@dataclass(frozen=True)
class SlowStream:
    """Stream ``first_chunks`` text deltas, then hold the rest until ``event`` is set or ``delay_seconds``
    pass (whichever comes first; no event: just the delay). :attr:`FakeModel.paused` is set while a stream
    is held, so a test can check that the first delta reached the client before the rest was sent."""

    first_chunks: int = 1
    delay_seconds: float = 30.0
    event: threading.Event | None = None


# --- provider error bodies ---------------------------------------------------------------------------------

_OPENAI_ERR = {400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
               403: ("invalid_request_error", "unsupported_country_region_territory"),
               404: ("invalid_request_error", "unknown_url"), 405: ("invalid_request_error", "method_not_allowed"),
               413: ("invalid_request_error", "request_too_large"), 429: ("requests", "rate_limit_exceeded"),
               500: ("server_error", None), 503: ("server_error", "service_unavailable")}
_ANTHROPIC_ERR = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                  404: "not_found_error", 405: "invalid_request_error", 413: "request_too_large",
                  429: "rate_limit_error", 500: "api_error", 503: "overloaded_error", 529: "overloaded_error"}


def openai_error(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    kind, default_code = _OPENAI_ERR.get(status, ("server_error" if status >= 500 else "invalid_request_error",
                                                  None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code or default_code}}


def anthropic_error(status: int, message: str, request_id: str) -> dict[str, Any]:
    kind = _ANTHROPIC_ERR.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}


class BadRequest(Exception):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


# --- request text, per API ---------------------------------------------------------------------------------

def _text_of(content: Any) -> str:
    """A message's content as text: a string, or the ``text`` of each part of a list (other parts: skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part, dict) and part.get("type") in ("function_call_output", "tool_result"):
                out.append(_text_of(part.get("output", part.get("content", ""))))
        return "\n".join(out)
    return "" if content is None else json.dumps(content)


def _messages(api: Api, body: dict[str, Any]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    if api == "chat":
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise BadRequest(400, "'messages' must be a non-empty array")
        for m in msgs:
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise BadRequest(400, "each message needs a 'role'")
            role = "system" if m["role"] in ("system", "developer") else m["role"]
            out.append({"role": role, "content": _text_of(m.get("content"))})
        return sorted(out, key=lambda m: m["role"] != "system")
    if api == "responses":
        if isinstance(body.get("instructions"), str):
            out.append({"role": "system", "content": body["instructions"]})
        inp = body.get("input")
        if isinstance(inp, str):
            out.append({"role": "user", "content": inp})
        elif isinstance(inp, list) and inp:
            for item in inp:
                if isinstance(item, dict) and "role" in item:
                    role = "system" if item["role"] in ("system", "developer") else str(item["role"])
                    out.append({"role": role, "content": _text_of(item.get("content"))})
                elif isinstance(item, dict):
                    out.append({"role": "user", "content": _text_of([item])})
        else:
            raise BadRequest(400, "'input' must be a string or a non-empty array")
        return sorted(out, key=lambda m: m["role"] != "system")
    system = body.get("system")
    if system is not None:
        out.append({"role": "system", "content": _text_of(system)})
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise BadRequest(400, "messages: Field required")
    if not isinstance(body.get("max_tokens"), int):
        raise BadRequest(400, "max_tokens: Field required")
    for m in msgs:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise BadRequest(400, "messages: each message needs role 'user' or 'assistant'")
        out.append({"role": str(m["role"]), "content": _text_of(m.get("content"))})
    return out


def _limit(api: Api, body: dict[str, Any]) -> int | None:
    names = {"chat": ("max_completion_tokens", "max_tokens"), "responses": ("max_output_tokens",),
             "messages": ("max_tokens",)}[api]
    for name in names:
        v = body.get(name)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


# --- the server ----------------------------------------------------------------------------------------------

class FakeModel:
    """A fake upstream model server on ``host`` (default 127.0.0.1), port 0 → a free port.

    ``script`` decides each answer: ``None`` (always :data:`DEFAULT_ANSWER`), a string (always it), a sequence
    (the i-th model request gets item i; past the end: 500), or a callable taking a :class:`ModelRequest`.
    An answer is the assistant's text, or a :class:`Fail`. A callable that raises answers 500.

    ``key``: the only credential accepted (``None``: any, or none). ``fail_with``: every request (any path)
    answers this status. ``slow_stream``: a :class:`SlowStream` (or a ``(first_chunks, delay_seconds, event)``
    tuple) applied to every streamed answer. ``models``: when given, other model ids answer 404.
    ``stream_framing``: ``"chunked"`` (default) or ``"close"``. ``gzip``: JSON answers (not streams) are
    gzip-compressed (``Content-Encoding: gzip``) when the request accepts it, as the providers' are.
    ``latency``: seconds to wait before answering each model request (after reading it). ``usage=False``: no
answer reports usage, streamed or not, whatever the request asks (as some OpenAI-compatible servers do).

    Attributes: ``base_url`` (``http://127.0.0.1:PORT/v1``, for the openai SDK), ``url`` (without ``/v1``: the
    anthropic SDK's base URL), ``host``, ``port``, ``requests`` (a snapshot list of every :class:`Received`,
    in arrival order, including refused ones), ``answered`` (model answers given), ``sent`` (a snapshot list of
    ``(monotonic time, api, event text)`` for each SSE event written), ``paused`` (set while a slow stream
    is held).
    """

    def __init__(self, script: Script = None, *, key: str | None = DEFAULT_KEY, fail_with: int | None = None,
                 slow_stream: SlowStream | tuple[int, float, threading.Event | None] | None = None,
                 models: Iterable[str] | None = None,
                 stream_framing: Literal["chunked", "close"] = "chunked", gzip: bool = False,
                 latency: float = 0.0, usage: bool = True, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script
        self.key = key
        self.fail_with = fail_with
        self.slow_stream = SlowStream(*slow_stream) if isinstance(slow_stream, tuple) else slow_stream
        self.models = frozenset(models) if models is not None else None
        self.stream_framing = stream_framing
        self.gzip = gzip
        self.latency = latency
        self.usage = usage
        self.paused = threading.Event()
        self._lock = threading.Lock()
        self._requests: list[Received] = []
        self._sent: list[tuple[float, str, str]] = []
        self._answered = 0
        self._index = 0
        self._ids = 0
        self._stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        handler = type("FakeModelHandler", (_Handler,), {"fake": self})
        self._server = QuietHTTPServer((host, port), handler)
        addr = self._server.server_address
        self.host, self.port = str(addr[0]), int(addr[1])
        self.url = f"http://{self.host}:{self.port}"
        self.base_url = f"{self.url}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fakemodel-{self.port}", daemon=True)
        self._thread.start()

    # lifecycle
    def __enter__(self) -> FakeModel:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving, release held streams and cut every open connection. Idempotent."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
        self._thread.join(5)

    # observations
    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._requests)

    @property
    def sent(self) -> list[tuple[float, str, str]]:
        with self._lock:
            return list(self._sent)

    @property
    def answered(self) -> int:
        with self._lock:
            return self._answered

    # internals used by the handler
    def _record(self, r: Received) -> None:
        with self._lock:
            self._requests.append(r)

    def _next_index(self) -> int:
        with self._lock:
            i = self._index
            self._index += 1
            return i

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}fake{self._ids:06d}"

    def _answer(self, req: ModelRequest) -> Answer:
        s = self.script
        if s is None:
            return DEFAULT_ANSWER
        if isinstance(s, str):
            return s
        if callable(s):
            try:
                return s(req)
            except Exception as exc:  # a broken script is the test's bug: show it as a 500
                return Fail(500, f"script raised {exc!r}")
        if req.index < len(s):
            return s[req.index]
        return Fail(500, f"script exhausted after {len(s)} answers")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModel
    protocol_version = "HTTP/1.1"
    server_version = "fakemodel/1"
    sys_version = ""
    timeout = 60

    # every method (CONNECT, PROPFIND, ...) is handled and recorded, not answered 501 by http.server
    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake._conns.add(self.connection)

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._conns.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # --- reading -------------------------------------------------------------------------------------------
    def _read_body(self) -> bytes:
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                if len(out) + size > MAX_BODY:
                    raise BadRequest(413, "request body too large")
                out += self.rfile.read(size)
                self.rfile.readline(16)
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise BadRequest(413, "request body too large")
        return self.rfile.read(n) if n > 0 else b""

    def _headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in self.headers.items():
            k = k.lower()
            out[k] = f"{out[k]}, {v}" if k in out else v
        return out

    # --- writing -------------------------------------------------------------------------------------------
    def _anthropic_style(self, path: str, headers: dict[str, str]) -> bool:
        return path == "/v1/messages" or "anthropic-version" in headers or "x-api-key" in headers

    def _send_json(self, status: int, obj: Any, extra: Mapping[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if self.fake.gzip and "gzip" in self.headers.get("Accept-Encoding", ""):
            data = gzip.compress(data, mtime=0)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_error(self, status: int, message: str, anthropic: bool, code: str | None = None,
                    extra: Mapping[str, str] | None = None) -> None:
        rid = self.fake._new_id("req_")
        body = anthropic_error(status, message, rid) if anthropic else openai_error(status, message, code)
        self._send_json(status, body, {("request-id" if anthropic else "x-request-id"): rid, **(extra or {})})

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        if self.fake.stream_framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()

    def _event(self, api: str, data: Any, event: str | None = None) -> None:
        payload = data if isinstance(data, str) else json.dumps(data)
        text = (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"
        raw = text.encode()
        if self.fake.stream_framing == "chunked":
            raw = f"{len(raw):x}\r\n".encode() + raw + b"\r\n"
        self.wfile.write(raw)
        self.wfile.flush()
        with self.fake._lock:
            self.fake._sent.append((time.monotonic(), api, text))

    def _end_stream(self) -> None:
        if self.fake.stream_framing == "chunked":
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    def _hold(self) -> None:
        slow = self.fake.slow_stream
        if slow is None:
            return
        self.fake.paused.set()
        try:
            deadline = time.monotonic() + slow.delay_seconds
            while not self.fake._stopping.is_set() and time.monotonic() < deadline:
                if slow.event is not None and slow.event.wait(min(0.02, max(0.0, deadline - time.monotonic()))):
                    break
                if slow.event is None:
                    time.sleep(min(0.02, max(0.0, deadline - time.monotonic())))
        finally:
            self.fake.paused.clear()

    def _deltas(self, pieces: list[str]) -> Iterator[str]:
        """Yield the pieces, holding the stream after the slow-stream's first ones."""
        first = self.fake.slow_stream.first_chunks if self.fake.slow_stream else -1
        for i, p in enumerate(pieces):
            if i == first:
                self._hold()
            yield p
        if first >= len(pieces):
            self._hold()

    # --- dispatch ------------------------------------------------------------------------------------------
    def _handle(self) -> None:
        fake = self.fake
        headers = self._headers()
        # the request target exactly as sent (http.server folds a leading "//" in self.path)
        parts = self.requestline.split(" ")
        target = parts[1] if len(parts) >= 2 else self.path
        path = urlsplit(target).path if "://" in target else target.split("?", 1)[0]
        try:
            body = self._read_body() if self.command not in ("GET", "HEAD", "CONNECT") or \
                "content-length" in headers or "transfer-encoding" in headers else b""
        except (BadRequest, ValueError) as exc:
            fake._record(Received(self.command, target, headers, b"", time.monotonic()))
            self.close_connection = True
            self._send_error(413 if isinstance(exc, BadRequest) else 400, str(exc),
                             self._anthropic_style(path, headers))
            return
        fake._record(Received(self.command, target, headers, body, time.monotonic()))
        anthropic = self._anthropic_style(path, headers)
        if self.command == "CONNECT":
            self.close_connection = True
        if fake.fail_with is not None:
            self._send_error(fake.fail_with, f"the fake model answers {fake.fail_with} to every request", anthropic)
            return
        if fake.key is not None and not self._key_ok(headers, anthropic):
            msg = ("invalid x-api-key" if anthropic else
                   "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.")
            self._send_error(401, msg, anthropic)
            return
        routes: dict[str, Api] = {"/v1/chat/completions": "chat", "/v1/responses": "responses",
                                  "/v1/messages": "messages"}
        if path == "/v1/models":
            if self.command != "GET":
                self._send_error(405, f"Method {self.command} not allowed for {path}", anthropic)
                return
            ids = sorted(fake.models) if fake.models is not None else []
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                              "owned_by": "fakemodel"} for m in ids]})
            return
        api = routes.get(path)
        if api is None:
            self._send_error(404, f"Invalid URL ({self.command} {path})", anthropic)
            return
        if self.command != "POST":
            self._send_error(405, f"Method {self.command} not allowed for {path}", anthropic)
            return
        try:
            self._model(api, headers, body)
        except BadRequest as exc:
            self._send_error(exc.status, exc.message, anthropic, exc.code)

    def _key_ok(self, headers: dict[str, str], anthropic: bool) -> bool:
        want = self.fake.key
        bearer = headers.get("authorization", "")
        if bearer == f"Bearer {want}":
            return True
        return anthropic and headers.get("x-api-key") == want

    def _model(self, api: Api, headers: dict[str, str], raw: bytes) -> None:
        fake = self.fake
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise BadRequest(400, "We could not parse the JSON body of your request.") from None
        if not isinstance(body, dict):
            raise BadRequest(400, "the request body must be a JSON object")
        if api == "messages" and "anthropic-version" not in headers:
            raise BadRequest(400, "anthropic-version: header is required")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest(400, "model: Field required" if api == "messages"
                             else "you must provide a model parameter")
        if fake.models is not None and model not in fake.models:
            raise BadRequest(404, f"The model `{model}` does not exist or you do not have access to it.",
                             "model_not_found")
        messages = _messages(api, body)
        stream = body.get("stream") is True
        req = ModelRequest(api, model, body, messages, stream, fake._next_index(), headers)
        if fake.latency > 0:
            fake._stopping.wait(fake.latency)
        answer = fake._answer(req)
        if isinstance(answer, Fail):
            self._send_error(answer.status, answer.message, api == "messages", extra=answer.headers)
            return
        text = str(answer)
        limit = _limit(api, body)
        truncated = limit is not None and count_tokens(text) > limit
        if truncated and limit is not None:
            text = "".join(_pieces(text.lstrip())[:max(limit, 0)]).rstrip()
        usage_in = sum(count_tokens(m["content"]) for m in messages)
        usage_out = count_tokens(text)
        with fake._lock:
            fake._answered += 1
        {"chat": self._chat, "responses": self._responses, "messages": self._messages}[api](
            req, text, truncated, usage_in, usage_out)

    # --- OpenAI Chat Completions ---------------------------------------------------------------------------
    def _chat(self, req: ModelRequest, text: str, truncated: bool, n_in: int, n_out: int) -> None:
        cid, created = self.fake._new_id("chatcmpl-"), int(time.time())
        finish = "length" if truncated else "stop"
        usage = {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out,
                 "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                               "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
        if not req.stream:
            self._send_json(200, {
                "id": cid, "object": "chat.completion", "created": created, "model": req.model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None,
                                                     "annotations": []},
                             "logprobs": None, "finish_reason": finish}],
                **({"usage": usage} if self.fake.usage else {}), "service_tier": "default",
                "system_fingerprint": "fp_fakemodel"},
                {"x-request-id": self.fake._new_id("req_")})
            return
        opts = req.body.get("stream_options")
        include_usage = isinstance(opts, dict) and opts.get("include_usage") is True and self.fake.usage

        def chunk(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
            c: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": req.model,
                                 "system_fingerprint": "fp_fakemodel", "service_tier": "default",
                                 "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                              "finish_reason": finish_reason}]}
            if include_usage:
                c["usage"] = None
            return c

        self._start_stream()
        self._event("chat", chunk({"role": "assistant", "content": "", "refusal": None}, None))
        for piece in self._deltas(_pieces(text)):
            self._event("chat", chunk({"content": piece}, None))
        self._event("chat", chunk({}, finish))
        if include_usage:
            self._event("chat", {"id": cid, "object": "chat.completion.chunk", "created": created,
                                 "model": req.model, "system_fingerprint": "fp_fakemodel", "service_tier": "default",
                                 "choices": [], "usage": usage})
        self._event("chat", "[DONE]")
        self._end_stream()

    # --- OpenAI Responses ----------------------------------------------------------------------------------
    def _responses(self, req: ModelRequest, text: str, truncated: bool, n_in: int, n_out: int) -> None:
        rid, mid, created = self.fake._new_id("resp_"), self.fake._new_id("msg_"), int(time.time())
        body = req.body

        def response(status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None) -> dict[str, Any]:
            return {"id": rid, "object": "response", "created_at": created, "status": status,
                    "background": False, "error": None,
                    "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
                    "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
                    "model": req.model, "output": output, "parallel_tool_calls": True,
                    "previous_response_id": body.get("previous_response_id"),
                    "reasoning": {"effort": None, "summary": None}, "store": body.get("store", True),
                    "temperature": body.get("temperature", 1.0), "text": {"format": {"type": "text"}},
                    "tool_choice": "auto", "tools": [], "top_p": body.get("top_p", 1.0), "truncation": "disabled",
                    "usage": usage, "user": None, "metadata": body.get("metadata") or {}}

        usage: dict[str, Any] | None = {
            "input_tokens": n_in, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": n_out,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": n_in + n_out} if self.fake.usage else None
        final_status = "incomplete" if truncated else "completed"
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        item = {"id": mid, "type": "message", "status": final_status, "role": "assistant", "content": [part]}
        if not req.stream:
            self._send_json(200, response(final_status, [item], usage), {"x-request-id": self.fake._new_id("req_")})
            return
        seq = iter(range(1 << 30))

        def ev(kind: str, **fields: Any) -> None:
            self._event("responses", {"type": kind, "sequence_number": next(seq), **fields}, kind)

        self._start_stream()
        ev("response.created", response=response("in_progress", [], None))
        ev("response.in_progress", response=response("in_progress", [], None))
        ev("response.output_item.added", output_index=0,
           item={"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []})
        ev("response.content_part.added", item_id=mid, output_index=0, content_index=0,
           part={"type": "output_text", "text": "", "annotations": [], "logprobs": []})
        for piece in self._deltas(_pieces(text)):
            ev("response.output_text.delta", item_id=mid, output_index=0, content_index=0, delta=piece, logprobs=[])
        ev("response.output_text.done", item_id=mid, output_index=0, content_index=0, text=text, logprobs=[])
        ev("response.content_part.done", item_id=mid, output_index=0, content_index=0, part=part)
        ev("response.output_item.done", output_index=0, item=item)
        ev("response.incomplete" if truncated else "response.completed",
           response=response(final_status, [item], usage))
        self._end_stream()

    # --- Anthropic Messages --------------------------------------------------------------------------------
    def _messages(self, req: ModelRequest, text: str, truncated: bool, n_in: int, n_out: int) -> None:
        mid = self.fake._new_id("msg_")
        stop = "max_tokens" if truncated else "end_turn"
        if not self.fake.usage:  # the Messages format always has usage: a server that does not count says 0
            n_in = n_out = 0
        rid = {"request-id": self.fake._new_id("req_")}
        if not req.stream:
            self._send_json(200, {"id": mid, "type": "message", "role": "assistant", "model": req.model,
                                  "content": [{"type": "text", "text": text}], "stop_reason": stop,
                                  "stop_sequence": None,
                                  "usage": {"input_tokens": n_in, "output_tokens": n_out,
                                            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}, rid)
            return
        self._start_stream()

        def ev(kind: str, **fields: Any) -> None:
            self._event("messages", {"type": kind, **fields}, kind)

        ev("message_start", message={"id": mid, "type": "message", "role": "assistant", "model": req.model,
                                     "content": [], "stop_reason": None, "stop_sequence": None,
                                     "usage": {"input_tokens": n_in, "output_tokens": min(n_out, 1),
                                               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})
        ev("content_block_start", index=0, content_block={"type": "text", "text": ""})
        ev("ping")
        for piece in self._deltas(_pieces(text)):
            ev("content_block_delta", index=0, delta={"type": "text_delta", "text": piece})
        ev("content_block_stop", index=0)
        ev("message_delta", delta={"stop_reason": stop, "stop_sequence": None}, usage={"output_tokens": n_out})
        ev("message_stop")
        self._end_stream()


# --- answers for the example agents: the package's stand-in provider's (``acx-oci dev provider``) --------------

def solve_from_reference(suite_dir: Path | str, *, fenced: bool = True) -> SuiteReferenceSolver:
    """A :class:`FakeModel` script answering each task of ``suite_dir`` (e.g. testdata/bench-py) with its
    reference solution, in the format ``llm_agent.py`` reads."""
    return SuiteReferenceSolver(Path(suite_dir), fenced=fenced)
