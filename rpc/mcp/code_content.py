"""What a model reads from the code.* tools (docs/protocol.md, "Code by structure"): lines,
as a search's are, not the JSON, which goes out unchanged as `structuredContent`. An
outline must cost a fraction of reading the file: its lines are `LINE[-END] signature`
(a variable, constant or field by its name alone: its value is in the JSON), indented one
space per nesting level."""

from __future__ import annotations

from typing import Any

Block = dict[str, Any]


def _blocks(lines: list[str], note: str | None) -> list[Block]:
    blocks = [{"type": "text", "text": "\n".join(lines)}]
    return blocks if note is None else [*blocks, {"type": "text", "text": note}]


def _span(item: dict[str, Any]) -> str:
    line, end = item["line"], item["end_line"]
    return f"{line}" if end == line else f"{line}-{end}"


NAMED_ONLY = frozenset({"variable", "constant", "field"})  # their values: in the JSON


def _tree(symbols: list[dict[str, Any]], depth: int, lines: list[str]) -> None:
    for s in symbols:
        said = s["name"] if s["kind"] in NAMED_ONLY else s["signature"]
        lines.append(" " * depth + f"{_span(s)} {said}")
        _tree(s.get("children", []), depth + 1, lines)


def outline(result: dict[str, Any]) -> list[Block]:
    lines: list[str] = []
    _tree(result["symbols"], 0, lines)
    notes = []
    if result["truncated"]:
        notes.append(f"{result['total']} symbols in all; raise max_results to see more.")
    if result["syntax_errors"]:
        notes.append(f"{result['syntax_errors']} syntax errors: outlined as far as it parses.")
    if not lines:
        notes.append(f"No symbols in {result['path']}.")
    return _blocks(lines, " ".join(notes) or None)


def symbols(result: dict[str, Any]) -> list[Block]:
    lines = [f"{s['path']}:{_span(s)}: {s['kind']} {s['name_path']}: {s['signature']}"
             for s in result["symbols"]]
    return _blocks(lines, _cut(result, lines, "No definition matches."))


def references(result: dict[str, Any]) -> list[Block]:
    lines = []
    for r in result["references"]:
        where = f" in {r['in']}" if r["in"] else ""
        lines.append(f"{r['path']}:{r['line']}:{r['column']}: {r['kind']}{where}: "
                     f"{r['text'].strip()}")
    return _blocks(lines, _cut(result, lines, "No references."))


def code_map(result: dict[str, Any]) -> list[Block]:
    note = "[More definitions exist: raise max_bytes, or narrow path, glob or focus.]"
    return _blocks([result["map"]], note if result["truncated"] else None)


def _cut(result: dict[str, Any], lines: list[str], empty: str) -> str | None:
    if result["truncated"]:
        return (f"[{result['total']} in all: narrow path or glob, or raise max_results.]")
    return None if lines else empty


SHOWN_AS = {"outline": outline, "symbols": symbols, "references": references,
            "map": code_map}
