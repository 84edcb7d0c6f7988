"""A code file's bytes, read whole for parsing, with the file methods' confinement and
errors: a FIFO or device is never opened, a binary file is `binary_file`, one over the
largest content the server handles at once (`--max-write-bytes`) is `file_too_large`.
A UTF-16 file (behind its BOM) is handed on as the UTF-8 of its text, which the parsers
read: its lines and columns are those file.read shows."""

from __future__ import annotations

import os

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, bom_encoding, decoded

CHUNK = 1 << 20
_UTF16 = ("utf-16-le", "utf-16-be")


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
    if bom_encoding(data) in _UTF16:  # parsed as the text it holds, as file.read shows it
        return decoded(data).text.encode("utf-8", "surrogatepass")
    return data


def read_candidate(ctx: ToolContext, rel: str) -> bytes | None:
    """A workspace-wide call's file: its bytes, or None when it cannot be read as code
    (gone since it was chosen, binary, too large, unreadable): such a file is skipped."""
    try:
        return read_code(ctx, rel)
    except ToolError:
        return None
