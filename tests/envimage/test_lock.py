"""requirements-test.lock, which scripts/test.sh installs with --require-hashes, pins every dependency the project
declares (runtime and the test extra), each with its sha256: a dependency added to pyproject.toml without renewing
the lock (scripts/check-newest.sh --write) fails here, not on a fresh machine."""

from __future__ import annotations

import re
import tomllib

from ..support.env import ROOT


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_pins_every_declared_dependency_with_a_hash() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    declared = {_norm(re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0])
                for req in [*project["dependencies"], *project["optional-dependencies"]["test"]]}
    text = (ROOT / "requirements-test.lock").read_text("utf-8")
    pins = dict(re.findall(r"^([A-Za-z0-9][\w.-]*)==(\S+) \\\n    --hash=sha256:[0-9a-f]{64}$", text, flags=re.M))
    entries = [ln for ln in text.splitlines() if ln and not ln.startswith((" ", "#"))]
    assert len(pins) == len(entries), "every entry is NAME==VERSION with a sha256 hash on the next line"
    missing = sorted(declared - {_norm(n) for n in pins})
    assert not missing, f"not in requirements-test.lock (renew it: scripts/check-newest.sh --write): {missing}"
    assert "setuptools" in pins  # the project is installed from the lock with --no-build-isolation
    assert pins["trueskill"] == "0.4.5"  # pinned in pyproject.toml too: the lock agrees with it
