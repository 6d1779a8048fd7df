"""The ``--require`` grammar: ``TASKTYPE>=TIER|LEVEL`` and its ``@key=value`` options, parsed once.

``@model=ID`` (only levels earned with that model count) is parsed by
:func:`acx_oci.model.capability.parse_requirement`; this adds the options of issue 23,
which need a :class:`~acx_oci.evaluation.requirements.CapabilityRequirement` to judge:

* ``@minVerifiers=N`` — N distinct verifiers (distinct DIDs and keys) vouch; the level is the lowest of N
  (``quorum_unmet``);
* ``@maxAttempts=COUNT/WINDOW[/publisher]`` — at most COUNT attempts in the last WINDOW (``3/30d``) by the verifiers
  the trust file trusts (``too_many_attempts``).

Options may come in any order, e.g. ``build-dag>=senior@minVerifiers=2@maxAttempts=3/30d``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from acx_oci.errors import UsageError
from acx_oci.evaluation.attempts import SCOPE_CARTRIDGE, SCOPE_PUBLISHER, MaxAttempts
from acx_oci.evaluation.requirements import CapabilityRequirement
from acx_oci.model import VERIFIED, LevelFloor, Resolution, parse_requirement
from acx_oci.timeutil import parse_duration

_OPTION = re.compile(r"@(minVerifiers|maxAttempts)=([^@]*)")


@dataclass(frozen=True)
class ParsedRequire:
    """One ``--require``: the floor (and model), and the options that need the policy evaluator."""

    text: str
    base: LevelFloor
    min_verifiers: int | None = None
    max_attempts: MaxAttempts | None = None

    @property
    def has_options(self) -> bool:
        """Whether a quorum or an attempt bound is asked for (judged as a policy requirement)."""
        return self.min_verifiers is not None or self.max_attempts is not None

    def as_requirement(self) -> CapabilityRequirement:
        """The same requirement as a policy's capability requirement."""
        b = self.base
        return CapabilityRequirement(task_type=b.task_type, min_tier=b.min_tier, min_level=b.min_level,
                                     model=b.model, min_verifiers=self.min_verifiers, max_attempts=self.max_attempts)


def parse_max_attempts(count: object, window: object, where: str, scope: object = SCOPE_CARTRIDGE) -> MaxAttempts:
    """``{count, window, scope}`` (a policy) or ``COUNT/WINDOW[/SCOPE]`` (``--require``) as a bound; a bad one is a
    UsageError."""
    if scope not in (SCOPE_CARTRIDGE, SCOPE_PUBLISHER):
        raise UsageError(f"{where}: maxAttempts scope must be cartridge or publisher, found {scope!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise UsageError(f"{where}: maxAttempts count must be a whole number, found {count!r}")
    seconds = parse_duration(window if isinstance(window, str | int) else str(window), f"{where}: maxAttempts window")
    assert seconds is not None
    return MaxAttempts(count, seconds, str(window), str(scope))


def parse_require(text: str) -> ParsedRequire:
    """Parse one ``--require`` (bad input is a one-line UsageError, before any network)."""
    options: dict[str, str] = {}
    for key, value in _OPTION.findall(text):
        if key in options:
            raise UsageError(f"requirement {text!r}: @{key}= given twice")
        options[key] = value.strip()
    rest = _OPTION.sub("", text)
    base = parse_requirement(rest)
    min_verifiers = None
    if "minVerifiers" in options:
        value = options["minVerifiers"]
        if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= 64:
            raise UsageError(f"requirement {text!r}: @minVerifiers= expects a number from 1 to 64, found {value!r}")
        min_verifiers = int(value)
    bound = None
    if "maxAttempts" in options:
        count, slash, rest = options["maxAttempts"].partition("/")
        window, _, scope = rest.partition("/")
        if not slash or not count.strip().isdigit():
            raise UsageError(f"requirement {text!r}: @maxAttempts= expects COUNT/WINDOW[/publisher], e.g. 3/30d")
        bound = parse_max_attempts(int(count), window.strip(), f"requirement {text!r}",
                                   scope.strip() or SCOPE_CARTRIDGE)
    return ParsedRequire(text, base, min_verifiers, bound)


def unmet(resolution: Resolution, required: Sequence[ParsedRequire], now: datetime) -> list[str]:
    """A sentence for each ``--require`` the resolution does not meet, decided by the one evaluator every policy
    uses (:meth:`CapabilityRequirement.evaluate`), so ``resolve``, ``pull``, ``policy check`` and a gateway agree.

    One with options says its codes first (``quorum_unmet``, ``too_many_attempts``); a plain floor says what was
    found instead (the best verified level, why none verified, or that nothing claims it)."""
    failures = []
    for req in required:
        result = req.as_requirement().evaluate(resolution, now)
        if result.met:
            continue
        if req.has_options:
            failures.append(f"{req.text}: {', '.join(result.codes)}: {'; '.join(result.reasons[:3])}")
        else:
            failures.append(f"{req.text}: {_found(resolution, req.base)}")
    return failures


def _found(resolution: Resolution, floor: LevelFloor) -> str:
    """What a plain floor found instead, in the words ``resolve`` has always used (decided above, said here)."""
    caps = [c for c in resolution.capabilities if c.capability.task_type == floor.task_type]
    verified = [c for c in caps if c.effective == VERIFIED]
    best = [c.best for c in verified if c.best]
    if floor.model is not None:
        best = [a for c in verified for a in c.accepted if (a.model or {}).get("id") == floor.model]
        if not best:
            return f"no verified level earned with model {floor.model}"
    if best:
        return f"best verified is {best[0].career_tier} (level {best[0].acx_level})"
    if not caps:
        return "no such claim"
    codes = sorted({c for cap in caps for r in cap.rejected for c in r.codes})  # say *why* (e.g. revoked)
    return f"no verified claim ({'rejected: ' + ', '.join(codes) if codes else 'no attestation'})"
