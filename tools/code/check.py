"""file.check: a file's syntax errors as it is (docs/protocol.md, Diagnostics), judged as
every change is judged (tools/patch/diagnostics.py), within the same bounds: a file over
--syntax-max-bytes is not read, and its diagnostics say they were skipped."""

from __future__ import annotations

import os
from typing import Any

from chorus_tools.tools.code.languages import LANGUAGES, name_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.diagnostics import Diagnosis, Judge
from chorus_tools.tools.patch.syntax import HEAD_CHARS
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, decode

_CHUNK = 1 << 20


def check(ctx: ToolContext, path: str) -> dict[str, Any]:
    rel = ctx.ws.rel(path)
    fd, st = ctx.ws.open_regular(rel, shown=path)
    try:
        head = os.read(fd, HEAD_CHARS)
        judge = Judge.of(ctx, rel, head.decode("utf-8", "replace"), shown=path)
        if judge.language is None:
            raise ToolError("unsupported_language",
                            f"Cannot check {path}: {name_of(rel)} is not a language the "
                            f"server parses ({', '.join(sorted(LANGUAGES))}).", path=path,
                            language=name_of(rel), supported=sorted(LANGUAGES))
        if st.st_size > judge.budget.max_bytes:
            found = judge.skipped(f"file over {judge.budget.max_bytes} bytes")
        else:
            found = _judged(judge, fd, head, path)
    finally:
        os.close(fd)
    return {"path": rel, "language": judge.language, "diagnostics": found.reply()}


def _judged(judge: Judge, fd: int, head: bytes, path: str) -> Diagnosis:
    data = head + b"".join(iter(lambda: os.read(fd, _CHUNK), b""))
    mime = binary_mime(data[:SNIFF_BYTES])
    if mime is not None:
        raise ToolError("binary_file", f"Binary file ({mime}): {path}. file.check reads "
                        "text only.", path=path, mime_type=mime, size=len(data))
    text = decode(data)[0]
    found = judge.diagnosis(text, text)
    assert found is not None  # the language is one the server parses
    return found
