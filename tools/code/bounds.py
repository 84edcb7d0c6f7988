"""How far the server parses a file for the syntax guard and diagnostics: at most
`--syntax-max-bytes` of text, within `--syntax-timeout` seconds for one call (the
docs/protocol.md sections "file.patch" and "Diagnostics").

A 50 MB one-line bundle once took a tree-sitter parse of ~60 s and 9 GiB, and a 1 MiB
file of binary-looking junk sent the Rust grammar's error recovery into a minute of
work. Past a bound nothing is judged: the guard refuses a looser-tier edit it cannot
check, and diagnostics say they were skipped and why. The guard and diagnostics of one
call share one Budget, so the call as a whole stays within the time given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


class Skipped(Exception):
    """A text the bounds keep from being parsed: `reason` says which, as a reply shows it
    (`file over 4194304 bytes`); `kind` is "size" (then `size` is the text's), "time", or
    "depth" (nested deeper than its parser goes), `limit` the bound's value."""

    def __init__(self, reason: str, kind: str, limit: float, size: int = 0) -> None:
        super().__init__(reason)
        self.reason, self.kind, self.limit, self.size = reason, kind, limit, size

    @classmethod
    def of_size(cls, limit: int, size: int) -> Skipped:
        return cls(f"file over {limit} bytes", "size", limit, size)


@dataclass
class Budget:
    """The bounds of one call's parsing: bytes per text, and seconds from the first parse
    on (a call that parses nothing spends nothing)."""

    max_bytes: int
    seconds: float
    _deadline: float | None = field(default=None, repr=False)

    def admit(self, size: int) -> None:
        """Skipped unless a text of `size` bytes may be parsed; starts the clock."""
        if size > self.max_bytes:
            raise Skipped.of_size(self.max_bytes, size)
        if self._deadline is None:
            self._deadline = time.monotonic() + self.seconds
        self.check()

    def left(self) -> float:
        """Seconds of the call's parsing time still to spend (all of them before the
        first parse): how long a checker process may run."""
        if self._deadline is None:
            return self.seconds
        return max(0.0, self._deadline - time.monotonic())

    def expired(self) -> bool:
        return self._deadline is not None and time.monotonic() > self._deadline

    def check(self) -> None:
        """Skipped once the call's parsing time is spent."""
        if self.expired():
            raise self.timed_out()

    def timed_out(self) -> Skipped:
        return Skipped(f"parsing took over {self.seconds:g} s", "time", self.seconds)
