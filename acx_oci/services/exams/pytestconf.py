"""The repository's pytest settings, read from its base tree at import: configuration only, bounded.

Upstream's tests run under upstream's settings (``asyncio_mode = auto`` makes ``async def`` tests run;
``filterwarnings``, ``markers``, ``xfail_strict``, the ``python_*`` collection patterns). The grader never
reads a file of the workspace as configuration, so ``exam import`` reads them here, from the file pytest
itself would choose at the repository's root (``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``'s
``[tool.pytest.ini_options]``, ``tox.ini``'s ``[pytest]``, ``setup.cfg``'s ``[tool:pytest]``, first found
wins), keeps only the keys in :data:`KEYS` and writes them into the hidden grader config, which the grader
passes as ``-o KEY=VALUE``. ``addopts`` (options, plugins to load), ``conftest.py`` and plugins in the tree
are never taken: plugins come from the environment's installed packages.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

#: The settings taken: what changes how upstream's tests are collected, marked and warned about.
KEYS = frozenset({"asyncio_mode", "asyncio_default_fixture_loop_scope", "asyncio_default_test_loop_scope",
                  "filterwarnings", "markers", "xfail_strict", "python_files", "python_classes",
                  "python_functions", "usefixtures", "empty_parameter_set_mark", "mock_use_standalone_module",
                  "log_level", "doctest_optionflags", "anyio_mode", "pythonpath"})
#: ``pythonpath`` entries: folders of the repository (filelock's ``[".", "tasks"]``), never a way out of it.
_PATH = re.compile(r"^(?!.*(^|/)\.\.(/|$))[A-Za-z0-9_.][A-Za-z0-9_./-]{0,199}$")
MAX_PATH_FILES = 200
MAX_FILE = 256 * 1024
MAX_VALUE = 16 * 1024
#: (file, section) in pytest's own order of choice.
SOURCES = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("pyproject.toml", "tool.pytest.ini_options"),
           ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return "\n".join(str(v) for v in value)
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _section(name: str, text: str, section: str) -> dict[str, Any] | None:
    """The settings of ``section`` in one file, or None when the file has no such section (or cannot be read)."""
    if name == "pyproject.toml":
        try:
            doc: Any = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError, RecursionError):
            return None
        for part in section.split("."):
            doc = doc.get(part) if isinstance(doc, dict) else None
        return doc if isinstance(doc, dict) else None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, name)
    except (configparser.Error, ValueError):
        return None
    return dict(parser.items(section)) if parser.has_section(section) else None


def settings(base: Mapping[str, str]) -> tuple[dict[str, str], str | None]:
    """(the settings kept, the file they came from) of the base tree's root pytest configuration."""
    for name, section in SOURCES:
        text = base.get(name)
        if text is None or len(text) > MAX_FILE:
            continue
        found = _section(name, text, section)
        if found is None:
            if name in ("pytest.ini", ".pytest.ini"):  # pytest takes these even without the section
                return {}, name
            continue
        out = {k: t.strip() for k, v in found.items()
               if k in KEYS and (t := _text(v)) is not None and len(t) <= MAX_VALUE}
        paths = out.get("pythonpath", "").split()
        if len(paths) > 8 or not all(_PATH.match(d) for d in paths):
            out.pop("pythonpath", None)  # the grader's boot puts these on sys.path, inside the hidden tree only
        return {k: v for k, v in out.items() if v}, name
    return {}, None


def path_files(names: Iterable[str], ini: Mapping[str, str]) -> list[str]:
    """The Python modules of the folders the repository's ``pythonpath`` setting names (but ``.``): they go with
    the hidden tests, which import them as upstream's pytest would find them (filelock's ``tasks/capabilities``)."""
    dirs = [d.strip("/") for d in ini.get("pythonpath", "").split() if d.strip("/") not in ("", ".")]
    return sorted(p for p in names if p.endswith(".py") and any(p.startswith(d + "/") for d in dirs))[:MAX_PATH_FILES]
