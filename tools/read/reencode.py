"""Edited text back to a file's bytes, keeping the bytes of everything the edit did not
change (docs/protocol.md, `file.patch`: every byte outside the changed text is unchanged).

Encoding the whole text again is enough when the file's bytes are exactly what its
text encodes to, which holds for every well-formed UTF-8 and latin-1 file and almost every
legacy one; a UTF-8 or UTF-16 file with bad bytes keeps those the edit kept
(tools/read/lossy.py).
Some legacy encodings have characters with two byte forms: cp932 decodes both the
NEC (0xED40) and the IBM (0xFA5C) form of 纊 and writes back the first, while Windows
writes the second; Big5 and cp950 have a few such pairs too. A file that writes each
such character one way keeps its own form of it, new text included; one that mixes both
forms of a character keeps the bytes of every unchanged line (the lines of these
encodings split on the byte 0x0A, as the text splits on "\\n") and, inside the lines an
edit touched, of every unchanged character.
"""

from __future__ import annotations

import difflib
import re
from itertools import accumulate

from chorus_tools.tools.read import lossy, text
from chorus_tools.tools.read.legacy import CODEC_OF

_CHAR_DIFF_LIMIT = 1 << 16  # characters in a changed block compared one by one at most
_LOSSY = ("utf-8", "utf-8-sig", "utf-16-le", "utf-16-be")  # read with U+FFFD for bad bytes


def encode_edit(after: str, encoding: str, before: str, original: bytes | None) -> bytes:
    """`after`, an edit of `before` (the text of `original`, the file's bytes, None for a
    new file), as the file's bytes in `encoding`. Raises UnicodeEncodeError, with
    offsets into `after`, when the encoding cannot hold one of its characters."""
    encoded = text.encode(after, encoding)
    lossy_utf = encoding in _LOSSY and "\ufffd" in before  # no U+FFFD: it decoded strictly
    if original is None or not (lossy_utf or encoding in CODEC_OF) or \
            text.encode(before, encoding) == original:
        return encoded
    if lossy_utf:
        bom = text.BOM_OF.get(encoding, b"")
        return bom + lossy.reencode(before, original[len(bom):], after,
                                    text.CODEC_OF[encoding])
    codec = CODEC_OF[encoding]
    forms = _own_forms(before, original, codec)
    if forms is not None:
        return _encode_with(after, codec, forms)
    return _by_lines(after, codec, before, original)


def _own_forms(before: str, original: bytes, codec: str) -> dict[str, bytes] | None:
    """The file's own bytes for each character it writes otherwise than the codec does,
    when it writes each such character one way throughout (a file written by one tool);
    None when it mixes both forms of one."""
    forms: dict[str, bytes] = {}
    for line, raw in zip(text.lines_with_endings(before), _byte_lines(original)):
        if line.encode(codec) == raw:
            continue
        ends = _ends(line, codec)
        if ends[-1] != len(raw):
            return None
        for i, ch in enumerate(line):
            form = raw[ends[i]:ends[i + 1]]
            if form != ch.encode(codec) and forms.setdefault(ch, form) != form:
                return None
    return forms if _encode_with(before, codec, forms) == original else None


def _encode_with(s: str, codec: str, forms: dict[str, bytes]) -> bytes:
    """`s` encoded, with `forms` for the characters they name."""
    parts = re.split(f"([{re.escape(''.join(forms))}])", s)
    return b"".join(forms[part] if i % 2 else part.encode(codec)
                    for i, part in enumerate(parts))


def _ends(line: str, codec: str) -> list[int]:
    """Where each character of `line` ends in its encoding (0 first)."""
    return list(accumulate((len(ch.encode(codec)) for ch in line), initial=0))


def _byte_lines(data: bytes) -> list[bytes]:
    """The file's lines as bytes, each keeping its b"\\n" (text.lines_with_endings on bytes)."""
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _by_lines(after: str, codec: str, before: str, original: bytes) -> bytes:
    """A file that mixes both forms of a character: unchanged lines keep their bytes
    (difflib over the lines between the unchanged head and tail), and so do the
    unchanged characters of the lines the edit touched."""
    old_lines, new_lines = text.lines_with_endings(before), text.lines_with_endings(after)
    old_bytes = _byte_lines(original)
    shorter = min(len(old_lines), len(new_lines))
    head = _common(old_lines, new_lines, range(shorter))
    tail = _common(old_lines, new_lines, range(-1, head - shorter - 1, -1))
    old_mid = old_lines[head:len(old_lines) - tail]
    new_mid = new_lines[head:len(new_lines) - tail]
    out = old_bytes[:head]
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(old_bytes[head + i1:head + i2])
        else:
            old_block = b"".join(old_bytes[head + i1:head + i2])
            out.append(_block("".join(old_mid[i1:i2]), old_block, "".join(new_mid[j1:j2]),
                              codec))
    return b"".join(out + old_bytes[len(old_bytes) - tail:])


def _common(old: list[str], new: list[str], at: range) -> int:
    """How many lines, taken at the indexes `at` (from the start, or negative from the
    end), the two texts share before they first differ; the unchanged head or tail is
    kept without the diff's cost."""
    return next((n for n, i in enumerate(at) if old[i] != new[i]), len(at))


def _block(old: str, old_bytes: bytes, new: str, codec: str) -> bytes:
    """A changed block of lines: its unchanged characters keep their bytes when each
    character's own encoding is as long as its bytes in the file (true of every pair of
    byte forms these encodings have); otherwise the block is encoded afresh."""
    ends = _ends(old, codec)
    if ends[-1] != len(old_bytes) or len(old) + len(new) > _CHAR_DIFF_LIMIT:
        return new.encode(codec)
    out = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out.append(old_bytes[ends[i1]:ends[i2]] if tag == "equal"
                   else new[j1:j2].encode(codec))
    joined = b"".join(out)
    return joined if joined.decode(codec) == new else new.encode(codec)
