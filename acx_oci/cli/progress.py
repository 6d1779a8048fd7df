"""A progress display on stderr for long runs: games, then the upload of their records.

One bar per phase (the phase is named by the text: ``uploaded ...`` is the push), so a
run that has played its 90 games no longer sits silently at "90/90" while ~91 blobs go up.
"""

from __future__ import annotations

from typing import Any


class ProgressDisplay:
    """Callable as ``(done, total, text)``; transient rich bars on stderr, started on first use."""

    def __init__(self, label: str = "games") -> None:
        self.label = label  # the main phase's name (``exam certify`` counts exams)
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self.cluster = ""  # per-worker counts from a Dask executor, shown after the games bar's text

    def __call__(self, done: int, total: int, text: str) -> None:
        phase = "upload" if text.startswith("uploaded") else self.label
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("{task.fields[phase]:>6}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("{task.description}"), transient=True,
                                 console=Console(stderr=True))
            self._bar.start()
        if phase not in self._tasks:
            self._tasks[phase] = self._bar.add_task("", total=total, phase=phase)
        if phase == self.label and self.cluster:
            text = f"{text}  {self.cluster}"
        self._bar.update(self._tasks[phase], completed=done, total=total, description=text)

    def echo(self, line: str) -> None:
        """A line printed above the bar (below it nothing moves), or plainly on stderr before any bar."""
        if self._bar is None:
            import sys

            print(line, file=sys.stderr, flush=True)
        else:
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def stop(self) -> None:
        """Remove the transient bar; safe to call when no progress was ever shown."""
        if self._bar is not None:
            self._bar.stop()
