"""glibc's malloc told to keep the memory a large buffer freed, for the next one.

The server and its workers allocate and free buffers of megabytes per request: an upload
part's 11 MB line and its 8 MiB of bytes, a 1 MiB read's reply. By default glibc maps a
block over its threshold (128 KiB, raised as such blocks are freed) with mmap and gives
it back when freed, and trims the heap's top above twice that threshold, so each new
buffer is memory the kernel must find and zero again, a page fault every 4 KiB. For a
1 GiB upload in 8 MiB parts that was the largest cost in the server tree: 4.7 s of CPU
(2.9 s of it in the kernel) against 2.7 s (1.0 s) with these settings (docs/benchmarks.md,
upload_parts). The price: each process may keep up to TRIM bytes it freed resident.
"""

from __future__ import annotations

import ctypes
import logging

log = logging.getLogger("chorus.server")

_M_TRIM_THRESHOLD = -1  # malloc.h
_M_MMAP_THRESHOLD = -3
MMAP = 32 << 20  # blocks up to this come from the heap (glibc's ceiling for the setting)
TRIM = 64 << 20  # the free memory at the heap's top that stays mapped


def keep_freed_memory() -> bool:
    """Set both thresholds in this process (children forked later inherit them): whether
    it could. Without glibc (musl, another libc) nothing changes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM))
    if not done:
        log.debug("malloc's thresholds were left as they were")
    return done
