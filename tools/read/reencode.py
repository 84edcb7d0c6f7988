"""Edited text back to a file's bytes, keeping the bytes of everything the edit did not
change (SPEC §4: every byte outside the changed text is unchanged).

Encoding the whole text again is enough when the file's bytes are exactly what its
text encodes to, which holds for every UTF-8 and latin-1 file and almost every legacy
one. Some legacy encodings have characters with two byte forms: cp932 decodes both the
NEC (0xED40) and the IBM (0xFA5C) form of 纊 and writes back the first, while Windows
writes the second; Big5 and cp950 have a few such pairs too. For those files the unchanged lines keep their own bytes (the lines of these
encodings split on the byte 0x0A, as the text splits on "\\n"), and inside the lines an
edit touched, the unchanged characters keep theirs.
"""

from __future__ import annotations

import difflib
from itertools import accumulate

from chorus_tools.tools.read import text
from chorus_tools.tools.read.legacy import CODEC_OF

_CHAR_DIFF_LIMIT = 1 << 16  # characters in a changed block compared one by one at most


def encode_edit(after: str, encoding: str, before: str, original: bytes | None) -> bytes:
    """`after`, an edit of `before` (the text of `original`, the file's bytes, None for a
    new file), as the file's bytes in `encoding`. Raises UnicodeEncodeError, with
    offsets into `after`, when the encoding cannot hold one of its characters."""
    encoded = text.encode(after, encoding)
    if original is None or encoding not in CODEC_OF or \
            text.encode(before, encoding) == original:
        return encoded
    codec = CODEC_OF[encoding]
    old_lines, new_lines = text.split_lines(before), text.split_lines(after)
    old_bytes = original.split(b"\n")
    old_bytes = [part + b"\n" for part in old_bytes[:-1]] + ([old_bytes[-1]]
                                                               if old_bytes[-1] else [])
    out = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(old_bytes[i1:i2])
        else:
            out.append(_block("".join(old_lines[i1:i2]), b"".join(old_bytes[i1:i2]),
                              "".join(new_lines[j1:j2]), codec))
    return b"".join(out)


def _block(old: str, old_bytes: bytes, new: str, codec: str) -> bytes:
    """A changed block of lines: its unchanged characters keep their bytes when each
    character's own encoding is as long as its bytes in the file (true of every pair of
    byte forms these encodings have); otherwise the block is encoded afresh."""
    ends = list(accumulate((len(ch.encode(codec)) for ch in old), initial=0))
    if ends[-1] != len(old_bytes) or len(old) + len(new) > _CHAR_DIFF_LIMIT:
        return new.encode(codec)
    out = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out.append(old_bytes[ends[i1]:ends[i2]] if tag == "equal"
                   else new[j1:j2].encode(codec))
    joined = b"".join(out)
    return joined if joined.decode(codec) == new else new.encode(codec)
