"""tools.timefmt: exact microseconds, the same answer cached or not."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.tools.timefmt import iso_utc

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@given(st.integers(min_value=-(10 ** 18), max_value=4 * 10 ** 18))
def test_iso_utc_is_the_calendar_time_to_the_microsecond(ns):
    expected = EPOCH + timedelta(microseconds=ns // 1000)
    assert iso_utc(ns) == expected.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert iso_utc(ns) == iso_utc(ns)  # a cached second gives the same text


def test_a_known_instant():
    assert iso_utc(1_769_860_800_123_456_789) == "2026-01-31T12:00:00.123456Z"
