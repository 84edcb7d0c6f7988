"""What a model reads from an MCP tool result (docs/protocol.md, MCP): `content` blocks made
from the method's result, which itself goes out unchanged as `structuredContent`.

The first block is the method's text exactly as docs/protocol.md gives it (file text,
`path:line:text` lines, one path a line, or the result as JSON); a second block is added
only when the first alone would mislead a model that sees nothing else: an empty answer, or
one cut short.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import orjson

from chorus_tools.rpc.mcp import code_content
from chorus_tools.tools.errors import reworded
from chorus_tools.tools.patch.note import note

Block = dict[str, Any]


def _text(text: str) -> Block:
    return {"type": "text", "text": text}


def _with_note(text: str, note: str | None) -> list[Block]:
    return [_text(text)] if note is None else [_text(text), _text(note)]


def _image(found: dict[str, Any]) -> Block:
    return {"type": "image", "data": found["image"], "mimeType": found["mime_type"]}


def _read(result: dict[str, Any]) -> list[Block]:
    """The numbered text; a notebook's image outputs in the window follow it as images, in
    the order its text numbers them (docs/protocol.md, Tool set `claude`)."""
    if "image" in result:
        return [_image(result)]
    note = None
    if result["truncated"]:
        note = (f"[Lines {result['start_line']}-{result['end_line']} of "
                f"{result['total_lines']} shown. Continue with offset "
                f"{result['end_line'] + 1}.]")
    elif not result["content"]:
        note = (f"[No lines to show from line {result['start_line']}: the file has "
                f"{result['total_lines']} lines.]")
    return _with_note(result["content"], note) + [_image(i) for i in result.get("images", ())]


def _file(result: dict[str, Any]) -> list[Block]:
    """A dialect's read whose result holds the shown text as `content` (the shadow set's
    Read): that text, or the image it found."""
    return [_image(result)] if "image" in result else [_text(result["content"])]


def _search(result: dict[str, Any]) -> list[Block]:
    if "counts" in result:
        lines = [f"{c['path']}:{c['count']}" for c in result["counts"]]
    elif "files" in result:
        lines = list(result["files"])
    else:
        lines = [f"{m['path']}:{m['line']}:{m['content']}" if "line" in m  # Grep's -n false
                 else f"{m['path']}:{m['content']}" for m in result["matches"]]
    return _with_note("\n".join(lines), _cut_or_empty(
        result, lines, "No matches.",
        "[More results exist: narrow path, glob or pattern, or raise max_results.]"))


def _list(result: dict[str, Any]) -> list[Block]:
    lines = [f if isinstance(f, str) else f["path"] for f in result["files"]]
    empty = "No entries."
    hint = result.get("hint")
    if hint:  # a name pattern matched nothing here, but does deeper (file.list's hint)
        empty = (f"No entries: a pattern without '/' matches only in path itself; "
                 f"{hint['count']} match {hint['pattern']} (or pass recursive: true).")
    return _with_note("\n".join(lines), _cut_or_empty(
        result, lines, empty,
        "[More entries exist: narrow path or pattern, or raise max_results.]"))


def _cut_or_empty(result: dict[str, Any], lines: list[str], empty: str,
                  cut: str) -> str | None:
    if result.get("truncated"):
        return cut
    return None if lines else empty


def _output(result: dict[str, Any]) -> list[Block]:
    """A tool set whose harness answers in text (codex, anthropic's editor, gemini's tools): that
    text, then the image a read found, if any."""
    blocks = [_text(result["output"])]
    if "image" in result:
        blocks.append(_image(result))
    if "history" in result:  # the change was made, its old content lost (--history-full)
        blocks.append(_text(result["history"]["message"]))
    return blocks


def _json(result: Any) -> list[Block]:
    """The result as JSON; a change that left syntax errors says so in a line of its own
    (docs/protocol.md, Diagnostics)."""
    said = note(result.get("diagnostics")) if isinstance(result, dict) else None
    return _with_note(orjson.dumps(result).decode(), said)


SHOWN_AS: dict[str, Callable[[Any], list[Block]]] = {
    "read": _read, "file": _file, "search": _search, "list": _list, "json": _json,
    "output": _output, **code_content.SHOWN_AS}


# the results whose notes are only the server's sentences (what to narrow or raise), said
# in the tool's own parameter names; a diagnostics note quotes the file, never reworded
_WORDED = frozenset({"search", "list"})


def content(shown_as: str, result: Any, words: Mapping[str, str] | None = None
            ) -> list[Block]:
    """The content blocks of a successful result, by the method's `shown_as`; a search's
    or listing's note in the tool's `words` (docs/protocol.md, MCP), its matches as
    they are."""
    blocks = SHOWN_AS[shown_as](result)
    if words and shown_as in _WORDED:
        blocks[1:] = [{**b, "text": reworded(b["text"], words)} for b in blocks[1:]]
    return blocks
