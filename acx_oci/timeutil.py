"""Timestamps and durations from outside, parsed one way everywhere (stdlib only, pure).

Credentials, proofs and status lists carry XML Schema dateTimes with a zone
(``Z`` or ``+hh:mm``, optional fractional seconds); comparing them as text
orders ``-05:00`` wrongly, so every comparison goes through
:func:`parse_datetime`. Durations (``90s``, ``12h``, ``7d``, ``1w2d``) come from
flags and trust files. A :class:`Deadline` is a point on the monotonic clock that
network code consults (the ambient one comes from :func:`deadline_scope`): fixed (the
user's ``--deadline``), or sized to the work (:meth:`Deadline.sized`), which moves out
as bounded work is found, so a legitimate large resolve is not cut by a fixed default.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from acx_oci.errors import UsageError

DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_DURATION_RE = re.compile(r"^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_datetime(value: Any) -> datetime | None:
    """An XML Schema dateTime with a zone as an aware datetime, or None when it is not one."""
    if not isinstance(value, str) or not DATETIME_RE.match(value):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def parse_duration(value: str | int | float | None, what: str = "duration") -> float | None:
    """Seconds from ``3600``, ``"90s"``, ``"15m"``, ``"12h"``, ``"7d"``, ``"1w2d"``, ``"P7D"``-free; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise UsageError(f"{what}: expected seconds or a duration like 12h or 7d, found {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise UsageError(f"{what}: must not be negative")
        return float(value)
    text = str(value).strip().lower()
    if text.isdigit():
        return float(text)
    m = _DURATION_RE.match(text)
    if not text or not m or not any(m.groups()):
        raise UsageError(f"{what}: expected seconds or a duration like 90s, 15m, 12h, 7d, found {value!r}")
    w, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
    return float((((w * 7 + d) * 24 + h) * 60 + mi) * 60 + s)


#: The work-sized bound: this much for any command, then more per attestation listed and per MiB transferred.
WORK_BASE_SECONDS = 20.0
WORK_PER_REFERRER = 0.1  # fetch, verify (CPU: ~20 ms quiet, 3x that with both cores busy) and maybe replay one
WORK_PER_MIB = 1.0  # the transport's slowest acceptable rate (a trickle earns nothing)

_GROW = threading.Lock()


@dataclass(eq=False)
class Deadline:
    """A wall-clock budget as a point on the monotonic clock (immune to clock steps).

    ``seconds`` is the budget it was made with, kept for messages ("the 20 s deadline"). A *sized*
    deadline (:meth:`sized`) is moved out by :meth:`allow` as the bounded work becomes known
    (attestations listed, bytes received); a fixed one (:meth:`after`, the user's ``--deadline``) never moves.
    """

    at: float
    seconds: float
    is_sized: bool = False
    allowed: float = 0.0  # seconds added for the work found so far (sized only)
    work: dict[str, float] = field(default_factory=dict)  # what was found: {"attestations": 1000, "MiB": 3.2}

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """A fixed deadline ``seconds`` from now (a negative budget is already over)."""
        return cls(time.monotonic() + max(0.0, seconds), seconds)

    @classmethod
    def sized(cls, base: float = WORK_BASE_SECONDS) -> Deadline:
        """A deadline ``base`` seconds from now that :meth:`allow` moves out as the work is found."""
        return cls(time.monotonic() + max(0.0, base), base, is_sized=True)

    def allow(self, what: str, amount: float, per_unit: float) -> None:
        """Move a sized deadline out by ``amount * per_unit`` seconds for ``amount`` of ``what`` found
        (thread-safe: the workers of one operation share it); a fixed deadline is left as it is."""
        if not self.is_sized or amount <= 0:
            return
        with _GROW:
            self.at += amount * per_unit
            self.allowed += amount * per_unit
            self.work[what] = self.work.get(what, 0.0) + amount

    def describe(self) -> str:
        """Which deadline this is, for messages: "the 3 s deadline (--deadline)" or the work-sized bound's sum."""
        if not self.is_sized:
            return f"the {self.seconds:g} s deadline (--deadline)"
        found = ", ".join(f"{v:.2f} {k}" if k == "MiB" else f"{v:g} {k}" for k, v in self.work.items())
        return (f"the work-sized time bound ({self.seconds:g} s + {self.allowed:.1f} s for the work found"
                f"{f' ({found})' if found else ''} = {self.seconds + self.allowed:.1f} s; --deadline sets a fixed one)")

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        """Whether the budget is used up."""
        return time.monotonic() >= self.at

    def earliest(self, other: Deadline | None) -> Deadline:
        """The sooner of two deadlines, so a request never outlives the operation it serves."""
        return self if other is None or self.at <= other.at else other


_SCOPE: ContextVar[Deadline | None] = ContextVar("acx_deadline", default=None)


def current_deadline() -> Deadline | None:
    """The deadline of the operation this thread is working for (None: only per-request timeouts)."""
    return _SCOPE.get()


@contextmanager
def deadline_scope(deadline: Deadline | None) -> Iterator[Deadline | None]:
    """Run the block under ``deadline`` (or the enclosing one when that is earlier).

    Ambient rather than a parameter because stores are called through a small
    protocol that has no room for it; worker threads start with an empty
    context, so code that fans out enters the scope again in each task.
    """
    effective = deadline.earliest(_SCOPE.get()) if deadline is not None else _SCOPE.get()
    token = _SCOPE.set(effective)
    try:
        yield effective
    finally:
        _SCOPE.reset(token)


_R = TypeVar("_R")


def carry_deadline(func: Callable[..., _R]) -> Callable[..., _R]:
    """``func`` under the caller's deadline, for a thread pool: its threads start with an empty context, so a
    fetch submitted bare would be bounded by ``--timeout`` alone, round after round, long past ``--deadline``."""
    deadline = current_deadline()

    def run(*args: Any, **kwargs: Any) -> _R:
        with deadline_scope(deadline):
            return func(*args, **kwargs)

    return run
