"""Poetry's own tables in ``pyproject.toml``, read as PEP 508 requirement strings (text only, never run).

A Poetry project (rich, before its ``[project]`` table) declares its dependencies in ``[tool.poetry.dependencies]``
and its test tools in ``[tool.poetry.dev-dependencies]`` or ``[tool.poetry.group.NAME.dependencies]``, with
Poetry's constraint syntax (``^2.13.0``, ``~1.2``, ``*``, tables with ``version``/``optional``/``extras``/
``markers``). Without them the environment lacked the package's own dependencies (pygments, markdown-it-py)
and every test failed on the reference. Each entry becomes one requirement string that still passes the one
door (:mod:`acx_oci.envimage.requirement`); what cannot be said in PEP 508 (a git, path or url source) is named,
never guessed. Versions are what the lock decides anyway (``poetry.lock`` → constraints); these say which.
"""

from __future__ import annotations

import re
from typing import Any

from acx_oci.envimage import normalize

_PLAIN = re.compile(r"^\d+(\.\d+){0,3}(\.\*)?$")
_CARET_TILDE = re.compile(r"^([\^~])\s*(\d+(?:\.\d+){0,3})$")
_OPS = re.compile(r"^(===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_EXTRA = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: Poetry's keys for where a dependency comes from other than the index: nothing to resolve.
_NOT_INDEX = ("git", "path", "url", "file", "develop")


def _bound(kind: str, version: str) -> str:
    """``^X.Y.Z`` / ``~X.Y.Z`` as Poetry defines them, as a PEP 440 range."""
    parts = [int(p) for p in version.split(".")]
    if kind == "^":  # the first non-zero part may not change (all given zero: the last given may not)
        keep = next((i for i, p in enumerate(parts) if p != 0), len(parts) - 1)
    else:  # ~X: X may not change; ~X.Y and ~X.Y.Z: X.Y may not
        keep = 0 if len(parts) == 1 else 1
    upper = parts[:keep + 1]
    upper[-1] += 1
    return f">={version},<{'.'.join(map(str, upper))}"


def specifier(text: str) -> str | None:
    """Poetry's constraint as a PEP 440 specifier (``""`` for any version); None: not one we can say."""
    text = text.strip()
    if text in ("", "*"):
        return ""
    if "||" in text or "|" in text:
        return None  # a union: PEP 440 cannot say it; the name alone, the lock decides
    out: list[str] = []
    for part in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", text):
        if (m := _CARET_TILDE.match(part)) is not None:
            out.append(_bound(m.group(1), m.group(2)))
        elif _PLAIN.match(part):
            out.append(f"=={part}")
        elif _OPS.match(part):
            out.append(part.replace(" ", ""))
        else:
            return None
    return ",".join(out)


def requirement(name: str, value: Any) -> tuple[str | None, str | None]:
    """``(requirement, None)``, ``(None, why it is left out)`` or ``(None, None)`` for an optional one."""
    if not isinstance(name, str) or not _NAME.match(name):
        return None, f"{str(name)[:60]!r} (not a package name)"
    if isinstance(value, list):  # one entry per Python or platform: the name, the lock picks the version
        return name, None
    version, extras, markers = value, [], ""
    if isinstance(value, dict):
        if value.get("optional") is True:
            return None, None
        if any(k in value for k in _NOT_INDEX):
            return None, f"{name} (a {next(k for k in _NOT_INDEX if k in value)} source, not the index)"
        version = value.get("version", "*")
        extras = [e for e in value.get("extras") or [] if isinstance(e, str) and _EXTRA.match(e)]
        markers = str(value["markers"]) if isinstance(value.get("markers"), str) else ""
    if not isinstance(version, str):
        return None, f"{name} (a version that is not text)"
    spec = specifier(version)
    line = name + (f"[{','.join(extras)}]" if extras else "") + (spec or "")
    return line + (f"; {markers}" if markers else ""), None


def _table(doc: Any, *keys: str) -> dict[str, Any]:
    for k in keys:
        doc = doc.get(k) if isinstance(doc, dict) else None
    return doc if isinstance(doc, dict) else {}


def read(doc: dict[str, Any], test_groups: tuple[str, ...]) -> list[tuple[list[str], list[str], str]]:
    """``(requirements, left out, where)`` for each Poetry table a test run needs: the dependencies (``python``
    is the interpreter, not a package), then the test groups (``dev`` when the project names none of them)."""
    poetry = _table(doc, "tool", "poetry")
    if not poetry:
        return []
    out: list[tuple[list[str], list[str], str]] = []
    groups = {normalize(k): _table(v, "dependencies") for k, v in _table(poetry, "group").items()}
    tables = [("dependencies", _table(poetry, "dependencies"))]
    tests = [k for k in test_groups if groups.get(k)]
    for key in tests or ["dev"]:
        if groups.get(key):
            tables.append((f"group.{key}.dependencies", groups[key]))
    if not tests and _table(poetry, "dev-dependencies"):
        tables.append(("dev-dependencies", _table(poetry, "dev-dependencies")))
    for where, table in tables:
        reqs: list[str] = []
        left: list[str] = []
        for name, value in table.items():
            if where == "dependencies" and normalize(str(name)) == "python":
                continue
            line, why = requirement(name, value)
            if line is not None:
                reqs.append(line)
            elif why is not None:
                left.append(why)
        out.append((reqs, left, f"pyproject.toml [tool.poetry.{where}]"))
    return out


def meta(doc: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """``(name, python constraint as PEP 440, classifiers, version)`` of ``[tool.poetry]`` (None where absent)."""
    poetry = _table(doc, "tool", "poetry")
    python = _table(poetry, "dependencies").get("python")
    requires = specifier(python) if isinstance(python, str) else None
    return poetry.get("name"), requires or None, poetry.get("classifiers"), poetry.get("version")
