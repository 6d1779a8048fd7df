#!/usr/bin/env python3
"""An honest agent that asks a language model, through the official openai SDK, and writes what it answers.

Inside the sandbox the verifier sets ``OPENAI_BASE_URL`` (``http://127.0.0.1:<port>/v1``: the in-sandbox relay
to the verifier's recording proxy), ``OPENAI_API_KEY`` (a placeholder: the proxy injects the real key) and
``ACX_MODEL_ID`` (the cartridge's declared model). The SDK comes from ``/usr/local/lib/acx-oci-sdk``
(scripts/install-sdk.sh), which is not on the system interpreter's default path.

One chat completion: a system message fixing the answer format, and a user message with the task prompt
(``$ACX_PROMPT_FILE``) and the text files of the workspace. The answer must hold one JSON object::

    {"files": {"solution.py": "def add(a, b):\\n    return a + b\\n"}}

either bare or in a fenced block (```` ```json ... ``` ````, the first fenced block wins), possibly after
prose. Each entry replaces (or creates) that file, relative to the workspace; absolute paths, ``..``, hidden
names and non-string contents are refused. Exits 0 when at least one file was written, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

SDK_DIR = "/usr/local/lib/acx-oci-sdk"
MAX_FILE = 64 * 1024
MAX_FILES = 50
SYSTEM = (
    "You are a careful software engineer working in a repository. You are given a task and the files of the "
    "workspace. Reply with the complete new contents of every file you change, as one JSON object of the form "
    '{"files": {"<path relative to the workspace>": "<full file contents>"}} -- nothing else is applied.'
)


def workspace_files(ws: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(ws.rglob("*")):
        rel = path.relative_to(ws)
        if len(out) >= MAX_FILES or any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
            continue
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_FILE:
            try:
                out[rel.as_posix()] = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
    return out


def user_message(prompt: str, files: dict[str, str]) -> str:
    parts = [f"# Task\n\n{prompt.strip()}\n", "# Workspace files\n"]
    for rel, text in files.items():
        parts.append(f"## {rel}\n\n```\n{text}\n```\n")
    return "\n".join(parts)


def parse_answer(text: str) -> dict[str, str]:
    """The ``files`` of the first JSON object in the answer (fenced block first, else first ``{`` .. last ``}``)."""
    fenced = re.search(r"```(?:json)?[ \t]*\n(.*?)\n?```", text, re.S)
    candidates = [fenced.group(1)] if fenced else []
    if "{" in text:
        candidates.append(text[text.index("{"):text.rindex("}") + 1])
    for cand in candidates:
        try:
            doc = json.loads(cand)
        except ValueError:
            continue
        files = doc.get("files") if isinstance(doc, dict) else None
        if isinstance(files, dict):
            return {str(k): v for k, v in files.items() if isinstance(v, str)}
    return {}


def safe_target(ws: Path, rel: str) -> Path | None:
    parts = rel.replace("\\", "/").split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return None
    target = ws.joinpath(*parts)
    try:
        target.parent.resolve().relative_to(ws.resolve())
    except ValueError:
        return None
    return target


def main() -> int:
    ws = Path(os.environ.get("ACX_WORKSPACE", "."))
    prompt_file = os.environ.get("ACX_PROMPT_FILE")
    prompt = Path(prompt_file).read_text("utf-8") if prompt_file else ""
    model = os.environ.get("ACX_MODEL_ID")
    if not model:
        print("ACX_MODEL_ID is not set: no model to ask", file=sys.stderr)
        return 2
    sys.path.insert(0, SDK_DIR)
    from openai import OpenAI, OpenAIError

    try:
        client = OpenAI(timeout=120.0)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
        resp = client.chat.completions.create(model=model, messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": user_message(prompt, workspace_files(ws))},
        ])
    except OpenAIError as exc:
        print(f"model call failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    answer = (resp.choices[0].message.content or "") if resp.choices else ""
    usage = resp.usage
    print(f"model {resp.model} answered {len(answer)} chars"
          + (f" ({usage.prompt_tokens} in, {usage.completion_tokens} out)" if usage else ""))
    written = 0
    for rel, text in parse_answer(answer).items():
        target = safe_target(ws, rel)
        if target is None:
            print(f"refusing to write {rel!r}", file=sys.stderr)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
        written += 1
        print(f"wrote {rel} ({len(text)} chars)")
    if not written:
        print("the answer named no file to write", file=sys.stderr)
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
