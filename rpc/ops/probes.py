"""The operator's HTTP routes (docs/protocol.md, Running many): `/healthz`, `/readyz`,
`/metrics`, answered by the HTTP transport (rpc/wire/http.py) from its head alone.

The probes need no token and say nothing about the workspace. They still pass the
transport's Host and Origin checks: a kubelet probes the pod's address, which is not a
loopback bind (where the Host check applies), so keeping the checks costs a fleet nothing
and keeps a browser page from probing a loopback server. A connection is kept alive
after a probe, as after any request."""

from __future__ import annotations

import orjson

from chorus_tools.rpc.ops.drain import READY, Drain
from chorus_tools.rpc.ops.metrics import Metrics
from chorus_tools.rpc.wire.http_message import Reply, plain

HEALTH, READY_PATH, METRICS_PATH = "/healthz", "/readyz", "/metrics"
PROBES = (HEALTH, READY_PATH)
ROUTES = (*PROBES, METRICS_PATH)
JSON = [("content-type", "application/json"), ("cache-control", "no-store")]


def retry_after(drain: Drain) -> list[tuple[str, str]]:
    return [("retry-after", str(max(1, int(drain.retry_after))))]


def refusal(drain: Drain) -> Reply:
    """What any other request gets while the server drains: 503 with Retry-After."""
    return plain(503, "Service unavailable: the server is shutting down; retry on another "
                      "one or after it restarts.", retry_after(drain))


def answer(path: str, drain: Drain, metrics: Metrics | None) -> Reply:
    """The reply of a GET of one operator route (`path` in ROUTES)."""
    if path == HEALTH:  # the loop answered: that is all liveness asks
        return Reply(200, orjson.dumps({"status": "ok"}), list(JSON))
    if path == READY_PATH:
        if drain.state == READY:
            return Reply(200, orjson.dumps({"status": "ready"}), list(JSON))
        extra = retry_after(drain) if drain.draining else []
        return Reply(503, orjson.dumps({"status": drain.state}), [*JSON, *extra])
    if metrics is None:
        return plain(404, "Not found: metrics are off.")
    body, content_type = metrics.exposition()
    return Reply(200, body, [("content-type", content_type)])
