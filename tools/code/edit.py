"""code.edit (docs/protocol.md, "Code by structure"): a symbol replaced or deleted, or a
sibling put before or after it, addressed by its name path.

It is a patch the server writes for the agent, never a second write path: under the
file's lock (tools/patch/patch.py `planned`) the symbols of the text about to change are
found, the symbol's whole lines become the patch's `find`, pinned at their place, and the
agent's `text`, moved onto the symbol's indentation by the one indentation mapping
(tools/patch/indent.py `onto`), its `replace`. So the version check, the atomic write,
history, records, --read-only, the file's encoding and line endings, diagnostics and the
syntax guard are file.patch's; the guard judges even this exact match, since the server
chose the place.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any

from chorus_tools.tools.code.query import NameQuery
from chorus_tools.tools.code.symbols import Symbol, supported, symbols, unsupported
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.indent import TAB, Misfit, indent, onto, unit_of
from chorus_tools.tools.patch.match import content
from chorus_tools.tools.patch.patch import planned
from chorus_tools.tools.read.text import lines_with_endings

ACTIONS = ("replace", "insert_before", "insert_after", "delete")
_CLOSEST = 5
# what may follow a symbol on its last line: separators, then a comment
_AFTER = re.compile(rb"[\s,;]*(?:(?:#|//|/\*).*)?", re.DOTALL)


def edit(ctx: ToolContext, path: str, symbol: str, action: str, text: str | None = None,
         line: int | None = None, expected_version: str | None = None,
         dry_run: bool = False) -> dict[str, Any]:
    _check(action, text)
    try:
        query = NameQuery.read(symbol)
    except ToolError:
        raise ToolError("invalid_params", "symbol must be a name path such as `Parser/parse` "
                        f"(no empty part); got {symbol!r}.", param="symbol") from None
    rel = ctx.ws.rel(path)

    def plan(before: str) -> list[dict[str, Any]]:
        data = before.encode("utf-8", "surrogatepass")
        if supported(rel, data) is None:
            raise unsupported(path)
        found = [_section(s, before) if s.kind == "heading" else s
                 for s in symbols(rel, data)]
        chosen = _choose(found, query, symbol, line, path)
        _owns_its_lines(data, found, chosen, path)
        return [_patch(before, found, chosen, action, text, rel)]

    return planned(ctx, path, plan, dry_run, expected_version)


def _section(s: Symbol, text: str) -> Symbol:
    """A heading as an edit takes it: its section without the blank lines that close it,
    which separate it from the next heading as blank lines separate two functions."""
    lines = text.split("\n")
    last = s.end_line
    while last > s.line and not lines[last - 1].strip():
        last -= 1
    return replace(s, end_line=last)


def _check(action: str, text: str | None) -> None:
    if action == "delete":
        if text is not None:
            raise ToolError("invalid_params", "delete takes no text: leave `text` out.",
                            param="text")
    elif text is None or not text.strip():
        raise ToolError("invalid_params", f"{action} needs `text`: the lines to put in "
                        "(a whole definition, indented as you like: it is re-indented onto "
                        "the symbol).", param="text")


def _choose(found: list[Symbol], query: NameQuery, symbol: str, line: int | None,
            path: str) -> Symbol:
    named = [s for s in found if query.matches(s)]
    chosen = named if line is None else [s for s in named if s.line == line]
    if len(chosen) == 1:
        return chosen[0]
    if len(chosen) > 1:
        candidates = [{"name_path": s.name_path, "line": s.line} for s in chosen]
        shown = ", ".join(f"{c['name_path']} (line {c['line']})" for c in candidates[:10])
        raise ToolError("symbol_not_unique",
                        f"{len(chosen)} symbols of {path} match {symbol!r}: {shown}. Give a "
                        "longer name path, or `line` to choose one.", path=path,
                        symbol=symbol, candidates=candidates)
    if named:  # the name exists, not at that line
        lines = ", ".join(str(s.line) for s in named)
        raise ToolError("symbol_not_found",
                        f"No symbol {symbol!r} starts at line {line} of {path}; it is at "
                        f"line {lines}.", path=path, symbol=symbol,
                        closest=[s.name_path for s in named][:_CLOSEST])
    names = list(dict.fromkeys(s.name_path for s in found))
    closest = difflib.get_close_matches(symbol, names, n=_CLOSEST, cutoff=0.4)
    hint = f" Closest: {', '.join(closest)}." if closest else " code.outline lists them."
    raise ToolError("symbol_not_found", f"No symbol of {path} matches {symbol!r}.{hint}",
                    path=path, symbol=symbol, closest=closest)


def _owns_its_lines(data: bytes, found: list[Symbol], s: Symbol, path: str) -> None:
    """invalid_params unless `s` is alone on its lines: every action works on whole lines,
    so one of a symbol that shares a line with other code (`struct P { x: i32, y: i32 }`'s
    `x`, each of `A, B = 1, 2`) would change that code too (delete `x`: the whole struct).
    After it, its line may hold only separators and a comment."""
    start = data.rfind(b"\n", 0, s.start_byte) + 1
    stop = s.end_byte if data[s.end_byte - 1:s.end_byte] == b"\n" else (
        len(data) if (at := data.find(b"\n", s.end_byte)) < 0 else at)
    others = [o for o in found if o is not s and (
        (o.start_byte, o.end_byte) == (s.start_byte, s.end_byte)
        or not _nested(o, s) and o.start_byte < stop and o.end_byte > start)]
    if others:
        shared = others[0].name_path
    elif data[start:s.start_byte].strip() or not _AFTER.fullmatch(data[s.end_byte:stop]):
        shared = "other code"
    else:
        return
    lines = f"line {s.line}" if s.line == s.end_line else f"lines {s.line}-{s.end_line}"
    raise ToolError("invalid_params",
                    f"{s.name_path} shares {lines} of {path} with {shared}, and code.edit "
                    "works on whole lines: it would change that code too. Edit the "
                    "definition that holds it, or use file.patch for those lines.",
                    param="symbol", path=path, line=s.line)


def _nested(one: Symbol, other: Symbol) -> bool:
    """Whether either symbol's range holds the other's."""
    return (one.start_byte <= other.start_byte and other.end_byte <= one.end_byte) or \
        (other.start_byte <= one.start_byte and one.end_byte <= other.end_byte)


def _patch(before: str, found: list[Symbol], s: Symbol, action: str, text: str | None,
           rel: str) -> dict[str, Any]:
    """The core patch making `action` on symbol `s`: its lines (with the blank lines a
    delete takes) as an exact find pinned at its offset."""
    lines = lines_with_endings(before)
    offsets = [0]
    for one in lines:
        offsets.append(offsets[-1] + len(one))
    first, last = s.line - 1, s.end_line  # the symbol's lines: lines[first:last]
    gap = _gap(lines, found, s, rel)
    if action == "delete":
        first, last = _with_blanks(lines, found, s, first, last)
        body = ""
    else:
        placed = _placed(text or "", lines, s)
        region = "".join(lines[first:last])
        if not region.endswith("\n"):
            region += "\n"  # the file's last line: a sibling after it needs the break
        body = {"replace": placed,
                "insert_before": placed + "\n" * gap + region,
                "insert_after": region + "\n" * gap + placed}[action]
    find = "".join(lines[first:last])
    if body == find:
        raise ToolError("invalid_params", f"text is already {s.name_path}'s text: nothing "
                        "would change.", param="text")
    return {"find": find, "replace": body, "at": offsets[first],
            "guard": f"code.edit's {action} of {s.name_path}", "param": "text"}


def _placed(text: str, lines: list[str], s: Symbol) -> str:
    """`text` as whole lines (a final break supplied) on the symbol's indentation."""
    block = text.replace("\r\n", "\n").removesuffix("\n").split("\n")
    target = indent(lines[s.def_line - 1])
    region = [content(one) for one in lines[s.line - 1:s.end_line]]
    units = [u for u in (unit_of(region), unit_of(lines)) if u]
    spaces_only = TAB not in "".join(indent(one) for one in region) and TAB not in units
    placed = onto(block, target, list(dict.fromkeys(units)), spaces_only)
    if isinstance(placed, Misfit):
        reason = placed.said("the symbol", "text")
        raise ToolError("invalid_params",
                        f"text cannot be placed at {s.name_path}'s indentation "
                        f"({target!r}): {reason}."
                        " Indent text consistently (one unit, its first line the base).",
                        param="text", reason=reason)
    return "\n".join(placed) + "\n"


def _siblings(found: list[Symbol], s: Symbol) -> tuple[Symbol | None, Symbol | None]:
    """The symbols of the same parent just before and just after `s`."""
    same = [o for o in found if o.parent == s.parent and o is not s]
    before = [o for o in same if o.end_line < s.line]
    after = [o for o in same if o.line > s.end_line]
    return (before[-1] if before else None), (after[0] if after else None)


def _gap(lines: list[str], found: list[Symbol], s: Symbol, rel: str) -> int:
    """The blank lines the symbol's neighbours are separated by (those before it, else
    after it); with none, PEP 8's two at a Python file's top level, else one."""
    before, after = _siblings(found, s)
    if before is not None:
        return _blanks(lines, before.end_line, s.line - 1)
    if after is not None:
        return _blanks(lines, s.end_line, after.line - 1)
    return 2 if rel.endswith((".py", ".pyi")) and s.parent < 0 else 1


def _blanks(lines: list[str], start: int, stop: int) -> int:
    return sum(1 for one in lines[start:stop] if not one.strip())


def _with_blanks(lines: list[str], found: list[Symbol], s: Symbol, first: int,
                 last: int) -> tuple[int, int]:
    """A deleted symbol's lines with the blank lines that separated it: those after it,
    or, for the last of its block, those before it. Between two siblings only the
    smaller run goes, so the neighbours stay as far apart as either was from it (`A`
    glued to the deleted `B`, then two blank lines, then `C`: `A`, two blank lines, `C`)."""
    before, after = _siblings(found, s)
    above = first
    while above > 0 and not lines[above - 1].strip():
        above -= 1
    below = last
    while below < len(lines) and not lines[below].strip():
        below += 1
    if after is None or (before is not None and first - above < below - last):
        return above, last
    return first, below
