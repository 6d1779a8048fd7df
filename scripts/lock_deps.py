"""Write requirements-test.lock: every distribution ``pip install -e '.[test]'`` brings, pinned with its sha256.

The lock is what ``scripts/test.sh`` installs (``pip install --require-hashes``), so the test command
passes on a fresh machine today and tomorrow whatever PyPI publishes in between; ``scripts/check-newest.sh``
tries the newest versions and, with ``--write``, renews the lock through this script.

Usage: python scripts/lock_deps.py [OUT]   (default: requirements-test.lock in the repository root)

It asks pip itself (``pip install --dry-run --report``) from a clean configuration: PyPI only (no local
find-links or extra indexes, whose files a fresh machine does not have), for this interpreter and platform
(CPython 3.11 on Linux x86_64, the project's machines). setuptools is pinned too: the project is then
installed with ``--no-build-isolation``, from the lock alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = """\
# The test environment, pinned with hashes: scripts/test.sh installs it with
#   pip install --require-hashes --no-deps -r requirements-test.lock
# then the project itself with --no-deps --no-build-isolation -e .
# Written by scripts/lock_deps.py (pip's own resolver, PyPI only) for {python} on {platform};
# renew with scripts/check-newest.sh --write (tries the newest versions first). Do not edit by hand.
"""


def clean_env() -> dict[str, str]:
    """The environment without pip settings that point at this machine's own wheel directories."""
    env = {k: v for k, v in os.environ.items() if not (k.startswith("PIP_") and k != "PIP_CERT")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def resolve() -> list[tuple[str, str, str]]:
    """(name, version, sha256) of every distribution the test extra needs, the project itself left out."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed",
                        "--report", str(report), "-e", f"{ROOT}[test]", "setuptools"],
                       check=True, env=clean_env(), cwd=tmp)
        doc = json.loads(report.read_text())
    pins = []
    for item in doc["install"]:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if item["download_info"].get("dir_info") is not None:  # the editable project
            continue
        hashes = item["download_info"].get("archive_info", {}).get("hashes", {})
        if "sha256" not in hashes:
            raise SystemExit(f"{name} {version}: pip reported no sha256 for {item['download_info'].get('url')}")
        pins.append((name.lower(), version, hashes["sha256"]))
    return sorted(pins)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "requirements-test.lock"
    pins = resolve()
    plat = f"{sys.platform} {os.uname().machine}"
    text = HEADER.format(python=f"CPython {sys.version_info.major}.{sys.version_info.minor}", platform=plat)
    text += "".join(f"{n}=={v} \\\n    --hash=sha256:{h}\n" for n, v, h in pins)
    out.write_text(text)
    print(f"{out}: {len(pins)} distributions pinned", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
