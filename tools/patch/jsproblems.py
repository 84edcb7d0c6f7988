"""The problems of a JavaScript or TypeScript text that parses (docs/protocol.md,
Diagnostics): `no-undef`, an identifier no scope, import or known global (browser, Node,
ES2024) defines, as oxlint finds it (tools.patch.oxlint runs it).

oxlint's no-undef leaves TypeScript's type positions alone (a type reference, an
interface's or a type alias's names, `declare` and namespace members are bound or not
values), and reads `typeof x` in a type as the value it is. Its report is JSON; any other
finding it makes (it could not read or parse the text, or its semantic check refused it:
a name declared twice) means it did not judge the text, so the check is Skipped rather
than claimed clean. One semantic error is kept as no-undef: `Export 'name' is not
defined`; oxlint then lints nothing else of the file, so the file's other undefined
names are not counted with it (what is introduced still is: the export is new).
oxlint does not report `export default name` alone (a gap of its rule). Positions are
taken from its byte offsets: lines split at "\\n", as "introduced" compares them, and
columns in characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import partial
from pathlib import PurePosixPath
from typing import Any

from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.patch.oxlint import Oxlint, failed, run
from chorus_tools.tools.patch.pyproblems import Checked, Finding, Modules

CODE = "no-undef"
_RULE = "eslint(no-undef)"
# the suffix oxlint reads a text by, for each language of the table
_SUFFIXES = {"javascript": (".js", ".mjs", ".cjs", ".jsx"),
             "typescript": (".ts", ".mts", ".cts"), "tsx": (".tsx",)}
_DECLARATION = (".d.ts", ".d.mts", ".d.cts")
# what oxlint's semantic check says of `export { name }` where nothing defines `name`: an
# undefined identifier too (a rename at the definition leaves it), reported in its words
_EXPORT = re.compile(r"Export '[^']+' is not defined\.?\Z")


def checker(oxlint: Oxlint, language: str) -> Any:
    """The check of a text in `language` at a path (tools.patch.problems' `check`)."""
    return partial(_findings, oxlint, language)


def _findings(oxlint: Oxlint, language: str, path: str, text: str, budget: Budget,
              modules: Modules | None) -> Checked:
    data = text.encode("utf-8", "surrogatepass")
    budget.admit(len(data))
    status, report = run(oxlint, suffix(language, path), data, budget)
    if status not in (0, 1):
        raise failed(f"failed (exit status {status})")
    return Checked(parse(report, data), None)


def suffix(language: str, path: str) -> str:
    """The suffix of the file oxlint reads: the path's own when it is one of the
    language's (a declaration file's whole one), else the language's first."""
    name = PurePosixPath(path).name.lower()
    for whole in _DECLARATION:
        if language == "typescript" and name.endswith(whole):
            return whole
    own = PurePosixPath(name).suffix
    return own if own in _SUFFIXES[language] else _SUFFIXES[language][0]


def parse(report: bytes, data: bytes) -> list[Finding]:
    """The no-undef findings of oxlint's JSON report on `data`, in file order; Skipped
    when the report cannot be read or says oxlint did not judge the text."""
    try:
        found = json.loads(report)
        diagnostics = found["diagnostics"]
        if found.get("number_of_files") != 1:
            raise failed("did not read the file")
        at = []
        for d in diagnostics:
            if d.get("code") != _RULE and not _EXPORT.match(str(d.get("message"))):
                raise failed(f"could not judge the text: {d.get('message', '')}".rstrip(": "))
            offset = int(d["labels"][0]["span"]["offset"])
            if not 0 <= offset <= len(data):
                raise ValueError(offset)
            at.append((offset, str(d["message"]).rstrip(".")))
    except Skipped:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise failed("printed a report that could not be read") from None
    return list(_placed(data, sorted(at)))


def _placed(data: bytes, at: list[tuple[int, str]]) -> Iterator[Finding]:
    """Findings at byte offsets (in order), their lines counted once through `data`."""
    line, start, seen = 1, 0, 0
    for offset, message in at:
        line += data.count(b"\n", seen, offset)
        seen = offset
        start = data.rfind(b"\n", start, offset) + 1 or start
        column = len(data[start:offset].decode("utf-8", "replace")) + 1
        yield Finding(line, column, CODE, message, message)
