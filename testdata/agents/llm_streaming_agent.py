#!/usr/bin/env python3
"""An agent that makes one streamed chat completion and records when it saw each chunk.

Official openai SDK, ``stream=True`` with ``stream_options={"include_usage": True}``.
``/workspace/stream.json`` is rewritten (atomically) after every chunk, so a test can watch it while the
stream is still open::

    {"model": "...", "started": 1234.5, "chunks": [{"t": 1234.6, "text": "Hello "}, ...],
     "text": "Hello world", "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
     "done": true, "error": null}

``t`` is ``time.monotonic()`` when the SDK handed the chunk over (the clock is system-wide, so comparable
with the host's); ``text`` is the chunk's ``choices[0].delta.content`` (null for a chunk without choices,
such as the usage chunk). The prompt is the task prompt when there is one. Exits 0, or 1 on an error.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

SDK_DIR = "/usr/local/lib/acx-oci-sdk"


def save(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1), "utf-8")
    os.replace(tmp, path)


def main() -> int:
    ws = Path(os.environ.get("ACX_WORKSPACE", "."))
    out = ws / "stream.json"
    pf = os.environ.get("ACX_PROMPT_FILE")
    prompt = Path(pf).read_text("utf-8") if pf and Path(pf).is_file() else "Tell me a short story."
    doc: dict[str, Any] = {"model": os.environ.get("ACX_MODEL_ID", ""), "started": time.monotonic(), "chunks": [],
                           "text": "", "usage": None, "done": False, "error": None}
    save(out, doc)
    sys.path.insert(0, SDK_DIR)
    import openai

    try:
        client = openai.OpenAI(max_retries=0, timeout=120.0)
        stream = client.chat.completions.create(model=doc["model"], messages=[{"role": "user", "content": prompt}],
                                                stream=True, stream_options={"include_usage": True})
        for chunk in stream:
            now = time.monotonic()
            text = chunk.choices[0].delta.content if chunk.choices else None
            doc["chunks"].append({"t": now, "text": text})
            doc["text"] += text or ""
            if chunk.usage is not None:
                doc["usage"] = {"prompt_tokens": chunk.usage.prompt_tokens,
                                "completion_tokens": chunk.usage.completion_tokens,
                                "total_tokens": chunk.usage.total_tokens}
            save(out, doc)
            print(f"{now:.6f} {text!r}", flush=True)
    except openai.OpenAIError as exc:
        doc["error"] = f"{type(exc).__name__}: {exc}"[:1000]
        save(out, doc)
        print(doc["error"], file=sys.stderr)
        return 1
    doc["done"] = True
    save(out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
