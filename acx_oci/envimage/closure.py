"""The dependency closure for the image's Python, not the host's: what ``pip download`` leaves out.

``pip download --python-version 3.9`` picks wheels for 3.9 but evaluates environment markers with the host's
interpreter, so on a 3.11 host ``pytest``'s ``exceptiongroup; python_version < "3.11"`` is never fetched and
every 3.9 image's pytest fails to import. Here each downloaded wheel's ``Requires-Dist`` is read (from the
wheel's METADATA, never by running anything) and its markers evaluated for the target; what holds there and
no wheel provides is downloaded too, round by round, within bounds.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from acx_oci.errors import AcxError

#: Rounds of downloads and bytes of one wheel's METADATA read: a hostile index cannot make either unbounded.
MAX_ROUNDS = 8
MAX_METADATA = 1 << 20


def target_environment(python: str, machine: str) -> dict[str, str]:
    """The marker environment of CPython ``X.Y`` on Debian Linux ``machine`` (packaging's names)."""
    return {"python_version": python, "python_full_version": f"{python}.0", "implementation_name": "cpython",
            "implementation_version": f"{python}.0", "platform_python_implementation": "CPython",
            "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": machine,
            "platform_release": "", "platform_version": ""}


def _metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        if len(names) != 1:
            raise AcxError(f"env build: {wheel.name} has {len(names)} METADATA files (expected one)")
        info = zf.getinfo(names[0])
        if info.file_size > MAX_METADATA:
            raise AcxError(f"env build: {wheel.name}'s METADATA is {info.file_size} bytes (at most {MAX_METADATA})")
        return zf.read(info).decode("utf-8", "replace")


def _holds(req: Requirement, env: dict[str, str], extras: Iterable[str]) -> bool:
    if req.marker is None:
        return True
    try:
        return any(req.marker.evaluate({**env, "extra": e}) for e in ("", *extras))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return False


def _parse(line: str) -> Requirement | None:
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


def missing(dist: Path, top: Iterable[str], env: dict[str, str], excluded: Iterable[str] = ()) -> list[str]:
    """Requirements (name, extras, versions; no marker) that hold for ``env`` and no wheel in ``dist`` provides;
    never one named in ``excluded`` (the package under test is not installed, so not fetched either)."""
    skip = {canonicalize_name(n) for n in excluded}
    have = {canonicalize_name(w.name.split("-", 1)[0]): w for w in dist.glob("*.whl")}
    extras: dict[str, set[str]] = {}
    wanted: list[Requirement] = [r for r in map(_parse, top) if r is not None and _holds(r, env, ())]
    seen: set[str] = set()
    out: list[str] = []
    while wanted:
        req = wanted.pop()
        name = canonicalize_name(req.name)
        new_extras = set(req.extras) - extras.get(name, set())
        if (name in seen and not new_extras) or name in skip:
            continue
        seen.add(name)
        extras.setdefault(name, set()).update(req.extras)
        wheel = have.get(name)
        if wheel is None:
            out.append(str(Requirement(str(req).split(";", 1)[0])))
            continue
        for line in re.findall(r"(?m)^Requires-Dist:\s*(.+?)\s*$", _metadata(wheel)):
            dep = _parse(line)
            if dep is not None and _holds(dep, env, extras[name]):
                wanted.append(dep)
    return sorted(set(out))


def complete(dist: Path, top: Iterable[str], env: dict[str, str], download: Callable[[list[str]], None],
             excluded: Iterable[str] = ()) -> None:
    """Download what the target needs and ``dist`` lacks until nothing is missing (at most :data:`MAX_ROUNDS`)."""
    top, excluded = list(top), list(excluded)
    for _ in range(MAX_ROUNDS):
        more = missing(dist, top, env, excluded)
        if not more:
            return
        download(more)
    raise AcxError(f"env build: the dependency closure for Python {env['python_version']} did not settle in "
                   f"{MAX_ROUNDS} rounds of downloads")
