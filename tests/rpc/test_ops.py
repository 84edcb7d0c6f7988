"""rpc/ops/ in-process: the metrics' bounded labels and their two renderings (JSON and
the Prometheus text format, parsed back by prometheus_client's own parser), the drain
state the dispatcher reads, the probes' replies, and the JSON log lines; prometheus_client
is not imported by a start."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys

from prometheus_client.parser import text_string_to_metric_families

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.ops import logs, probes
from chorus_tools.rpc.ops.drain import Drain
from chorus_tools.rpc.ops.metrics import Metrics
from fake_pool import Client, FakePool
from rpc_client import REPO


def test_outcomes_outside_the_error_table_count_as_internal_error() -> None:
    m = Metrics()
    m.begin()
    m.end("file.read", "ok", 0.002)
    m.begin()
    m.end("file.read", "made-up-by-a-client", 0.5)
    assert m.requests == {("file.read", "ok"): 1, ("file.read", "internal_error"): 1}
    assert m.in_flight == 0
    buckets = m.figures()["chorus_request_seconds"][0]["buckets"]
    assert (buckets["0.001"], buckets["0.0025"], buckets["0.5"], buckets["+Inf"]) == (0, 1, 2, 2)


def test_the_exposition_parses_back_to_the_same_figures() -> None:
    m = Metrics()
    m.providers["chorus_workspace_bytes"] = lambda: 12345
    m.providers["chorus_quota_files"] = lambda: 1 / 0  # a broken provider reads 0
    m.warm_state = lambda: "warm"
    for seconds in (0.001, 0.02, 3.0):
        m.begin()
        m.end("file.search", "ok", seconds)
    m.bytes_read = 4096
    body, content_type = m.exposition()
    assert content_type.startswith("text/plain")
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(body.decode()) for s in f.samples}
    assert samples[("chorus_requests_total", (("method", "file.search"),
                                              ("outcome", "ok")))] == 3
    assert samples[("chorus_request_seconds_count", (("method", "file.search"),))] == 3
    assert samples[("chorus_request_seconds_bucket", (("le", "0.025"),
                                                      ("method", "file.search")))] == 2
    assert samples[("chorus_workspace_bytes", ())] == 12345
    assert samples[("chorus_quota_files", ())] == 0
    assert samples[("chorus_bytes_read_total", ())] == 4096
    assert samples[("chorus_warm_state", (("state", "warm"),))] == 1
    assert samples[("chorus_warm_state", (("state", "cold"),))] == 0


def test_the_dispatcher_counts_every_request_under_bounded_labels() -> None:
    async def go() -> None:
        metrics = Metrics()
        pool = FakePool(lambda task: (True, {"content": "héllo"}, None))
        client = Client(Dispatcher(pool, request_timeout=30.0, metrics=metrics))
        await client.call("file.read", {"path": "a.txt"}, rid=1)
        for i in range(50):
            await client.call(f"no.such.{i}", {}, rid=100 + i)
        await client.call("file.read", {"path": "a.txt", "junk": 1}, rid=2)
        figures = (await client.call("rpc.metrics", {}, rid=3))["result"]
        counted = {(s["method"], s["outcome"]): s["value"]
                   for s in figures["chorus_requests_total"]}
        assert counted == {("file.read", "ok"): 1, ("unknown", "method_not_found"): 50,
                           ("file.read", "invalid_params"): 1}
        assert figures["chorus_bytes_read_total"] == len("héllo".encode())
        assert figures["chorus_requests_in_flight"] == 1  # rpc.metrics itself
        bad = await client.call("rpc.metrics", {"x": 1}, rid=4)
        assert bad["error"]["data"]["error"] == "invalid_params"
        assert bad["error"]["data"]["param"] == "x"  # regression: it said "params"
    asyncio.run(go())


def test_a_draining_dispatcher_answers_shutting_down_and_runs_nothing() -> None:
    async def go() -> None:
        drain = Drain(retry_after=7)
        pool = FakePool(lambda task: (True, {}, None))
        client = Client(Dispatcher(pool, request_timeout=30.0, drain=drain))
        drain.ready()
        drain.begin()
        reply = await client.call("file.read", {"path": "a.txt"})
        assert reply["error"]["code"] == -32027
        assert reply["error"]["data"]["error"] == "shutting_down"
        assert reply["error"]["data"]["retry_after"] == 7
        assert pool.tasks == []
    asyncio.run(go())


def test_probe_replies_follow_the_state() -> None:
    drain = Drain(retry_after=3)
    starting = probes.answer("/readyz", drain, None)
    assert (starting.status, json.loads(starting.body)) == (503, {"status": "starting"})
    drain.ready()
    assert probes.answer("/readyz", drain, None).status == 200
    drain.begin()
    draining = probes.answer("/readyz", drain, None)
    assert (draining.status, json.loads(draining.body)) == (503, {"status": "draining"})
    assert ("retry-after", "3") in draining.headers
    health = probes.answer("/healthz", drain, None)
    assert (health.status, json.loads(health.body)) == (200, {"status": "ok"})
    assert probes.answer("/metrics", drain, None).status == 404
    assert ("retry-after", "3") in probes.refusal(drain).headers


def test_a_json_log_line_has_the_request_fields_and_nothing_else() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    logs.requests_log.addHandler(handler)
    logs.requests_log.setLevel(logging.INFO)
    try:
        logs.log_request(7, "file.read", "a.txt", "ok", 1.23456)
        logs.log_request("x", "file.search", {"not": "a path"}, "timeout", 2.0)
    finally:
        logs.requests_log.removeHandler(handler)
        logs.requests_log.setLevel(logging.NOTSET)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert set(first) == {"time", "level", "event", "logger", "id", "method", "path",
                          "outcome", "ms"}
    assert (first["id"], first["path"], first["ms"], first["level"]) == (7, "a.txt", 1.235,
                                                                         "info")
    assert "path" not in second and second["outcome"] == "timeout"


def test_a_start_does_not_import_prometheus_client() -> None:
    code = ("import sys; from chorus_tools.rpc import cli; "
            "from chorus_tools.rpc.dispatch import dispatcher; "
            "print('prometheus_client' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"
