#!/usr/bin/env python3
"""An agent that keeps calling the model until it is refused: a budget (calls or tokens) must stop it.

Up to ``$ACX_LOOP_MAX`` (default 1000) chat completions through the official openai SDK with retries off
(``max_retries=0``: each call is one HTTP request), stopping at the first HTTP 429 -- or at any other failure.
``/workspace/calls.json`` (rewritten after every call, so a kill leaves it current)::

    {"ok": 12, "attempted": 13, "stopped": {"status": 429, "error": "RateLimitError", "message": "..."},
     "prompt_tokens": 96, "completion_tokens": 60, "statuses": {"200": 12, "429": 1}, "done": true}

``stopped`` is null when every one of the ``ACX_LOOP_MAX`` calls succeeded. Exits 0.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

SDK_DIR = "/usr/local/lib/acx-oci-sdk"


def save(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True), "utf-8")
    os.replace(tmp, path)


def main() -> int:
    ws = Path(os.environ.get("ACX_WORKSPACE", "."))
    out = ws / "calls.json"
    limit = int(os.environ.get("ACX_LOOP_MAX", "1000"))
    model = os.environ.get("ACX_MODEL_ID", "")
    doc: dict[str, Any] = {"ok": 0, "attempted": 0, "stopped": None, "prompt_tokens": 0, "completion_tokens": 0,
                           "statuses": {}, "done": False, "model": model}
    save(out, doc)
    sys.path.insert(0, SDK_DIR)
    import openai

    client = openai.OpenAI(max_retries=0, timeout=60.0)
    for i in range(limit):
        doc["attempted"] += 1
        try:
            resp = client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": f"call number {i}: say something"}])
        except openai.APIStatusError as exc:
            doc["statuses"][str(exc.status_code)] = doc["statuses"].get(str(exc.status_code), 0) + 1
            doc["stopped"] = {"status": exc.status_code, "error": type(exc).__name__, "message": str(exc)[:500]}
            break
        except openai.OpenAIError as exc:  # connection refused, timeout, ...: no status
            doc["stopped"] = {"status": None, "error": type(exc).__name__, "message": str(exc)[:500]}
            break
        doc["ok"] += 1
        doc["statuses"]["200"] = doc["statuses"].get("200", 0) + 1
        if resp.usage is not None:
            doc["prompt_tokens"] += resp.usage.prompt_tokens
            doc["completion_tokens"] += resp.usage.completion_tokens
        save(out, doc)
    doc["done"] = True
    save(out, doc)
    print(f"{doc['ok']} calls succeeded of {doc['attempted']}; stopped: {doc['stopped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
