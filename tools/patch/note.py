"""The one line a model reads when a change left syntax errors it did not find
(docs/protocol.md, Diagnostics): built here from a reply's `diagnostics` for every tool
set, in the MCP content of the sets that answer in JSON and in the `output` of those that
answer in text. Imports nothing heavy: the dispatcher uses it too."""

from __future__ import annotations

from typing import Any

NAMED = 3  # errors the line names


def note(diagnostics: dict[str, Any] | None, path: str | None = None) -> str | None:
    """`Note: this edit left 1 syntax error: line 12: expected ':'` when the change
    brought errors (`introduced` > 0), `Note: this edit introduced 1 problem: ...` when it
    brought problems or broke imports elsewhere, None otherwise; `path` names the file when
    a reply covers several."""
    if not diagnostics:
        return None
    if not diagnostics.get("introduced"):
        return _problems_note(diagnostics, path)
    count, total = diagnostics["introduced"], diagnostics["total"]
    errors = "syntax error" if count == 1 else "syntax errors"
    what = (f"{count} {errors}" if count == total
            else f"{count} new {errors} ({total} in the file)")
    named = "; ".join(f"line {e['line']}: {e['message']}"
                      for e in diagnostics["errors"][:NAMED])
    more = "; ..." if total > NAMED else ""
    where = f" in {path}" if path else ""
    return f"Note: this edit left {what}{where}: {named}{more}"


def _problems_note(diagnostics: dict[str, Any], path: str | None) -> str | None:
    """`Note: this edit introduced 2 problems: line 40: undefined name 'x' (F821); ... and
    3 files import the removed name 'load': app.py:1, ...`."""
    count = diagnostics.get("problems_introduced", 0)
    broken = diagnostics.get("broken_imports_total", 0)
    if not count and not broken:
        return None
    where = f" in {path}" if path else ""
    parts = []
    if count:
        named = "; ".join(f"line {p['line']}: {p['message']} ({p['code']})"
                          for p in diagnostics["problems"][:NAMED] if p["introduced"])
        more = "; ..." if count > NAMED else ""
        parts.append(f"introduced {count} problem{'s' if count > 1 else ''}{where}: "
                     f"{named}{more}")
    if broken:
        shown = diagnostics["broken_imports"]
        names = sorted({b["name"] for b in shown})
        quoted = ", ".join(f"'{n}'" for n in names)
        # an entry per imported name: one line importing two of them is one place, and
        # a file is counted once
        at = list(dict.fromkeys(f"{b['path']}:{b['line']}" for b in shown))
        importers = len({b["path"] for b in shown})
        cut = broken > len(shown)
        places = ", ".join(at[:NAMED])
        more = ", ..." if cut or len(at) > NAMED else ""
        files = (f"{'at least ' if cut else ''}{importers} "
                 + ("file imports" if importers == 1 else "files import"))
        lead = "and " if count else f"broke imports{where}: "
        parts.append(f"{lead}{files} the removed name{'s' if len(names) > 1 else ''} "
                     f"{quoted}: {places}{more}")
    return "Note: this edit " + " ".join(parts)


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
