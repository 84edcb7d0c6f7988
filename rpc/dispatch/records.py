"""Audit records: one JSON line per mutating call, appended by the dispatcher outside the
workspace (where no tool call can reach), written before the response is sent."""

from __future__ import annotations

import os
import time
from typing import Any

import orjson

from chorus_tools.tools.timefmt import iso_utc

RECORDS_FILE = "records.jsonl"


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
        os.write(self._fd, orjson.dumps(line) + b"\n")

    def close(self) -> None:
        os.close(self._fd)
