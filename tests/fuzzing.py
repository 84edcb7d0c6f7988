"""How hard the property tests search: `CHORUS_FUZZ=N` multiplies every hypothesis test's
example count by N for a fuzzing run; unset, the suite keeps its everyday counts. And which
repeated cases the default suite leaves to the long run."""

from __future__ import annotations

import os
from typing import Any, Iterable

import pytest

SCALE = max(1, int(os.environ.get("CHORUS_FUZZ", "1")))


def examples(count: int) -> int:
    """`count` examples, scaled for a fuzzing run."""
    return count * SCALE


def first_then_long(values: Iterable[object]) -> list[Any]:
    """`values` as test parameters: the first in the default suite, the others under the
    `long` marker (CI runs both), for a test repeated over engines, seeds or round counts
    whose first case already covers the path and whose others cost minutes of suite."""
    return [pytest.param(value, marks=() if i == 0 else pytest.mark.long)
            for i, value in enumerate(values)]
