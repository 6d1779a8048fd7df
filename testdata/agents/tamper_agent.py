#!/usr/bin/env python3
"""An agent whose solution is right but rewrites its own workspace when graded.

Solutions are only allowed to be graded as submitted: the graded tree must
hash to the submitted one, so this agent's games must come out ``invalid``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path


def main() -> None:
    ws = Path(os.environ.get("ACX_WORKSPACE", "."))
    stub = (ws / "solution.py").read_text()
    name, sig = re.search(r"^def (\w+)\(([^)]*)\):", stub, re.M).groups()  # type: ignore[union-attr]
    body = "return a + b" if name == "add" else "return None"
    (ws / "solution.py").write_text(
        "from pathlib import Path\n\nPath('graded.marker').write_text('I was here')\n\n\n"
        f"def {name}({sig}):\n    {body}\n")


if __name__ == "__main__":
    main()
