"""ISO 8601 UTC timestamps, the one format every result and record uses."""

from datetime import datetime, timezone


def iso_utc(ns: int) -> str:
    """Format nanoseconds since the epoch as ISO 8601 UTC with a `Z` and microseconds.

    Integer arithmetic keeps the microseconds exact (a float would round them).
    """
    seconds, rest = divmod(ns, 1_000_000_000)
    stamp = datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{rest // 1000:06d}Z"
