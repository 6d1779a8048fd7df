"""A STAND-IN model provider, for running the model-agent walk-through (and the tests) where no model exists.

It is not a model and earns nothing about any model: it speaks OpenAI's Chat Completions wire format
(``POST /v1/chat/completions``, ``GET /v1/models``) and answers a request for task X of a suite with X's
reference solution, in the format the example ``llm_agent.py`` reads (``{"files": {path: content}}`` in a
fenced JSON block). ``acx-oci dev provider`` serves it; ``tests/support/fakemodel.py`` reuses its answers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

MAX_BODY = 16 * 1024 * 1024
CHAT_PATH = "/v1/chat/completions"


class HasPrompt(Protocol):
    """A request whose whole text (system first, then the messages) is :attr:`prompt`."""

    @property
    def prompt(self) -> str:
        """All the request's text."""
        ...


def files_answer(files: Mapping[str, str], *, fenced: bool = False, preface: str = "") -> str:
    """The answer format ``llm_agent.py`` reads: a JSON object ``{"files": {path: content}}``, optionally inside a
    ```` ```json ```` fence and after some prose (the agent takes the first fenced block, or the text from the
    first ``{`` to the last ``}``)."""
    doc = json.dumps({"files": dict(files)}, indent=1)
    body = f"```json\n{doc}\n```" if fenced else doc
    return f"{preface}\n\n{body}" if preface else body


def _norm(text: str) -> str:
    return " ".join(text.split())


class SuiteReferenceSolver:
    """Answers a request for task X of a suite with X's reference solution.

    Each ``tasks/*/prompt.md`` of ``suite_dir`` is compared (whitespace collapsed) with the request's text; the
    task whose whole prompt appears in it (the longest, if several) is the one asked, and the answer is
    :func:`files_answer` of every file under that task's ``reference/``. No match: ``{"files": {}}``.
    ``solved`` lists the task directory names answered, in order (None for a request that matched none).

    With ``max_difficulty`` it knows only the tasks of the suite's ``benchmark.json`` up to that difficulty and
    answers the others ``{"files": {}}`` (the agent submits the untouched tree, which fails): a stand-in that
    solves everything wins every game, and with nothing to lose TrueSkill's sigma stays above the gate.
    """

    def __init__(self, suite_dir: Path, *, fenced: bool = True, max_difficulty: float | None = None) -> None:
        self.fenced = fenced
        self.unknown: set[str] = set() if max_difficulty is None else _above(Path(suite_dir), max_difficulty)
        self.tasks: list[tuple[str, str, dict[str, str]]] = []
        for prompt in sorted(Path(suite_dir).glob("tasks/*/prompt.md")):
            ref = prompt.parent / "reference"
            files = {str(p.relative_to(ref)): p.read_text("utf-8") for p in sorted(ref.rglob("*"))
                     if p.is_file() and "__pycache__" not in p.parts} if ref.is_dir() else {}
            self.tasks.append((prompt.parent.name, _norm(prompt.read_text("utf-8")), files))
        if not self.tasks:
            raise ValueError(f"{suite_dir}: no tasks/*/prompt.md")
        self._lock = threading.Lock()
        self.solved: list[str | None] = []

    def task_for(self, text: str) -> str | None:
        """The task whose prompt the text contains (the longest such prompt), or None."""
        hay = _norm(text)
        hits = [(len(p), name) for name, p, _ in self.tasks if p and p in hay]
        return max(hits)[1] if hits else None

    def answer(self, text: str) -> str:
        """The reference solution of the task ``text`` asks for, as :func:`files_answer`."""
        name = self.task_for(text)
        with self._lock:
            self.solved.append(name)
        files = {} if name in self.unknown else next((f for n, _, f in self.tasks if n == name), {})
        return files_answer(files, fenced=self.fenced, preface="Here is the solution." if self.fenced else "")

    def __call__(self, req: HasPrompt) -> str:
        return self.answer(req.prompt)


def _above(suite_dir: Path, max_difficulty: float) -> set[str]:
    """The ids of the suite's tasks (``benchmark.json``) whose difficulty is above ``max_difficulty``."""
    try:
        tasks = json.loads((suite_dir / "benchmark.json").read_text("utf-8"))["tasks"]
        return {str(t["id"]) for t in tasks if float(t["difficulty"]) > max_difficulty}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{suite_dir}: expected benchmark.json listing each task's id and difficulty "
                         f"(needed for a maximum difficulty), found {type(exc).__name__}: {exc}") from None


def _text(content: Any) -> str:
    """A chat message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def completion(model: str, text: str, prompt: str, n: int) -> dict[str, Any]:
    """A Chat Completions response object (usage counted in whitespace-separated words, deterministically)."""
    p, c = len(prompt.split()), len(text.split())
    return {"id": f"chatcmpl-standin-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": "acx-standin",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class StandinProvider(ThreadingHTTPServer):
    """The stand-in's HTTP server: ``key`` (when set) is required as ``Authorization: Bearer KEY``; ``models``
    (when not empty) are the only model ids answered."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], solver: SuiteReferenceSolver, *, key: str | None = None,
                 models: tuple[str, ...] = ()) -> None:
        super().__init__(address, _Handler)
        self.solver, self.key, self.models = solver, key, models
        self.count = 0

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up is not news."""


class _Handler(BaseHTTPRequestHandler):
    server: StandinProvider
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """No per-request lines on stderr."""

    def _send(self, status: int, doc: Any) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _authorized(self) -> bool:
        key = self.server.key
        if key is None or self.headers.get("Authorization", "") == f"Bearer {key}":
            return True
        self._send(401, _error("Incorrect API key provided.", "invalid_request_error"))
        return False

    def do_GET(self) -> None:
        """``/v1/models``: the models answered."""
        if not self._authorized():
            return
        if self.path.split("?", 1)[0] != "/v1/models":
            self._send(404, _error(f"Unknown path {self.path[:100]}", "invalid_request_error"))
            return
        self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "acx-standin"}
                                                    for m in self.server.models]})

    def do_POST(self) -> None:
        """``/v1/chat/completions`` (not streamed): the asked task's reference solution."""
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 <= length <= MAX_BODY:
            self._send(413, _error("Request too large.", "invalid_request_error"))
            return
        raw = self.rfile.read(length)
        if not self._authorized():
            return
        if self.path.split("?", 1)[0] != CHAT_PATH:
            self._send(404, _error(f"Unknown path {self.path[:100]}", "invalid_request_error"))
            return
        try:
            body = json.loads(raw)
            model, messages = str(body["model"]), body["messages"]
            prompt = "\n\n".join(_text(m.get("content")) for m in messages)
        except (ValueError, KeyError, TypeError, AttributeError):
            self._send(400, _error("Expected a JSON body with model and messages.", "invalid_request_error"))
            return
        if self.server.models and model not in self.server.models:
            self._send(404, _error(f"The model `{model[:100]}` does not exist.", "invalid_request_error"))
            return
        if body.get("stream"):
            self._send(400, _error("The stand-in provider does not stream.", "invalid_request_error"))
            return
        self.server.count += 1
        self._send(200, completion(model, self.server.solver.answer(prompt), prompt, self.server.count))
