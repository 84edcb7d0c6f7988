"""Audit records: one JSON line per mutating call, appended by the dispatcher outside the
workspace (where no tool call can reach), written before the response is sent."""

from __future__ import annotations

import os
import time
from typing import Any

from chorus_tools.rpc.wire.envelope import dumps
from chorus_tools.tools.context import EACH_FILE
from chorus_tools.tools.timefmt import iso_utc

RECORDS_FILE = "records.jsonl"
_LINES_A_WRITE = 4096  # an archive's lines go in writes of this many, each whole


def inside(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


class Records:
    def __init__(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        self._fd = os.open(os.path.join(directory, RECORDS_FILE),
                           os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def append(self, *, rid: Any, method: str, path: Any, outcome: str,
               audit: dict[str, Any] | None, more_paths: dict[str, Any] | None = None
               ) -> None:
        """One line, one write(2) on an O_APPEND descriptor: lines never interleave.
        `more_paths` are a method's other path params as given (file.move's
        `destination`), each after `path`; a call whose params name no path (an upload's
        commit) has its tool name it in `audit`."""
        audit = audit or {}
        line = {
            "time": iso_utc(time.time_ns()),
            "id": rid, "method": method, "path": audit.get("path", path),
            **(more_paths or {}),
            "outcome": outcome,
            "bytes": audit.get("bytes", 0) if outcome == "ok" else 0,
            "sha256_before": audit.get("sha256_before"),
            "sha256_after": audit.get("sha256_after"),
            **({"files": audit["files"]} if "files" in audit else {}),  # apply_patch's
        }
        each = audit.get(EACH_FILE) if outcome == "ok" else None
        if not each:  # the response's encoder: an id beyond 64 bits or a lone surrogate
            os.write(self._fd, dumps(line) + b"\n")  # the client sent is kept as given
            return
        # a change of many files (an archive import): one line per file, as a write's
        for start in range(0, len(each), _LINES_A_WRITE):
            os.write(self._fd, b"".join(dumps(
                {**line, "path": path, "bytes": nbytes, "sha256_before": before,
                 "sha256_after": after}) + b"\n"
                for path, nbytes, before, after in each[start:start + _LINES_A_WRITE]))

    def close(self) -> None:
        os.close(self._fd)
