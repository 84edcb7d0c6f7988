"""Builds docs/protocol.md: the hand-written prose of docs/template/ with the mechanical
parts filled in from the code, so the reference cannot drift from the server.

- `{{options}}`: every command-line option, from the CLI's own parser;
- `{{errors}}` … `{{/errors}}`: the template's prose table (when, data fields, what to do)
  merged with every error the server can answer (protocol errors and rpc/wire/errors.py's
  CODES), each with its code; an error without prose still gets its row;
- `{{methods}}`: every method of the registry, grouped by tool set, with its params
  (types, required, defaults as rpc.discover states them), result fields and MCP face,
  followed by docs/template/methods/<name>.md when that file exists.

    python docs/generate.py            # print the reference
    python docs/generate.py --write    # write docs/protocol.md

tests/project/test_docs.py fails when the committed file differs from what this prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator

from chorus_tools.rpc.cli import parser
from chorus_tools.rpc.dispatch.discover import method_document, openrpc_document
from chorus_tools.rpc.wire.errors import (CODES, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
                                 protocol_error)
from chorus_tools.tools.registry import ALL_METHODS, METHODS, TOOLSETS, Method

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "template" / "protocol.md"
NOTES = HERE / "template" / "methods"
OUTPUT = HERE / "protocol.md"


def render() -> str:
    """The whole reference, as docs/protocol.md should hold it."""
    text = TEMPLATE.read_text()
    head, _, rest = text.partition("{{errors}}\n")
    prose, _, tail = rest.partition("{{/errors}}\n")
    text = head + errors_table(prose) + tail
    text = text.replace("{{options}}", options_table())
    text = text.replace("{{methods}}", methods_section())
    return text.rstrip("\n") + "\n"


def options_table() -> str:
    """Every option of `chorus-tools`, in the parser's order."""
    rows = ["| option | value | what it does |", "|---|---|---|"]
    for action in parser()._actions:  # argparse has no public walk over its options
        names = ", ".join(f"`{o}`" for o in action.option_strings)
        if action.choices:
            value = " | ".join(f"`{c}`" for c in action.choices)
        else:
            value = f"`{action.metavar}`" if action.metavar else ""
        rows.append(f"| {names} | {_cell(value)} | {_cell(action.help or '')} |")
    return "\n".join(rows)


def errors_table(prose: str) -> str:
    """One row per error the server answers: protocol errors, then the tool errors."""
    notes = _prose_rows(prose)
    errors = [(protocol_error(code, "")["data"]["error"], code)
              for code in (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND)]
    errors += list(CODES.items())
    unknown = set(notes) - {name for name, _ in errors}
    if unknown:
        raise SystemExit(f"docs/template/protocol.md documents unknown errors: {unknown}")
    rows = ["| code | data.error | when | data fields | what to do |", "|---|---|---|---|---|"]
    for name, code in errors:
        when, data, todo = notes.get(name, ("", "", ""))
        rows.append(f"| {code} | `{name}` | {when} | {data} | {todo} |")
    return "\n".join(rows) + "\n"


def _prose_rows(prose: str) -> dict[str, tuple[str, str, str]]:
    """The template's `| data.error | when | data fields | what to do |` rows by name."""
    rows = {}
    for line in prose.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[2], cells[3])
    return rows


def methods_section() -> str:
    """Every method rpc.discover describes and every tool set's, grouped by set (native
    first, then the sets in --tools order, then any other), each followed by its notes
    file if any: docs/template/methods/<name>.md for a native method,
    docs/template/methods/<set>/<name>.md for a set's (two sets may share a name)."""
    order = {name: i for i, name in enumerate(TOOLSETS)}
    groups: dict[str, list[tuple[dict[str, Any], Method | None]]] = {}
    for doc in openrpc_document()["methods"]:
        method = METHODS.get(doc["name"])
        groups.setdefault(method.toolset if method else "native", []).append((doc, method))
    for method in ALL_METHODS:
        if method.toolset != "native":
            groups.setdefault(method.toolset, []).append((method_document(method, []), method))
    out = []
    for toolset in sorted(groups, key=lambda s: (order.get(s, len(order)), s)):
        out.append(f"### Tool set `{toolset}`\n\n{_toolset_intro(toolset)}\n")
        notes = NOTES if toolset == "native" else NOTES / toolset
        for doc, method in groups[toolset]:
            out.append(_method(doc, method, notes))
    return "\n".join(out).rstrip("\n")


def _toolset_intro(toolset: str) -> str:
    if toolset == "native":
        return ("Callable over plain JSON-RPC whatever `--tools` says; listed as MCP tools "
                "when `native` is among the selected sets (the default).")
    return (f"Callable over plain JSON-RPC, and listed as MCP tools, only when the server "
            f"runs with `--tools` naming `{toolset}`.")


def _method(doc: dict[str, Any], method: Method | None, notes_dir: Path) -> str:
    lines = [f"#### `{doc['name']}`", "", doc["summary"], ""]
    if method is not None:
        lines += [_face(method), ""]
        if method.description:
            lines += ["What `tools/list` tells a model:", "",
                      *(f"> {line}".rstrip() for line in method.description.splitlines()), ""]
    lines += ["Params:", ""] + _params(doc, method) + [""]
    lines += ["Result:", ""] + _result(doc["result"]["schema"]) + [""]
    notes = notes_dir / f"{doc['name']}.md"
    if notes.exists():
        lines += [notes.read_text().strip("\n"), ""]
    return "\n".join(lines)


def _face(method: Method) -> str:
    """How the runtime treats a call, and how MCP's tools/list shows the method."""
    traits = []
    if method.mutating:
        traits.append("changes files: audited (`--records`), ordered after earlier calls "
                      "on its path, never interrupted once running")
        if method.read_commands:
            traits.append(f"except its `{'`, `'.join(sorted(method.read_commands))}` "
                          "command, which only reads (served under `--read-only`)")
    else:
        traits.append("read-only")
    if method.stoppable:
        traits.append("a cancel stops it at once")
    hints = {"readOnlyHint": not method.mutating, "destructiveHint": method.destructive,
             "idempotentHint": method.idempotent, "openWorldHint": False}
    if not method.mcp_tool:
        return (f"{'; '.join(traits).capitalize()}. Not an MCP tool: it serves the "
                "orchestrator, not the model.")
    title = f" (title \"{method.title}\")" if method.title else ""
    return (f"{'; '.join(traits).capitalize()}. MCP tool `{method.tool_name}`{title}, "
            f"annotations `{json.dumps(hints, separators=(', ', ': '))}`.")


def _params(doc: dict[str, Any], method: Method | None) -> list[str]:
    if not doc["params"]:
        return ["None (`{}` or no `params`)."]
    defaults = {p["name"]: p["schema"]["default"] for p in doc["params"]
                if "default" in p["schema"]}
    schema = method.params if method else {"properties": {}, "required": []}
    return _table(["name", "type", "required", "default"], [
        [f"`{name}`", _type(sub), "yes" if required else "no",
         f"`{json.dumps(defaults[name])}`" if name in defaults else "",
         sub.get("description", "")]
        for name, sub, required in _fields(schema)])


def _result(schema: dict[str, Any]) -> list[str]:
    if "oneOf" in schema:
        out = []
        for variant in schema["oneOf"]:
            first = next(iter(variant["properties"]))
            out += [f"When it holds `{first}`:", ""] + _result(variant) + [""]
        return out[:-1]
    if "properties" not in schema:
        return [f"A JSON {_type(schema)}, described below."]
    return _table(["field", "type", "always present"], [
        [f"`{name}`", _type(sub), "yes" if required else "no", sub.get("description", "")]
        for name, sub, required in _fields(schema)])


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table; each row's last cell is a description, and the description
    column is left out when no row has one."""
    if any(row[-1] for row in rows):
        header = header + ["description"]
    else:
        rows = [row[:-1] for row in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _fields(schema: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any, bool]]:
    """(dotted name, schema, required) of every property, nested objects and arrays of
    objects included (`patches[].find`)."""
    required = set(schema.get("required", ()))
    for name, sub in schema.get("properties", {}).items():
        yield prefix + name, sub, name in required
        if "properties" in sub:
            yield from _fields(sub, f"{prefix}{name}.")
        elif "properties" in sub.get("items", {}):
            yield from _fields(sub["items"], f"{prefix}{name}[].")


def _type(schema: dict[str, Any]) -> str:
    """A JSON Schema as a short phrase: `"a"` | `"b"`, integer ≥ 1, string or null…"""
    if "enum" in schema:
        return " | ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "oneOf" in schema:
        return " or ".join(_type(v) for v in schema["oneOf"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if kind == "integer" and "minimum" in schema:
        return f"integer ≥ {schema['minimum']}"
    return kind


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--write", action="store_true", help=f"write {OUTPUT.name}")
    if args.parse_args().write:
        OUTPUT.write_text(render())
    else:
        sys.stdout.write(render())


if __name__ == "__main__":
    main()
