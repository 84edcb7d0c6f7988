"""A code file's bytes, read whole for parsing, with the file methods' confinement and
errors: a FIFO or device is never opened, a binary file is `binary_file`, one over the
largest content the server handles at once (`--max-write-bytes`) is `file_too_large`.
A file that is not UTF-8 (UTF-16 behind its BOM, a legacy encoding such as GBK or
latin-1) is handed on as the UTF-8 of its text, which the parsers read: its lines,
columns and reference texts are those file.read shows."""

from __future__ import annotations

import os

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, decoded

CHUNK = 1 << 20


def read_code(ctx: ToolContext, rel: str, shown: str | None = None) -> bytes:
    """The whole content of the regular file `rel` (`shown` as the client named it)."""
    shown = rel if shown is None else shown
    fd, st = ctx.ws.open_regular(rel, shown=shown)
    limit = ctx.limits.max_write_bytes
    try:
        if st.st_size > limit:
            raise ToolError("file_too_large", f"{shown} is {st.st_size} bytes, over the "
                            f"{limit} the server parses at once: read it in windows with "
                            "file_read instead.", path=shown, size=st.st_size, limit=limit)
        chunks = []
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    mime = binary_mime(data[:SNIFF_BYTES])
    if mime is not None:
        raise ToolError("binary_file", f"{shown} is a binary file ({mime}): it holds no "
                        "code to outline.", path=shown, mime_type=mime, size=len(data))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:  # parsed as the text it holds, as file.read shows it
        return decoded(data).text.encode("utf-8", "surrogatepass")
    return data


def read_candidate(ctx: ToolContext, rel: str) -> bytes | None:
    """A workspace-wide call's file: its bytes, or None when it cannot be read as code
    (gone since it was chosen, binary, too large, unreadable): such a file is skipped."""
    try:
        return read_code(ctx, rel)
    except ToolError:
        return None
