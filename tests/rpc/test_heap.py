"""malloc's thresholds (rpc/process/heap.py): with them, a freed buffer of megabytes stays
mapped for the next one instead of going back to the kernel (to be faulted in, page by
page, again); without them it goes back. Each case in a fresh interpreter, whose heap
nothing else has shaped."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import os, sys
from chorus_tools.rpc.process import heap
if sys.argv[1] == "kept":
    assert heap.keep_freed_memory()
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
before = resident()
buffer = b"x" * (11 << 20)  # an upload part's line, every page written
del buffer
print(resident() - before)
"""


def _kept_after_free(mode: str) -> int:
    return int(subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True,
                              text=True, check=True).stdout)


def test_a_freed_large_buffer_stays_mapped_with_the_thresholds() -> None:
    assert _kept_after_free("kept") >= 10 << 20


def test_without_them_it_goes_back_to_the_kernel() -> None:
    assert _kept_after_free("default") < 4 << 20
