"""One entry of the warm tree, packed: its kind and the lstat fields the answers need,
in one bytes object (about 80 bytes where an os.stat_result and its tuple took ~700:
the 200k-file tree went from 320 MB to fit in the default budget)."""

from __future__ import annotations

import os
import struct

from chorus_tools.tools.walk.source import DIR, FILE, OTHER, SYMLINK

KINDS = (FILE, DIR, SYMLINK, OTHER)
_FIELDS = struct.Struct("<BIQQIqqq")  # kind, mode, ino, dev, nlink, size, mtime, ctime (ns)
_NS = 1_000_000_000


def pack(kind: str, st: os.stat_result | None) -> bytes:
    """`st` None: listed, but its lstat failed (as the disk walk sees it)."""
    code = KINDS.index(kind)
    if st is None:
        return bytes((code,))
    return _FIELDS.pack(code, st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_size,
                        st.st_mtime_ns, st.st_ctime_ns)


def kind(entry: bytes) -> str:
    return KINDS[entry[0]]


def lstat(entry: bytes) -> os.stat_result | None:
    """The entry's lstat as the walker takes it (the fields not kept are 0)."""
    if len(entry) == 1:
        return None
    _, mode, ino, dev, nlink, size, mtime, ctime = _FIELDS.unpack(entry)
    return os.stat_result((mode, ino, dev, nlink, 0, 0, size, 0, mtime // _NS, ctime // _NS),
                          {"st_mtime_ns": mtime, "st_ctime_ns": ctime})


def same_object(old: bytes, new: bytes) -> bool:
    """The same directory still (inode, device and mode: its access unchanged)."""
    return len(old) > 1 and len(new) > 1 and old[1:21] == new[1:21]


def size(entry: bytes) -> int:
    """A regular file's size (0 for an entry whose lstat failed)."""
    return 0 if len(entry) == 1 else _SIZE.unpack_from(entry, _SIZE_AT)[0]


_SIZE = struct.Struct("<q")
_SIZE_AT = struct.calcsize("<BIQQI")  # the fields packed before the size
