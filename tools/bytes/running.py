"""A SHA-256 that can be set down and picked up again by another process: the running digest
of an upload's parts (docs/protocol.md, Bytes in and out), kept in its spool's meta beside
the parts, so the commit need not read the whole spool again to hash it.

Parts of one upload go to whichever worker is free, and a worker may be replaced between
two parts, so the digest's state must live on disk, not in a process. hashlib's objects
cannot be saved (no pickle, no export of their state); OpenSSL's SHA-256 context can: it
is a plain public struct (`SHA256_CTX` in openssl/sha.h, 112 bytes on every platform and
every OpenSSL since 0.9.8), which these functions save as bytes and load again. They call
the libcrypto hashlib itself is linked with, at its speed (SHA-NI where the CPU has it).
Where that library cannot be loaded, `AVAILABLE` is False and the commit hashes the spool
as before: the running digest is a saving, never needed for a right answer."""

from __future__ import annotations

import ctypes

STATE_BYTES = 112  # sizeof(SHA256_CTX): eight words of state, two of length, 64 of block, two


def _load() -> ctypes.CDLL | None:
    """libcrypto by its sonames, the one hashlib loaded first: never by
    ctypes.util.find_library, which runs ldconfig and writes temp files, refused in a
    worker's Landlock domain (docs/protocol.md, Confinement)."""
    for name in ("libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"):
        try:
            lib = ctypes.CDLL(name)
            for fn in (lib.SHA256_Init, lib.SHA256_Update, lib.SHA256_Final):
                fn.restype = ctypes.c_int
        except (OSError, AttributeError):
            continue
        lib.SHA256_Update.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t)
        return lib
    return None


_LIB = _load()
AVAILABLE = _LIB is not None


def fresh() -> bytes:
    """The state of a digest that has seen nothing."""
    assert _LIB is not None
    ctx = ctypes.create_string_buffer(STATE_BYTES)
    _LIB.SHA256_Init(ctx)
    return ctx.raw


def update(state: bytes, *chunks: bytes) -> bytes:
    """The state after `chunks`, in order, were added to `state`."""
    assert _LIB is not None
    ctx = ctypes.create_string_buffer(state, STATE_BYTES)
    for chunk in chunks:
        _LIB.SHA256_Update(ctx, chunk, len(chunk))
    return ctx.raw


def hexdigest(state: bytes) -> str:
    """The digest of what `state` has seen (the state itself is left as it was)."""
    assert _LIB is not None
    ctx = ctypes.create_string_buffer(state, STATE_BYTES)
    out = ctypes.create_string_buffer(32)
    _LIB.SHA256_Final(out, ctx)
    return out.raw.hex()
