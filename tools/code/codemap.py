"""code.map: the code's most important definitions within a byte budget (docs/protocol.md,
"Code by structure"). Every code file of the selection is summarised (its definitions'
names, the words it mentions: tools/code/rank.py), the definitions ranked, and the best
ones rendered, file by file, as their signatures indented by nesting, with the enclosing
definitions they need, `⋮` where a file's other definitions are left out.

The warm process maps from its symbol index's summaries when it holds them (parsing the
few files it does not know yet), else every file is parsed here; both rank and render the
same way (tools/warm/code_answers.py). A path naming one file maps that file alone, read
here.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, Iterable, NamedTuple

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.code.identifiers import Table
from chorus_tools.tools.code.occurrences import file_definitions
from chorus_tools.tools.code.rank import Summary, rank, summarize
from chorus_tools.tools.code.source import read_candidate
from chorus_tools.tools.code.symbols import Symbol, maybe_code, supported, symbols
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.search.target import open_target
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.warm.client import ask

ELIDED = "⋮"
INDENT = "  "


def code_map(ctx: ToolContext, path: str = ".", glob: str | list[str] | None = None,
             focus: list[str] | None = None, max_bytes: int = 4096) -> dict[str, Any]:
    rel = ctx.ws.rel(path, allow_empty=True)
    globs = [glob] if isinstance(glob, str) else list(glob or [])
    if _names_file(ctx, rel, path):  # one file, as code.symbols takes one: its own map
        files, summaries = _summaries(ctx, [rel])
    else:
        known = ask(ctx, "code_map", rel=rel, globs=globs, focus=focus or [],
                    max_bytes=max_bytes)
        if known is not None:
            return known
        files, summaries = _summaries(ctx, (file for file, _ in walk_files(
            ctx, rel, include_hidden=False, include_ignored=False, globs=globs)))
    return render(ctx, files, rank(files, summaries, focus), max_bytes)


def _names_file(ctx: ToolContext, rel: str, shown: str) -> bool:
    """Whether `rel` is one regular file rather than a directory; anything else is refused
    as code.symbols and file.search refuse it (tools/search/target.py)."""
    target = open_target(ctx, rel, shown)
    os.close(target.fd)
    return not target.is_dir


def _summaries(ctx: ToolContext, paths: Iterable[str]) -> tuple[list[str], list[Summary]]:
    files, summaries = [], []
    for file in paths:
        found = read_summary(ctx, file) if maybe_code(file) else None
        if found is not None and found.grammar != "markdown":  # prose: never in the map
            files.append(file)
            summaries.append(found.summary)
    return files, summaries


class Parsed(NamedTuple):
    """What one parse of a code file gives the symbol index: its summary, its grammar,
    its identifier table, and a checksum of the text parsed (its CRC-32)."""

    summary: Summary
    grammar: str
    table: Table
    stamp: int


def read_summary(ctx: ToolContext, path: str) -> Parsed | None:
    """A code file's summary, grammar and identifier table, read now; None when it is no
    code."""
    data = read_candidate(ctx, path)
    grammar = None if data is None else supported(path, data)
    if data is None or grammar is None:
        return None
    return parse_summary(grammar, path, data)


def parse_summary(grammar: str, path: str, data: bytes,
                  budget: Budget | None = None) -> Parsed:
    """The summary, grammar and identifier table of `data`, the content of `path` (its
    parse within `budget` when one is given: Skipped past it)."""
    found, identifiers = file_definitions(grammar, path, data, budget)  # read once
    return Parsed(summarize(tuple(s.name for s in found), identifiers.names), grammar,
                  identifiers, zlib.crc32(data))


def render(ctx: ToolContext, files: list[str], ranked: list[tuple[float, int, int]],
           max_bytes: int) -> dict[str, Any]:
    """The best-ranked definitions that fit in `max_bytes`, each with the definitions
    enclosing it; the first that does not fit ends the map."""
    shown: dict[int, set[int]] = {}  # file index -> indices of its symbols shown
    texts: dict[int, str] = {}  # file index -> its part of the map
    parsed: dict[int, list[Symbol]] = {}
    used = -1  # the line breaks between files: one fewer than the files
    truncated = False
    for _, f, position in ranked:
        found = parsed.get(f)
        if found is None:
            found = parsed[f] = _code_symbols(ctx, files[f])
        if position >= len(found):
            continue  # changed since it was ranked: its definitions moved
        wanted = shown.get(f, set()) | set(_with_parents(found, position))
        text = _file_lines(files[f], found, wanted)
        size = used + len(text.encode()) + 1 - (len(texts[f].encode()) + 1 if f in texts else 0)
        if size > max_bytes:
            truncated = True
            break
        used, shown[f], texts[f] = size, wanted, text
    count = sum(len(indices) for indices in shown.values())
    return {"map": "\n".join(texts.values()), "files": len(texts), "symbols": count,
            "truncated": truncated or count < len(ranked)}


def _code_symbols(ctx: ToolContext, rel: str) -> list[Symbol]:
    data = read_candidate(ctx, rel)
    return [] if data is None or supported(rel, data) is None else symbols(rel, data)


def _with_parents(found: list[Symbol], i: int) -> list[int]:
    wanted = []
    while i >= 0:
        wanted.append(i)
        i = found[i].parent
    return wanted


def _depth(found: list[Symbol], i: int) -> int:
    depth = 0
    while found[i].parent >= 0:
        i = found[i].parent
        depth += 1
    return depth


def _line(found: list[Symbol], i: int) -> str:
    return INDENT * (_depth(found, i) + 1) + found[i].signature


def _file_lines(path: str, found: list[Symbol], shown: set[int]) -> str:
    lines = [f"{path}:"]
    skipped = False
    last = None
    for i in range(len(found)):
        if i in shown:
            if skipped:
                lines.append(INDENT + ELIDED)
            line = _line(found, i)
            if (found[i].def_line, line) != last:  # `int x, y;`: two fields, one line
                lines.append(line)
            last = (found[i].def_line, line)
            skipped = False
        else:
            skipped = True
    if skipped:
        lines.append(INDENT + ELIDED)
    return "\n".join(lines)
