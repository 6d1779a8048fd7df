"""What a sandboxed program's stdout or stderr keeps: its head and its tail, bounded.

A program's output is read to the end (so it never blocks on a full pipe) but kept only in part. Keeping the
head alone lost what a run says last: pytest's summary line (the subtest count the report check needs) came
after 64 KiB of tracebacks on pyparsing's 1928-test run, and the grade was read as a broken report.
"""

from __future__ import annotations

#: The head kept of each stream (what the run said first: the boot's own lines, the first error).
MAX_CAPTURE = 64 * 1024
#: The tail kept after it, once the head is full (what the run said last: pytest's summary, a last error).
MAX_TAIL = 16 * 1024


class Capture:
    """One stream's kept bytes: the first :data:`MAX_CAPTURE`, then a rolling last :data:`MAX_TAIL`; what fell
    between is replaced by one marker line saying how many bytes were left out."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Take the next bytes read from the stream."""
        room = MAX_CAPTURE - len(self.head)
        if room > 0:
            self.head.extend(chunk[:room])
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.extend(chunk)
        over = len(self.tail) - MAX_TAIL
        if over > 0:
            del self.tail[:over]
            self.dropped += over

    def value(self) -> bytes:
        """What is kept: the head, the marker line (when bytes fell between) and the tail."""
        if not self.dropped:
            return bytes(self.head + self.tail)
        return bytes(self.head) + f"\n[acx-oci: {self.dropped} bytes of output left out]\n".encode() + bytes(self.tail)
