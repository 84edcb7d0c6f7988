"""The server's figures (docs/protocol.md, Running many: Metrics).

Counted on the hot path in plain Python (a dict increment and a bisect a request: the
budget is 3 % of a 4 KiB read), rendered as the Prometheus text format by
`prometheus_client` only when /metrics is scraped: importing it costs ~75 ms, which a
start-up must not pay. `rpc.metrics` answers the same figures as JSON without it.

Label values are bounded: a method is one the registry serves (else `unknown`), an
outcome `ok` or a code of the error table (else `internal_error`), so a client cannot
grow the series however many names it makes up.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from typing import Any, Awaitable, Callable, Iterator

from chorus_tools.rpc.wire.errors import CODES as WIRE_CODES

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
OTHER_OUTCOME = "internal_error"
OUTCOMES = frozenset(("ok", "parse_error", "invalid_request", "method_not_found",
                      *WIRE_CODES))
# a gauge read at scrape time; one not set (yet) reads 0 (docs/protocol.md)
Provider = Callable[[], float]
GAUGES = ("chorus_history_bytes", "chorus_workspace_bytes", "chorus_workspace_files",
          "chorus_quota_bytes", "chorus_quota_files", "chorus_http_connections",
          "chorus_worker_restarts_total")
HELP = {
    "chorus_requests_total": "Requests answered, by method and outcome.",
    "chorus_request_seconds": "Time from a request's admission to its answer.",
    "chorus_requests_in_flight": "Requests admitted and not yet answered.",
    "chorus_worker_restarts_total": "Worker processes replaced after a crash or a kill.",
    "chorus_bytes_read_total": "Bytes of file content returned by reads.",
    "chorus_bytes_written_total": "Bytes of file content sent by writes.",
    "chorus_history_bytes": "Bytes of content the history keeps.",
    "chorus_workspace_bytes": "Bytes of the workspace's regular files (0 until known).",
    "chorus_workspace_files": "Files and directories of the workspace (0 until known).",
    "chorus_quota_bytes": "The --quota-bytes limit (0: unlimited).",
    "chorus_quota_files": "The --quota-files limit (0: unlimited).",
    "chorus_http_connections": "Open HTTP connections.",
    "chorus_warm_state": "The warm tree's state: 1 for the current one.",
}
WARM_STATES = ("off", "cold", "warm")
SETTLE_SECONDS = 5.0  # the longest a read of the figures waits for the usage's count


class _Timing:
    """One method's histogram: counts per bucket (not cumulative), their sum and count."""

    __slots__ = ("counts", "total", "count")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0
        self.count = 0

    def cumulative(self) -> Iterator[tuple[str, int]]:
        running = 0
        for bound, n in zip((*map(str, BUCKETS), "+Inf"), self.counts):
            running += n
            yield bound, running


class Metrics:
    """One server's figures, shared by every dispatcher of it (stdio's, each HTTP
    session's). The gauges that live elsewhere are read from providers set at start."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str], int] = {}
        self.timings: dict[str, _Timing] = {}
        self.in_flight = 0
        self.bytes_read = 0
        self.bytes_written = 0
        self.providers: dict[str, Provider] = {}
        self.warm_state: Callable[[], str] = lambda: "off"
        # counts the workspace's usage anew (rpc/dispatch/quota.py), set by the server
        self.recount: Callable[[], Awaitable[None]] | None = None
        self._recounting: asyncio.Future | None = None

    async def settled(self) -> None:
        """Wait (bounded) for a count of the workspace's usage, so a read gets its figures
        now, not the 0 of figures not known yet nor those of the last change: one count at
        a time, shared by the reads that come meanwhile; one slower than SETTLE_SECONDS
        leaves the figures it finds (the count lands for the next read)."""
        if self.recount is None:
            return
        if self._recounting is None or self._recounting.done():
            self._recounting = asyncio.ensure_future(self.recount())
        await asyncio.wait({self._recounting}, timeout=SETTLE_SECONDS)

    def begin(self) -> None:
        self.in_flight += 1

    def end(self, method: str, outcome: str, seconds: float) -> None:
        """Count one answered request; `method` is already bounded (the dispatcher's
        names, else `unknown`), the outcome is bounded here."""
        self.in_flight -= 1
        if outcome not in OUTCOMES:
            outcome = OTHER_OUTCOME
        key = (method, outcome)
        self.requests[key] = self.requests.get(key, 0) + 1
        timing = self.timings.get(method)
        if timing is None:
            timing = self.timings[method] = _Timing()
        timing.counts[bisect_left(BUCKETS, seconds)] += 1
        timing.total += seconds
        timing.count += 1

    def gauge(self, name: str) -> float:
        provider = self.providers.get(name)
        if provider is None:
            return 0
        try:
            return provider() or 0
        except Exception:  # a provider must never break a scrape
            return 0

    def figures(self) -> dict[str, Any]:
        """Every family as JSON: what `rpc.metrics` answers."""
        warm = self.warm_state()
        out: dict[str, Any] = {
            "chorus_requests_total": [
                {"method": m, "outcome": o, "value": n}
                for (m, o), n in sorted(self.requests.items())],
            "chorus_request_seconds": [
                {"method": m, "count": t.count, "sum": t.total,
                 "buckets": dict(t.cumulative())}
                for m, t in sorted(self.timings.items())],
            "chorus_requests_in_flight": self.in_flight,
            "chorus_bytes_read_total": self.bytes_read,
            "chorus_bytes_written_total": self.bytes_written,
            "chorus_warm_state": {s: int(s == warm) for s in WARM_STATES},
        }
        for name in GAUGES:
            out[name] = self.gauge(name)
        return out

    def exposition(self) -> tuple[bytes, str]:
        """The Prometheus text format and its content type (prometheus_client, imported
        here: only a scrape pays for it), from a private registry, not the global one."""
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry
        from prometheus_client import generate_latest

        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(self))
        return generate_latest(registry), CONTENT_TYPE_LATEST


class _Collector:
    """Turns the figures into prometheus_client metric families at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self._m = metrics

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily,
                                            HistogramMetricFamily)
        m, figures = self._m, self._m.figures()
        requests = CounterMetricFamily("chorus_requests", HELP["chorus_requests_total"],
                                       labels=("method", "outcome"))
        for (method, outcome), n in sorted(m.requests.items()):
            requests.add_metric((method, outcome), n)
        yield requests
        seconds = HistogramMetricFamily("chorus_request_seconds",
                                        HELP["chorus_request_seconds"], labels=("method",))
        for method, t in sorted(m.timings.items()):
            seconds.add_metric((method,), list(t.cumulative()), t.total)
        yield seconds
        for name in ("chorus_bytes_read_total", "chorus_bytes_written_total",
                     "chorus_worker_restarts_total"):
            yield CounterMetricFamily(name.removesuffix("_total"), HELP[name],
                                      value=figures[name])
        for name in ("chorus_requests_in_flight", *GAUGES):
            if not name.endswith("_total"):
                yield GaugeMetricFamily(name, HELP[name], value=figures[name])
        warm = GaugeMetricFamily("chorus_warm_state", HELP["chorus_warm_state"],
                                 labels=("state",))
        for state, on in figures["chorus_warm_state"].items():
            warm.add_metric((state,), on)
        yield warm
