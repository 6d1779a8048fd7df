"""Model egress, the pure part: which provider APIs an agent may call, the verifier's models file, what a
request must look like to be forwarded, how tokens are counted, and how a recorded exchange is matched.

Why pure: the proxy (``acx_oci.egress``) is the only trusted thing between a sandboxed agent and a
provider; keeping every decision here — bytes and values in, a verdict out — lets the rules be tested
without sockets and read in one place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from acx_oci import reasons
from acx_oci.crypto import canonical
from acx_oci.model import requestfields

#: The sandbox's only way out: a Unix socket bound here; a relay inside listens on 127.0.0.1:MODEL_PORT.
SOCKET_INSIDE = "/run/acx/model.sock"
MODEL_PORT = 11500
PLACEHOLDER_KEY = "acx-sandbox"
NETWORK_NONE = "none"
NETWORK_MODEL = "model"
DATA_USE = ("no-training", "unknown")
#: Bounds the proxy enforces on every exchange (a request body of at least 1 MiB must pass).
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
MAX_HEADER_BYTES = 32 * 1024
MAX_HEADERS = 64
REQUEST_SECONDS = 300.0
MAX_EXCHANGES = 10_000
#: The ``baseUrl`` of a model entry that names no provider (a replay's: its proxies answer from recordings and
#: never forward). The containment probes aim their forbidden requests (CONNECT, absolute URI, direct TCP) at
#: this reserved name (RFC 6761: ``.invalid`` never resolves); nothing is remembered as sent to a provider.
NO_UPSTREAM = "http://model-replay.invalid/v1"
#: Bodies one game's transcript may hold; past it the proxy answers 429 (the agent's doing), never drops records.
MAX_TRANSCRIPT_BYTES = 96 * 1024 * 1024


@dataclass(frozen=True)
class Api:
    """One provider wire format: the one method and path an agent may use, and how the key travels."""

    name: str
    path: str
    key_header: str
    key_prefix: str
    forward_headers: tuple[str, ...]


APIS: dict[str, Api] = {
    "openai-chat": Api("openai-chat", "/v1/chat/completions", "authorization", "Bearer ",
                       ("content-type", "accept")),
    "openai-responses": Api("openai-responses", "/v1/responses", "authorization", "Bearer ",
                            ("content-type", "accept")),
    "anthropic-messages": Api("anthropic-messages", "/v1/messages", "x-api-key", "",
                              ("content-type", "accept", "anthropic-version", "anthropic-beta")),
}
#: Response headers relayed to the agent (and recorded); everything else (cookies, hop-by-hop) is dropped.
RESPONSE_HEADERS = ("content-type", "retry-after", "x-request-id", "request-id", "openai-processing-ms",
                    "anthropic-ratelimit-requests-remaining")


@dataclass(frozen=True)
class DeclaredModel:
    """What the signed ROM says: the API it speaks and the model id it is built for."""

    api: str
    id: str

    def to_json(self) -> dict[str, str]:
        """The ``runtime.model`` / ``acx:model`` form."""
        return {"api": self.api, "id": self.id}


def declared_model(runtime: dict[str, Any] | None) -> DeclaredModel | None:
    """The ROM's ``runtime.model {api, id}`` when its network is ``model``; None for offline agents."""
    if not runtime or runtime.get("network") != NETWORK_MODEL:
        return None
    m = runtime.get("model") or {}
    return DeclaredModel(str(m.get("api")), str(m.get("id")))


def parse_model_flag(value: str) -> DeclaredModel:
    """``API:ID`` as ``cartridge init --model`` takes it (``openai-chat:acme-large-2026-06``)."""
    api, sep, mid = value.partition(":")
    if not sep or api not in APIS or not mid:
        raise ValueError(f"expected API:MODEL-ID with API one of {', '.join(APIS)}, found {value!r}")
    return DeclaredModel(api, mid)


@dataclass(frozen=True)
class ModelEntry:
    """One entry of the verifier's models file: where the model lives, which key pays, what it knows."""

    id: str
    api: str
    base_url: str
    api_key_env: str | None = None
    api_key_file: str | None = None
    training_cutoff: date | None = None
    max_tokens_per_game: int | None = None
    max_requests_per_game: int | None = None
    data_use: str = "unknown"

    def public(self) -> dict[str, Any]:
        """What a record, an export or a credential may say of the entry (never the key or where it is)."""
        return {"id": self.id, "api": self.api,
                "trainingCutoff": self.training_cutoff.isoformat() if self.training_cutoff else None,
                "maxTokensPerGame": self.max_tokens_per_game, "maxRequestsPerGame": self.max_requests_per_game,
                "dataUse": self.data_use}


def parse_models(doc: dict[str, Any]) -> dict[tuple[str, str], ModelEntry]:
    """The models file (already schema-checked) keyed by ``(api, id)``; a key given twice is refused."""
    out: dict[tuple[str, str], ModelEntry] = {}
    for m in doc.get("models") or []:
        cutoff = m.get("trainingCutoff")
        entry = ModelEntry(id=str(m["id"]), api=str(m["api"]), base_url=str(m["baseUrl"]).rstrip("/"),
                           api_key_env=m.get("apiKeyEnv"), api_key_file=m.get("apiKeyFile"),
                           training_cutoff=date.fromisoformat(cutoff) if isinstance(cutoff, str) else None,
                           max_tokens_per_game=m.get("maxTokensPerGame"),
                           max_requests_per_game=m.get("maxRequestsPerGame"),
                           data_use=str(m.get("dataUse") or "unknown"))
        if (entry.api, entry.id) in out:
            raise ValueError(f"model {entry.api}:{entry.id} is listed twice")
        out[(entry.api, entry.id)] = entry
    return out


def upstream_url(entry: ModelEntry, api: Api) -> str:
    """``baseUrl`` names the provider's ``/v1``; the API's path is appended below it."""
    return entry.base_url + api.path[len("/v1"):]


@dataclass(frozen=True)
class Refusal:
    """Why the proxy answers a request itself instead of forwarding it (recorded as ``refused``)."""

    status: int
    code: str
    message: str


def check_request(api: Api, model_id: str, *, method: str, target: str, headers: list[tuple[str, str]],
                  host_ok: tuple[str, ...], body: bytes) -> Refusal | dict[str, Any]:
    """The body to forward (the parsed JSON rebuilt from the API's allow-list) if the request may go upstream,
    else the :class:`Refusal` the agent gets.

    One method, one path, the loopback ``Host`` the relay listens on, no upgrade, a JSON object whose
    ``model`` is exactly the declared id and whose every field and content part is on the allow-list
    (:mod:`acx_oci.model.requestfields`).
    """
    if method == "CONNECT":
        return Refusal(405, reasons.CONNECT_REFUSED, "CONNECT is not allowed: the proxy forwards one API only")
    if not target.startswith("/"):
        return Refusal(400, reasons.ABSOLUTE_URI_REFUSED, "only origin-form request targets are accepted")
    if method != "POST" or target.split("?", 1)[0] != api.path:
        return Refusal(404, reasons.PATH_REFUSED, f"only POST {api.path} is forwarded")
    names = [n for n, _ in headers]
    hosts = [v for n, v in headers if n == "host"]
    if len(hosts) != 1 or hosts[0].lower() not in host_ok:
        return Refusal(421, reasons.HOST_REFUSED, "the Host header must name the sandbox's model endpoint")
    if "upgrade" in names or any(n == "connection" and "upgrade" in v.lower() for n, v in headers):
        return Refusal(400, reasons.UPGRADE_REFUSED, "protocol upgrades are not allowed")
    try:
        doc = strict_json(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return Refusal(400, reasons.BODY_REFUSED, "the request body must be one JSON object in UTF-8 (no BOM, no "
                       "duplicate keys, no NaN or Infinity)")
    if not isinstance(doc, dict):
        return Refusal(400, reasons.BODY_REFUSED, "the request body must be a JSON object")
    if doc.get("model") != model_id:
        return Refusal(403, reasons.MODEL_REFUSED, f"only model {model_id!r} may be called")
    reach = provider_reach(api, doc)
    if reach is not None:
        return Refusal(400, reasons.TOOL_REFUSED, f"{reach}: the provider would reach the network for the agent")
    try:
        return requestfields.forwardable(api.name, doc)
    except ValueError as exc:  # the one-line message names the field
        return Refusal(400, reasons.FIELD_REFUSED, str(exc))


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(body: bytes) -> Any:
    """``body`` parsed only if every JSON parser reads it the same way: strict UTF-8 with no BOM (so no
    UTF-16/32 guessing), no duplicate keys at any depth (Python keeps the last, many parsers the first: the
    proxy would judge one request and the provider run another), no ``NaN``/``Infinity``."""
    return json.loads(body.decode("utf-8"), object_pairs_hook=_unique, parse_constant=_no_constant)


#: Tool types the agent's own process executes (the provider only returns a call): every other tool type
#: is run by the provider — web search and fetch, remote MCP servers, hosted code, the key's stored files.
CLIENT_TOOLS: dict[str, tuple[str, ...]] = {
    "openai-chat": ("function", "custom"),
    "openai-responses": ("function", "custom", "local_shell", "apply_patch"),
    "anthropic-messages": ("custom", "bash_", "text_editor_", "computer_"),
}
#: Top-level request fields that make the provider reach out (or reuse provider-side state).
PROVIDER_FIELDS: dict[str, tuple[str, ...]] = {
    "openai-chat": ("web_search_options",),
    "openai-responses": (),
    "anthropic-messages": ("mcp_servers", "container"),
}


def provider_reach(api: Api, doc: dict[str, Any]) -> str | None:
    """What in ``doc`` would have the provider reach the network on the agent's behalf, or None.

    The sandbox's network namespace is empty; without this the model API itself is egress to any host
    (a remote MCP server URL, a fetched page) carrying held-out prompts out and anything in."""
    for name in PROVIDER_FIELDS.get(api.name, ()):
        if name in doc:
            return f"request field {name!r}"
    tools = doc.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "'tools' that is not a list"
    allowed = CLIENT_TOOLS.get(api.name, ())
    for tool in tools:
        if not isinstance(tool, dict):
            return "a tool that is not an object"
        kind = tool.get("type", "custom" if api.name == "anthropic-messages" else None)
        if not isinstance(kind, str) or not any(kind == a or (a.endswith("_") and kind.startswith(a))
                                                for a in allowed):
            return f"tool type {kind!r}"
    return None


def forwarded_body(api: Api, doc: dict[str, Any], raw: bytes) -> bytes:
    """The bytes sent upstream: ``doc`` (the allow-listed rebuild of ``raw``), where a streamed chat always asks
    for usage (budgets need it); ``raw`` itself, byte for byte, when that is the same request."""
    out = doc
    if api.name == "openai-chat" and doc.get("stream") is True:
        given = doc.get("stream_options")
        opts: dict[str, Any] = given if isinstance(given, dict) else {}
        if opts.get("include_usage") is not True:
            out = {**doc, "stream_options": {**opts, "include_usage": True}}
    if out == strict_json(raw):
        return raw
    return json.dumps(out, separators=(",", ":")).encode("utf-8")


def _sse_events(body: bytes) -> list[Any]:
    out: list[Any] = []
    for line in body.split(b"\n"):
        line = line.strip()
        if line.startswith(b"data:"):
            data = line[5:].strip()
            if data and data != b"[DONE]":
                try:
                    out.append(json.loads(data))
                except (ValueError, UnicodeDecodeError, RecursionError):
                    continue
    return out


def _n(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def usage_of(api: Api, body: bytes, streamed: bool, sent: bytes = b"") -> tuple[int, int]:
    """``(input, output)`` tokens as the provider's ``usage`` reports them; where it reports none (a server that
    ignores ``include_usage``, a stream cut before its last event) an estimate from the answer's text, and from
    ``sent`` (the forwarded request), so a non-empty answer never counts 0 against the game's budget."""
    docs = _sse_events(body) if streamed else []
    if not streamed:
        try:
            one = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return 0, 0
        docs = [one]
    inp = out = 0
    final = False  # a closing usage (not Anthropic's message_start, which counts 1 before anything is said)
    for d in docs:
        if not isinstance(d, dict):
            continue
        candidates = [d.get("usage"), (d.get("response") or {}).get("usage") if isinstance(d.get("response"), dict)
                      else None, (d.get("message") or {}).get("usage") if isinstance(d.get("message"), dict)
                      else None]
        final = final or isinstance(candidates[0], dict) or isinstance(candidates[1], dict)
        for u in candidates:
            if isinstance(u, dict):
                inp = max(inp, _n(u.get("prompt_tokens")), _n(u.get("input_tokens")))
                out = max(out, _n(u.get("completion_tokens")), _n(u.get("output_tokens")))
    if out == 0 or not final:
        out = max(out, estimate_tokens(answer_text(api, docs, streamed)))
    if inp == 0 and out > 0 and sent:
        with contextlib.suppress(ValueError, UnicodeDecodeError, RecursionError):
            inp = estimate_tokens("".join(_strings(json.loads(sent), skip=("model", "data"))))
    return inp, out


def estimate_tokens(text: str) -> int:
    """A budget's stand-in for a tokenizer: one token per 3 UTF-8 bytes, rounded up — more than real tokenizers
    count for text and code, so an estimate spends the budget sooner, never later."""
    return -(-len(text.encode("utf-8", "replace")) // 3)


_NOT_TEXT = ("id", "type", "role", "object", "model", "status", "index", "call_id", "tool_call_id", "finish_reason",
             "stop_reason", "signature", "encrypted_content", "logprobs", "usage", "name", "item_id")


def _strings(value: Any, skip: tuple[str, ...] = _NOT_TEXT) -> list[str]:
    """Every string leaf of ``value`` except under keys in ``skip`` (and inline ``data:`` URLs, which are images)."""
    if isinstance(value, str):
        return [] if value[:5].lower() == "data:" else [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, skip)]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in skip for s in _strings(v, skip)]
    return []


def answer_text(api: Api, docs: list[Any], streamed: bool) -> str:
    """The text the model produced (message text, tool-call arguments, reasoning), from a whole answer or the
    events of a stream, for :func:`estimate_tokens` (each piece once: a stream's summary events are skipped)."""
    parts: list[str] = []
    for d in docs:
        if not isinstance(d, dict):
            continue
        if not streamed:
            parts += _strings(d.get({"openai-chat": "choices", "openai-responses": "output"}.get(api.name, "content")))
        elif api.name == "openai-chat":
            parts += [s for c in d.get("choices") or [] if isinstance(c, dict) for s in _strings(c.get("delta"))]
        elif api.name == "openai-responses":
            if str(d.get("type", "")).endswith(".delta") and isinstance(d.get("delta"), str):
                parts.append(d["delta"])
        elif d.get("type") == "content_block_delta":
            parts += _strings(d.get("delta"))
    return "".join(parts)


def request_key(target: str, body: bytes) -> str:
    """What replay matches a request on: the path and the JSON body's canonical form (key order, spacing
    and number spelling do not matter); a body that is not JSON is hashed as its bytes."""
    try:
        payload = canonical(json.loads(body))
    except (ValueError, UnicodeDecodeError, TypeError, OverflowError, RecursionError):
        payload = body
    return hashlib.sha256(target.encode("utf-8") + b"\n" + payload).hexdigest()


@dataclass
class Budget:
    """Per-game counters: requests forwarded, tokens used, requests refused."""

    max_requests: int | None = None
    max_tokens: int | None = None
    requests: int = 0
    refused: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    upstream_failures: int = 0
    divergent: int = 0
    recorded_bytes: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def exhausted(self) -> Refusal | None:
        """A 429 once the game's request or token budget is spent (the agent's own doing)."""
        if self.recorded_bytes >= MAX_TRANSCRIPT_BYTES or self.requests >= MAX_EXCHANGES:
            return Refusal(429, reasons.TRANSCRIPT_BUDGET, "this game's model transcript is full")
        if self.max_requests is not None and self.requests >= self.max_requests:
            return Refusal(429, reasons.REQUEST_BUDGET, f"this game's budget of {self.max_requests} requests is spent")
        if self.max_tokens is not None and self.input_tokens + self.output_tokens >= self.max_tokens:
            return Refusal(429, reasons.TOKEN_BUDGET, f"this game's budget of {self.max_tokens} tokens is spent")
        return None

    def refuse(self, code: str) -> None:
        """Count a refusal by its code."""
        self.refused += 1
        self.reasons[code] = self.reasons.get(code, 0) + 1
