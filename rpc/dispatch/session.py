"""The `claude` set's read-before-write state (`not_read` in docs/protocol.md, Errors): per
workspace, the version of every file a result showed a client or wrote, kept by the
dispatchers (workers are shared and never see a client): on disk (rpc/dispatch/read_store.py,
the default when the claude set is served), so it outlives the process for clients that
spawn a server per call, else in memory for the server's life; either way one memory for
every transport and session of the workspace (stdio, and each HTTP session).

Calls that show or write a file (`read_state` "shown": file.read, file.write,
file.patch and every set's tools built on them, a read-only command such as the anthropic
editor's `view` included) leave their result's `version`, or each `files` entry's (a V4A
patch: a file it deleted or moved away is forgotten); the claude writers ("guarded") get
the remembered version as `read_version`; a deletion ("removed") forgets the path. Paths
are keyed as the invoker normalised them (lexically, once per call); a patch's files by
the workspace-relative paths its result names, the same form.
"""

from __future__ import annotations

from typing import Any, Protocol

from chorus_tools.tools.method import Method


class Seen(Protocol):
    """Where the versions are kept: a dict, or a ReadStore on disk."""

    def get(self, key: str, /) -> str | None: ...

    def __setitem__(self, key: str, version: str, /) -> None: ...

    def pop(self, key: str, default: None, /) -> str | None: ...


class ReadVersions:
    """The versions seen, by path as the invoker normalised it (`key`: None when the
    path has no normal form, and the tool refuses it)."""

    def __init__(self, seen: Seen | None = None) -> None:
        self._seen: Seen = {} if seen is None else seen

    def prepare(self, method: Method, params: dict[str, Any],
                key: str | None) -> dict[str, Any]:
        """The params a guarded writer runs with: plus the version its file was seen at."""
        if method.read_state != "guarded":
            return params
        return {**params, "read_version": self._seen.get(key) if key else None}

    def note(self, method: Method, params: dict[str, Any], result: Any,
             key: str | None) -> None:
        """Remember what a successful call showed or wrote; forget what it removed."""
        state = method.read_state
        if not state or (method.mutating and not method.mutates(params)
                         and not method.only_reads(params)):
            return  # a dry run showed no file
        if state == "shown" and isinstance(result, dict) and "files" in result:
            self._files(result["files"])
        elif key is None:
            return
        elif state == "removed":
            self._seen.pop(key, None)
        elif isinstance(result, dict) and isinstance(result.get("version"), str):
            self._seen[key] = result["version"]

    def _files(self, files: Any) -> None:
        """A many-file change's `files` ({path, version, from?}): each written file's
        version kept, a deleted one or a moved file's old path forgotten."""
        for entry in files if isinstance(files, list) else ():
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                continue
            if isinstance(entry.get("from"), str):
                self._seen.pop(entry["from"], None)
            if isinstance(entry.get("version"), str):
                self._seen[entry["path"]] = entry["version"]
            else:
                self._seen.pop(entry["path"], None)
