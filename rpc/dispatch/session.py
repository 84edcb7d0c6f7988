"""The `claude` set's read-before-write state (SPEC §7): per session, the version of every
file a result showed the client or wrote, kept by the dispatcher (workers are shared and
never see a session), so it lives as long as the server's one client.

Calls that show or write a file (`read_state` "shown": file.read, file.write,
file.patch and the claude tools built on them) leave their result's `version`; the
claude writers ("guarded") get the remembered version as `read_version`; a deletion
("removed") forgets the path. Paths are keyed after lexical normalisation.
"""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.method import Method
from chorus_tools.tools.confine.sandbox import normalize


class ReadVersions:
    def __init__(self, roots: tuple[str, ...]) -> None:
        self._roots = roots
        self._seen: dict[str, str] = {}

    def _key(self, method: Method, params: dict[str, Any]) -> str | None:
        try:
            return normalize(method.path_of(params), roots=self._roots)
        except ToolError:
            return None  # refused by the tool itself, with this same error

    def prepare(self, method: Method, params: dict[str, Any]) -> dict[str, Any]:
        """The params a guarded writer runs with: plus the version its file was seen at."""
        if method.read_state != "guarded":
            return params
        key = self._key(method, params)
        return {**params, "read_version": self._seen.get(key) if key else None}

    def note(self, method: Method, params: dict[str, Any], result: Any) -> None:
        """Remember what a successful call showed or wrote; forget what it removed."""
        state = method.read_state
        if not state or (method.mutating and not method.mutates(params)):
            return  # a dry run showed no file
        key = self._key(method, params)
        if key is None:
            return
        if state == "removed":
            self._seen.pop(key, None)
        elif isinstance(result, dict) and isinstance(result.get("version"), str):
            self._seen[key] = result["version"]
