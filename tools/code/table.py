"""The code-structure methods (docs/protocol.md, "Code by structure") for the registry:
native methods, callable over plain JSON-RPC whatever `--tools` says, listed as MCP tools
by the native set and, with `--code-tools`, by any other."""

from __future__ import annotations

from chorus_tools.tools.code.symbols.record import KINDS
from chorus_tools.tools.method import GLOBS, NON_NEGATIVE, PATCH_RESULT, POSITIVE, Method, obj

PATH = {"type": "string"}  # file.*'s description of a path is not repeated: the native
# set's tools/list, these included, must stay under 10,000 bytes

SYMBOL = obj(["name", "kind", "name_path", "line", "end_line", "signature"],
             name={"type": "string"}, kind={"enum": list(KINDS)}, name_path={"type": "string"},
             line=POSITIVE, end_line=POSITIVE, signature={"type": "string"},
             children={"type": "array", "items": {"type": "object"}})
FOUND = obj(["path", "name", "kind", "name_path", "line", "end_line", "signature"],
            path={"type": "string"}, **SYMBOL["properties"])
REFERENCE = obj(["path", "line", "column", "text", "kind", "in"], path={"type": "string"},
                line=POSITIVE, column=POSITIVE, text={"type": "string"},
                kind={"enum": ["call", "import", "type", "reference", "definition"]},
                **{"in": {"type": "string"}},
                before={"type": "array", "items": {"type": "string"}},
                after={"type": "array", "items": {"type": "string"}})
_FLAG = {"type": "boolean"}
CODE_TOOLS = ("code",)  # --code-tools: listed by any tool set, not the native one only

METHODS = [
    Method(
        "code.outline", "chorus_tools.tools.code.outline:outline",
        "A file's symbols (classes, functions, methods, ...) as a tree, with line ranges.",
        obj(["path"], path=PATH, depth=POSITIVE, max_results=POSITIVE),
        obj(["path", "language", "symbols", "total", "truncated", "syntax_errors"],
            path={"type": "string"}, language={"type": "string"},
            symbols={"type": "array", "items": SYMBOL}, total=NON_NEGATIVE,
            truncated=_FLAG, syntax_errors=NON_NEGATIVE),
        stoppable=True, title="Outline a file", idempotent=True, shown_as="outline",
        also_in=CODE_TOOLS,
        description=(
            "A code file's definitions as a tree, with line ranges and signatures: "
            "cheaper than reading it.")),
    Method(
        "code.symbols", "chorus_tools.tools.code.find:find_symbols",
        "Where a name is defined: symbols by name or name path across the workspace.",
        obj(["query"], query={"type": "string"}, path=PATH, glob=GLOBS,
            kind={"type": "string"}, match={"enum": ["exact", "prefix", "substring"]},
            case_sensitive=_FLAG, max_results=POSITIVE, include_hidden=_FLAG,
            include_ignored=_FLAG),
        obj(["symbols", "total", "truncated", "files_parsed", "files_skipped"],
            symbols={"type": "array", "items": FOUND}, total=NON_NEGATIVE,
            truncated=_FLAG, files_parsed=NON_NEGATIVE, files_skipped=NON_NEGATIVE),
        stoppable=True, title="Find definitions", idempotent=True, shown_as="symbols",
        also_in=CODE_TOOLS,
        description=(
            "Where a name is defined. `query`: a name or name path (`Class/method`); "
            "`kind`: class, function, ...")),
    Method(
        "code.references", "chorus_tools.tools.code.references:references",
        "Where a name is used as an identifier (calls, imports, types), never in text.",
        obj(["name"], name={"type": "string"}, path=PATH, glob=GLOBS,
            max_results=POSITIVE, context_lines=NON_NEGATIVE, include_definitions=_FLAG),
        obj(["references", "total", "truncated", "files_searched", "files_skipped"],
            references={"type": "array", "items": REFERENCE}, total=NON_NEGATIVE,
            truncated=_FLAG, files_searched=NON_NEGATIVE, files_skipped=NON_NEGATIVE),
        stoppable=True, title="Find references", idempotent=True, shown_as="references",
        also_in=CODE_TOOLS,
        description=(
            "Where a name is used as an identifier (not in strings or comments): line, "
            "kind (call, import, ...) and enclosing function.")),
    Method(
        "code.map", "chorus_tools.tools.code.codemap:code_map",
        "The code's most referenced definitions, ranked, within a byte budget.",
        obj([], path=PATH, glob=GLOBS, focus={"type": "array", "items": {"type": "string"}},
            max_bytes=POSITIVE),
        obj(["map", "files", "symbols", "truncated"], map={"type": "string"},
            files=NON_NEGATIVE, symbols=NON_NEGATIVE, truncated=_FLAG),
        stoppable=True, title="Map the code", idempotent=True, shown_as="map",
        also_in=CODE_TOOLS,
        description=(
            "Overview of unfamiliar code: the most referenced definitions, file by file, "
            "within `max_bytes`; `focus`: paths or names to rank around.")),
    Method(
        "code.edit", "chorus_tools.tools.code.edit:edit",
        "Replace, delete, or insert before or after a symbol, by its name path.",
        obj(["path", "symbol", "action"], path=PATH, symbol={"type": "string"},
            action={"enum": ["replace", "insert_before", "insert_after", "delete"]},
            text={"type": "string"}, line=POSITIVE, expected_version={"type": "string"},
            dry_run=_FLAG),
        PATCH_RESULT, mutating=True, destructive=True, title="Edit a symbol",
        also_in=CODE_TOOLS,
        description=(
            "Replace or delete a definition named by its path (`Parser/parse`), or insert "
            "`text` before/after it.")),
]
