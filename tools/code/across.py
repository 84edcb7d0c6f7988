"""A workspace-wide code call's files parsed inline when they are few, else across the
worker pool (a FanOut, tools/walk/fanout.py); one merge class makes the reply either way,
so both give the same answer."""

from __future__ import annotations

import math
from typing import Any, Iterator, NamedTuple

from chorus_tools.tools.code.narrow import Candidates
from chorus_tools.tools.code.source import read_candidate
from chorus_tools.tools.code.symbols import supported
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.method import load
from chorus_tools.tools.walk.fanout import FanOut, shared

INLINE_FILES = 8  # up to this many files are parsed in the calling worker
PARTS_PER_WORKER = 2


def parse_across(ctx: ToolContext, chosen: Candidates, part: str, reply: Reply,
                 **query: Any) -> dict[str, Any] | FanOut:
    """Run `part` ("module:function", called as part(ctx, files=..., **query), returning
    `{"rows": [(sort key, record)], "parsed": n, "skipped": n}`) over the chosen files;
    the rows sorted and cut make the reply."""
    files = chosen.files
    args = {"reply": reply, "skipped": chosen.skipped, "rows": chosen.rows,
            "total": chosen.total}
    if len(files) <= INLINE_FILES:
        merger = Merge(args)
        merger.add(load(part)(ctx, files=files, **query))
        return merger.finish()
    size = max(INLINE_FILES, math.ceil(len(files) / (PARTS_PER_WORKER * ctx.workers)))
    parts = [{"files": files[i:i + size]} for i in range(0, len(files), size)]
    return FanOut(part=part, parts=parts, merge="chorus_tools.tools.code.across:Merge",
                  args=args, shared=shared(**query), sizes=[len(p["files"]) for p in parts],
                  unit="files parsed")


def readable(ctx: ToolContext, files: list[str],
             counts: dict[str, int]) -> Iterator[tuple[str, str, bytes]]:
    """(path, grammar, bytes) of each file a parser here reads; `counts` gains how many
    were "parsed" and how many "skipped" (unreadable, binary, or no language of ours)."""
    counts.setdefault("parsed", 0)
    counts.setdefault("skipped", 0)
    for rel in files:
        data = read_candidate(ctx, rel)
        grammar = None if data is None else supported(rel, data)
        if data is None or grammar is None:
            counts["skipped"] += 1
            continue
        counts["parsed"] += 1
        yield rel, grammar, data


class Reply(NamedTuple):
    """How the rows become a reply: the list's name, at most how many, and what the
    files parsed are called."""

    listed: str
    max_results: int
    parsed_as: str


class Merge:
    """The parts' rows in their sort keys' order, cut at max_results (the order runs
    across every part, so each one is needed: tools/walk/fanout.py). The warm process's
    rows, when it gave some, are the first of its `total`, cut at max_results already:
    no row it left out can be among the first max_results of all."""

    def __init__(self, args: dict[str, Any]) -> None:
        self._reply: Reply = args["reply"]
        self._rows: list[tuple[tuple[Any, ...], dict[str, Any]]] = list(args["rows"])
        self._unseen: int = args["total"] - len(self._rows)
        self._parsed = 0
        self._skipped: int = args["skipped"]

    def add(self, result: dict[str, Any]) -> None:
        self._rows += result["rows"]
        self._parsed += result["parsed"]
        self._skipped += result["skipped"]

    def finish(self) -> dict[str, Any]:
        self._rows.sort(key=lambda row: row[0])
        reply = self._reply
        return finished(reply, [row[1] for row in self._rows[:reply.max_results]],
                        len(self._rows) + self._unseen, self._parsed, self._skipped)


def finished(reply: Reply, records: list[dict[str, Any]], total: int, parsed: int,
             skipped: int) -> dict[str, Any]:
    """The reply: its first records (sorted, cut), how many in all, the files parsed and
    skipped (the warm process makes it too when it parsed nothing: tools/warm/code_replies.py)."""
    return {reply.listed: records, "total": total, "truncated": total > reply.max_results,
            reply.parsed_as: parsed, "files_skipped": skipped}
