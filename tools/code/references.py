"""code.references: every place a name is used as an identifier across the workspace
(docs/protocol.md, "Code by structure"). The files are those file.search would search
that contain the name (tools/code/narrow.py), each parsed once: its symbols say where
definitions are and what encloses each use, the tree which uses are identifiers."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.code.across import Reply, parse_across, readable
from chorus_tools.tools.code.narrow import candidates
from chorus_tools.tools.code.occurrences import Occurrence, occurrences
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.encoded import Encoded
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.warm.client import Pickled


def references(ctx: ToolContext, name: str, path: str = ".",
               glob: str | list[str] | None = None, max_results: int = 200,
               context_lines: int = 0,
               include_definitions: bool = False) -> dict[str, Any] | FanOut | Encoded | Pickled:
    if not name or name != name.strip() or len(name.split()) != 1:
        raise ToolError("invalid_params", "name must be one identifier, such as `parse` "
                        f"(no spaces); got {name!r}.", param="name")
    chosen = candidates(ctx, path, name, case_sensitive=True,
                        globs=[glob] if isinstance(glob, str) else list(glob or []),
                        include_hidden=False, include_ignored=False,
                        warm=("code_references", {
                            "name": name, "max_results": max_results,
                            "context_lines": context_lines,
                            "include_definitions": include_definitions}))
    if chosen.reply is not None:  # the warm process's, handed on as it came
        return chosen.reply
    return parse_across(ctx, chosen, "chorus_tools.tools.code.references:references_part",
                        Reply("references", max_results, "files_searched"), name=name,
                        context_lines=context_lines,
                        include_definitions=include_definitions)


def references_part(ctx: ToolContext, files: list[str], name: str, context_lines: int,
                    include_definitions: bool) -> dict[str, Any]:
    rows = []
    counts: dict[str, int] = {}
    for rel, grammar, data in readable(ctx, files, counts):
        found = [spot for spot in occurrences(grammar, rel, data, name)
                 if include_definitions or spot.kind != "definition"]
        rows += reference_rows(ctx, rel, data, found, context_lines)
    return {"rows": rows, **counts}


def reference_rows(ctx: ToolContext, rel: str, data: bytes, found: list[Occurrence],
                   context_lines: int) -> list[tuple[tuple[str, int, int], dict[str, Any]]]:
    """A file's occurrences as the reply's rows, each with its sort key."""
    width = ctx.limits.max_line_chars
    lines = data.split(b"\n") if context_lines and found else []
    rows = []
    for spot in found:
        record = {"path": rel, "line": spot.line, "column": spot.column,
                  "text": spot.text[:width], "kind": spot.kind, "in": spot.inside}
        if context_lines:
            record["before"] = _lines(lines, spot.line - 1 - context_lines, spot.line - 1,
                                      width)
            record["after"] = _lines(lines, spot.line, spot.line + context_lines, width)
        rows.append(((rel, spot.line, spot.column), record))
    return rows


def _lines(lines: list[bytes], start: int, end: int, width: int) -> list[str]:
    return [line.rstrip(b"\r").decode("utf-8", "replace")[:width]
            for line in lines[max(0, start):end]]
