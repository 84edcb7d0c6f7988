"""The one line a model reads when a change left syntax errors it did not find
(docs/protocol.md, Diagnostics): built here from a reply's `diagnostics` for every tool
set, in the MCP content of the sets that answer in JSON and in the `output` of those that
answer in text. Imports nothing heavy: the dispatcher uses it too."""

from __future__ import annotations

from typing import Any

NAMED = 3  # errors the line names


def note(diagnostics: dict[str, Any] | None, path: str | None = None) -> str | None:
    """`Note: this edit left 1 syntax error: line 12: expected ':'` when the change
    brought errors (`introduced` > 0), None otherwise; `path` names the file when a reply
    covers several."""
    if not diagnostics or not diagnostics.get("introduced"):
        return None
    count, total = diagnostics["introduced"], diagnostics["total"]
    errors = "syntax error" if count == 1 else "syntax errors"
    what = (f"{count} {errors}" if count == total
            else f"{count} new {errors} ({total} in the file)")
    named = "; ".join(f"line {e['line']}: {e['message']}"
                      for e in diagnostics["errors"][:NAMED])
    more = "; ..." if total > NAMED else ""
    where = f" in {path}" if path else ""
    return f"Note: this edit left {what}{where}: {named}{more}"


def notes(files: list[dict[str, Any]]) -> list[str]:
    """The line of each file of a multi-file reply (`{path, diagnostics?}` entries)."""
    said = (note(f.get("diagnostics"), f["path"]) for f in files)
    return list(dict.fromkeys(line for line in said if line))


def told(output: str, diagnostics: dict[str, Any] | None) -> str:
    """A text reply with the note on a line of its own after it, when there is one."""
    line = note(diagnostics)
    if line is None:
        return output
    sep = "" if not output or output.endswith("\n") else "\n"
    return f"{output}{sep}{line}"


def carried(result: dict[str, Any]) -> dict[str, Any]:
    """A core result's `diagnostics`, to spread into a tool set's own result."""
    return {"diagnostics": result["diagnostics"]} if "diagnostics" in result else {}
