"""``exam certify``'s stderr: each exam's verdict as it finishes, and which stage each running exam is in.

On a terminal one status line is redrawn in place (:class:`acx_oci.cli.progress.ProgressDisplay`, as ``attest``
draws its games): ``exams ━━━━ 12/150 0:03:10 running: calc-001 gold 2/3, calc-002 mutants 3/8``. With
``--json-events`` every stage start is a JSON line ``{"event": "stage", "exam", "stage", "step", "of"}`` and every
verdict ``{"event": "exam", "line"}``. Plain stderr (a log file, CI) gets the verdict lines only: a stage line per
grade would be hundreds of lines per exam. stdout is never written here (``--json`` keeps its one document).
"""

from __future__ import annotations

import json
import sys
import threading

from acx_oci.cli.progress import ProgressDisplay
from acx_oci.services.exams import FINISHED, StageReport

#: Running exams named on the status line; the rest are counted (a terminal line is short).
SHOWN = 3
MAX_ID = 28


def status_text(running: dict[str, str]) -> str:
    """``running: a gold 2/3, b mutants 3/8 (+2 more)`` from exam id -> its stage, in the order they started."""
    if not running:
        return "running: -"
    names = [f"{e if len(e) <= MAX_ID else e[:MAX_ID - 1] + '…'} {s}" for e, s in list(running.items())[:SHOWN]]
    more = len(running) - SHOWN
    return "running: " + ", ".join(names) + (f" (+{more} more)" if more > 0 else "")


def stage_label(stage: str, step: int, of: int) -> str:
    """``gold 2/3``; a one-step stage is just its name."""
    return f"{stage} {step}/{of}" if of > 1 else stage


class CertifyProgress:
    """The verdict lines (:meth:`line`) and the stage reports (:attr:`stages`), thread-safe: exams certify in a
    thread pool and each thread reports its own exam's stages."""

    def __init__(self, total: int, *, json_events: bool, tty: bool) -> None:
        self.json_events, self.tty = json_events, tty and not json_events
        self.lock = threading.Lock()
        self.done, self.total = 0, total
        self.running: dict[str, str] = {}
        self.display = ProgressDisplay(label="exams") if self.tty else None

    @property
    def stages(self) -> StageReport | None:
        """The stage callback for :func:`acx_oci.services.exams.certify_suite`; None when nothing shows stages."""
        return self.stage if (self.json_events or self.tty) else None

    def _write(self, doc: dict[str, object]) -> None:
        sys.stderr.write(json.dumps(doc) + "\n")
        sys.stderr.flush()

    def line(self, text: str) -> None:
        """One exam's verdict as it finishes."""
        with self.lock:
            if self.json_events:
                self._write({"event": "exam", "line": text})
            elif self.display is not None:
                self.display.echo(text)
            else:
                print(text, file=sys.stderr, flush=True)

    def stage(self, exam: str, stage: str, step: int, of: int) -> None:
        """``exam`` starts ``stage`` (its ``step`` of ``of``); :data:`FINISHED` when its record is kept."""
        with self.lock:
            if stage == FINISHED:
                self.running.pop(exam, None)
                self.done, self.total = step, of
            else:
                self.running[exam] = stage_label(stage, step, of)
                if self.json_events:
                    self._write({"event": "stage", "exam": exam, "stage": stage, "step": step, "of": of})
            if self.display is not None:
                self.display(self.done, self.total, status_text(self.running))

    def stop(self) -> None:
        """Remove the status line (the verdict lines stay)."""
        if self.display is not None:
            self.display.stop()
