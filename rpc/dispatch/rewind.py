"""What a rewind must do, and its journal (docs/protocol.md, History).

The plan: every path the history log shows changed after the checkpoint returns to what it
held then (its first change since says what that was), provided it is still as this server
left it (its last change says which version that is); otherwise it is someone else's
change, a conflict. The journal is written, and fsynced, before the worker starts: a server
killed mid-rewind leaves each file as before or as restored (each is one atomic rename),
and the next rewind first completes the journal's plan, so the rewind is never left half
done.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from chorus_tools.rpc.dispatch.history import History
from chorus_tools.rpc.dispatch.history_room import logged_path, path_field
from chorus_tools.tools.errors import ToolError

JOURNAL = "rewind.json"


def plan(history: History, since: int) -> list[dict[str, Any]]:
    """[{path, sha256 (None: remove), mode, expected}] in path order."""
    first: dict[str, Any] = {}
    last: dict[str, Any] = {}
    for entry in history.entries_since(since):
        first.setdefault(entry.path, entry)
        last[entry.path] = entry
    items = []
    for path in sorted(first):
        then, now = first[path], last[path]
        if then.sha256 is None and now.after is None:
            continue  # made and removed since: nothing of it to undo
        items.append({"path": path, "sha256": then.sha256, "mode": then.mode,
                      "expected": now.after})
    return items


def with_content(history: History, items: list[dict[str, Any]],
                 checkpoint: str) -> list[dict[str, Any]]:
    """The items with the content each must get back; the byte budget may have dropped
    some, and a rewind that cannot restore everything restores nothing."""
    content = {i["sha256"]: history.read(i["sha256"]) for i in items
               if i["sha256"] is not None}
    gone = [i["path"] for i in items if i["sha256"] is not None
            and content[i["sha256"]] is None]
    if gone:
        raise ToolError("invalid_params", f"The history's byte budget (--history-bytes) "
                        f"has dropped content this rewind needs ({', '.join(gone[:5])}"
                        f"{', ...' if len(gone) > 5 else ''}); nothing was changed. "
                        "Restore the files you need one by one with file.restore, or "
                        "rewind to a later checkpoint.", param="checkpoint",
                        checkpoint=checkpoint, evicted=gone)
    return [{**i, "content": None if i["sha256"] is None else content[i["sha256"]]}
            for i in items]


def write_journal(history: History, checkpoint: str, items: list[dict[str, Any]],
                  force: bool) -> None:
    """Durably, before any file changes: a temp file, fsync, rename, fsync the directory."""
    folder = history.folder
    tmp = JOURNAL + ".tmp"
    fd = folder.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        data = orjson.dumps({"checkpoint": checkpoint, "force": force, "items": [
            {**{k: v for k, v in i.items() if k != "path"}, **path_field("path", i["path"])}
            for i in items]})
        written = 0  # at explicit offsets: a memory folder's descriptors share one
        while written < len(data):
            written += os.pwrite(fd, data[written:], written)
        os.fsync(fd)
    finally:
        os.close(fd)
    folder.rename(tmp, JOURNAL)
    folder.sync()


def read_journal(history: History) -> dict[str, Any] | None:
    try:
        fd = history.folder.open(JOURNAL, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        journal = orjson.loads(os.pread(fd, os.fstat(fd).st_size, 0))
    finally:
        os.close(fd)
    for item in journal["items"]:
        item["path"] = logged_path(item, "path")
        item.pop("pathx", None)
    return journal


def clear_journal(history: History) -> None:
    try:
        history.folder.unlink(JOURNAL)
    except FileNotFoundError:
        return
    history.folder.sync()
