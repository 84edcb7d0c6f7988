"""How hard the property tests search: `CHORUS_FUZZ=N` multiplies every hypothesis test's
example count by N for a fuzzing run; unset, the suite keeps its everyday counts."""

from __future__ import annotations

import os

SCALE = max(1, int(os.environ.get("CHORUS_FUZZ", "1")))


def examples(count: int) -> int:
    """`count` examples, scaled for a fuzzing run."""
    return count * SCALE
