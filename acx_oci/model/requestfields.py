"""Model egress: the request fields and content parts the proxy forwards, per API — an allow-list (pure).

Why an allow-list: the sandbox has no network, but a provider fetches a URL named in a message part, reads a
file or a stored prompt by id, and continues a stored response or conversation. Each of those is a way out
(held-out task text in a URL's query string) or a way in (state kept under the verifier's key) that a list
of forbidden fields only catches once someone has thought of it. So each request is rebuilt from the fields
named here and nothing else: a top-level field not listed is refused (a new provider feature stays refused
until it is reviewed), as is any message role, content part, source or input item not listed, and a part
that is listed but points somewhere (an ``image_url`` that is not a ``data:`` URL, a ``file_id``) is refused
by name. Keys not listed *inside* a known message or part are dropped, not refused: SDKs echo an answer back
with inert extras (``annotations``, ``audio: null``), and what went upstream is recorded beside what came in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: Top-level fields refused by name, with why (every other unlisted field: "not a field the proxy forwards").
STATEFUL: dict[str, str] = {
    "previous_response_id": "it continues a response stored at the provider",
    "conversation": "it continues a conversation stored at the provider",
    "prompt": "it makes the provider read a stored prompt",
    "background": "it leaves the answer stored at the provider, to be fetched later",
    "mcp_servers": "it makes the provider call remote MCP servers",
    "container": "it runs the agent's request in a provider-side container",
    "web_search_options": "it makes the provider search the web",
}

_CHAT_TOP = ("model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "stream",
             "stream_options", "tools", "tool_choice", "parallel_tool_calls", "response_format", "seed", "n",
             "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user",
             "reasoning_effort", "verbosity", "metadata", "store", "prompt_cache_key", "prompt_cache_retention",
             "safety_identifier", "functions", "function_call")
_RESPONSES_TOP = ("model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "stream",
                  "stream_options", "tools", "tool_choice", "parallel_tool_calls", "text", "reasoning", "metadata",
                  "store", "truncation", "user", "include", "max_tool_calls", "top_logprobs", "prompt_cache_key",
                  "prompt_cache_retention", "safety_identifier")
_ANTHROPIC_TOP = ("model", "messages", "max_tokens", "system", "temperature", "top_p", "top_k", "stop_sequences",
                  "stream", "metadata", "tools", "tool_choice", "thinking", "output_config", "output_format",
                  "cache_control")


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a JSON object, found {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a JSON array, found {type(value).__name__}")
    return value


def _keep(value: Any, where: str, *keys: str) -> dict[str, Any]:
    got = _obj(value, where)
    return {k: got[k] for k in keys if k in got}


def _data_url(url: Any, where: str) -> None:
    if not isinstance(url, str) or not url[:5].lower() == "data:":
        raise ValueError(f"{where} is not a data: URL (the provider would fetch it): send the image inline")


def _no_file_id(part: dict[str, Any], where: str) -> None:
    if "file_id" in part:
        raise ValueError(f"{where}.file_id names a file stored at the provider")


# --- OpenAI Chat Completions --------------------------------------------------------------------------------

def _chat_part(part: Any, where: str) -> dict[str, Any]:
    kind = _obj(part, where).get("type")
    if kind == "text":
        return _keep(part, where, "type", "text")
    if kind == "refusal":
        return _keep(part, where, "type", "refusal")
    if kind == "image_url":
        img = _keep(part.get("image_url"), f"{where}.image_url", "url", "detail")
        _data_url(img.get("url"), f"{where}.image_url.url")
        return {"type": kind, "image_url": img}
    if kind == "input_audio":
        return {"type": kind, "input_audio": _keep(part.get("input_audio"), f"{where}.input_audio", "data", "format")}
    if kind == "file":
        raise ValueError(f"{where} is a 'file' part (the provider reads a stored file or a document for it)")
    raise ValueError(f"{where} has content part type {kind!r}, which the proxy does not forward")


def _content(value: Any, where: str, part: Callable[[Any, str], dict[str, Any]]) -> Any:
    if value is None or isinstance(value, str):
        return value
    return [part(p, f"{where}[{i}]") for i, p in enumerate(_list(value, where))]


def _chat_call(call: Any, where: str) -> dict[str, Any]:
    out = _keep(call, where, "id", "type", "index")
    if "function" in call:
        out["function"] = _keep(call["function"], f"{where}.function", "name", "arguments")
    if "custom" in call:
        out["custom"] = _keep(call["custom"], f"{where}.custom", "name", "input")
    return out


def _chat_message(message: Any, where: str) -> dict[str, Any]:
    out = _keep(message, where, "role", "name", "tool_call_id", "refusal")
    if out.get("role") not in ("system", "developer", "user", "assistant", "tool", "function"):
        raise ValueError(f"{where}.role {out.get('role')!r} is not a chat role")
    if "content" in message:
        out["content"] = _content(message["content"], f"{where}.content", _chat_part)
    if message.get("tool_calls") is not None:
        out["tool_calls"] = [_chat_call(c, f"{where}.tool_calls[{i}]")
                             for i, c in enumerate(_list(message["tool_calls"], f"{where}.tool_calls"))]
    if message.get("function_call") is not None:
        out["function_call"] = _keep(message["function_call"], f"{where}.function_call", "name", "arguments")
    return out


def _chat_tool(tool: Any, where: str) -> dict[str, Any]:
    out = _keep(tool, where, "type")
    if "function" in tool:
        out["function"] = _keep(tool["function"], f"{where}.function", "name", "description", "parameters", "strict")
    if "custom" in tool:
        out["custom"] = _keep(tool["custom"], f"{where}.custom", "name", "description", "format")
    return out


def _chat(doc: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    out["messages"] = [_chat_message(m, f"messages[{i}]")
                       for i, m in enumerate(_list(doc.get("messages"), "messages"))]
    if doc.get("tools") is not None:
        out["tools"] = [_chat_tool(t, f"tools[{i}]") for i, t in enumerate(_list(doc["tools"], "tools"))]
    if doc.get("functions") is not None:
        out["functions"] = [_keep(f, f"functions[{i}]", "name", "description", "parameters")
                            for i, f in enumerate(_list(doc["functions"], "functions"))]
    return out


# --- OpenAI Responses ---------------------------------------------------------------------------------------

_ITEM_KEYS: dict[str, tuple[str, ...]] = {
    "function_call": ("type", "id", "call_id", "name", "arguments", "status"),
    "custom_tool_call": ("type", "id", "call_id", "name", "input"),
    "custom_tool_call_output": ("type", "id", "call_id", "output"),
    "reasoning": ("type", "id", "summary", "content", "encrypted_content", "status"),
    "local_shell_call": ("type", "id", "call_id", "action", "status"),
    "local_shell_call_output": ("type", "id", "output", "status"),
    "apply_patch_call": ("type", "id", "call_id", "operation", "status"),
    "apply_patch_call_output": ("type", "id", "call_id", "output", "status"),
}


def _responses_part(part: Any, where: str) -> dict[str, Any]:
    kind = _obj(part, where).get("type")
    if kind in ("input_text", "output_text"):
        return _keep(part, where, "type", "text", "annotations", "logprobs")
    if kind == "refusal":
        return _keep(part, where, "type", "refusal")
    if kind == "input_image":
        _no_file_id(part, where)
        _data_url(part.get("image_url"), f"{where}.image_url")
        return _keep(part, where, "type", "image_url", "detail")
    if kind == "input_audio":
        return {"type": kind, "input_audio": _keep(part.get("input_audio"), f"{where}.input_audio", "data", "format")}
    if kind == "input_file":
        raise ValueError(f"{where} is an 'input_file' part (the provider reads a stored file or fetches a URL)")
    raise ValueError(f"{where} has content part type {kind!r}, which the proxy does not forward")


def _responses_item(item: Any, where: str) -> dict[str, Any]:
    kind = _obj(item, where).get("type", "message" if "role" in item else None)
    if kind == "message":
        out = _keep(item, where, "type", "role", "id", "status")
        if out.get("role") not in ("system", "developer", "user", "assistant"):
            raise ValueError(f"{where}.role {out.get('role')!r} is not a Responses role")
        out["content"] = _content(item.get("content"), f"{where}.content", _responses_part)
        return out
    if kind == "function_call_output":
        out = _keep(item, where, "type", "id", "call_id", "status")
        out["output"] = _content(item.get("output"), f"{where}.output", _responses_part)
        return out
    if kind == "item_reference":
        raise ValueError(f"{where} is an 'item_reference' (it continues state stored at the provider)")
    if isinstance(kind, str) and kind in _ITEM_KEYS:
        return _keep(item, where, *_ITEM_KEYS[kind])
    raise ValueError(f"{where} has input item type {kind!r}, which the proxy does not forward")


def _responses(doc: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    inp = doc.get("input")
    if not isinstance(inp, str):
        out["input"] = [_responses_item(x, f"input[{i}]") for i, x in enumerate(_list(inp, "input"))]
    if doc.get("instructions") is not None and not isinstance(doc["instructions"], str):
        raise ValueError("instructions must be a string (a list of items belongs to a stored prompt)")
    if doc.get("tools") is not None:
        out["tools"] = [_keep(t, f"tools[{i}]", "type", "name", "description", "parameters", "strict", "format")
                        for i, t in enumerate(_list(doc["tools"], "tools"))]
    return out


# --- Anthropic Messages -------------------------------------------------------------------------------------

def _anthropic_source(source: Any, where: str) -> dict[str, Any]:
    kind = _obj(source, where).get("type")
    if kind in ("base64", "text"):
        return _keep(source, where, "type", "media_type", "data")
    if kind == "content":
        return {"type": kind, "content": _content(source.get("content"), f"{where}.content", _anthropic_block)}
    why = {"url": "the provider would fetch it", "file": "it names a file stored at the provider"}
    raise ValueError(f"{where}.type {kind!r} is not forwarded ({why.get(str(kind), 'not an inline source')})")


def _anthropic_block(block: Any, where: str) -> dict[str, Any]:
    kind = _obj(block, where).get("type")
    if kind == "text":
        return _keep(block, where, "type", "text", "cache_control")
    if kind in ("image", "document"):
        out = _keep(block, where, "type", "title", "context", "cache_control", "citations")
        out["source"] = _anthropic_source(block.get("source"), f"{where}.source")
        return out
    if kind == "tool_use":
        return _keep(block, where, "type", "id", "name", "input", "cache_control")
    if kind == "tool_result":
        out = _keep(block, where, "type", "tool_use_id", "is_error", "cache_control")
        if "content" in block:
            out["content"] = _content(block["content"], f"{where}.content", _anthropic_block)
        return out
    if kind == "thinking":
        return _keep(block, where, "type", "thinking", "signature")
    if kind == "redacted_thinking":
        return _keep(block, where, "type", "data")
    raise ValueError(f"{where} has content block type {kind!r}, which the proxy does not forward")


def _anthropic_message(message: Any, where: str) -> dict[str, Any]:
    out = _keep(message, where, "role")
    if out.get("role") not in ("user", "assistant"):
        raise ValueError(f"{where}.role {out.get('role')!r} is not a Messages role")
    out["content"] = _content(message.get("content"), f"{where}.content", _anthropic_block)
    return out


def _anthropic(doc: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    out["messages"] = [_anthropic_message(m, f"messages[{i}]")
                       for i, m in enumerate(_list(doc.get("messages"), "messages"))]
    if "system" in doc:
        out["system"] = _content(doc["system"], "system", _anthropic_block)
    if doc.get("tools") is not None:
        out["tools"] = [_keep(t, f"tools[{i}]", "type", "name", "description", "input_schema", "cache_control",
                              "display_width_px", "display_height_px", "display_number", "max_characters")
                        for i, t in enumerate(_list(doc["tools"], "tools"))]
    return out


_APIS: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "openai-chat": (_CHAT_TOP, _chat),
    "openai-responses": (_RESPONSES_TOP, _responses),
    "anthropic-messages": (_ANTHROPIC_TOP, _anthropic),
}


def forwardable(api: str, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` rebuilt from the fields the proxy forwards for ``api``; a ``ValueError`` whose one-line message
    names the first field or part it does not (a URL or stored state the provider would reach, an unknown field).

    ``stream`` must be a JSON boolean (or null): a server that coerces ``"true"`` or ``1`` would stream an
    answer the proxy took for a whole one, and never asked usage for."""
    top, rebuild = _APIS[api]
    for name in doc:
        if name in STATEFUL:
            raise ValueError(f"request field {name!r} is not forwarded: {STATEFUL[name]}")
        if name not in top:
            raise ValueError(f"request field {name!r} is not one the proxy forwards for {api}")
    if doc.get("stream") is not None and not isinstance(doc["stream"], bool):
        raise ValueError(f"'stream' must be a JSON boolean, found {json.dumps(doc['stream'])[:40]}")
    if doc.get("stream_options") is not None:
        _obj(doc["stream_options"], "stream_options")
    return rebuild(doc)
