"""Shutdown and cancellation end to end (docs/protocol.md, Cancellation and Shutdown): end
of input and SIGTERM finish what is in flight and exit 0 with no worker left; a server
killed with SIGKILL takes its workers with it; both cancel notifications stop queued and
running requests."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from e2e_support import (ENDLESS_SIZE, SLOW_SIZE, E2EServer, endless_tree, error_of, request,
                         sparse_text)
from rpc_client import alive, wait_gone

LSP_CANCEL = "$/cancelRequest"
MCP_CANCEL = "notifications/cancelled"


def make_workspace(root: Path) -> Path:
    (root / "a.txt").write_text("alpha\nbeta\n")
    sparse_text(root / "slow.txt", SLOW_SIZE)
    sparse_text(root / "endless.txt", ENDLESS_SIZE)
    return root


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


# -- shutdown ------------------------------------------------------------------------------

def test_end_of_input_answers_everything_in_flight_and_exits_0(ws: Path) -> None:
    with E2EServer(ws, "--workers", "2") as server:
        workers = server.workers(2)
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
        for rid in range(1, 6):
            server.request("file.read", {"path": "a.txt"}, rid=rid)
        server.send([request("file.info", {"path": "a.txt"}, "b1"), request("nope", None, "b2")])
        replies = server.rest()
        assert server.proc.wait(15) == 0
    singles = {r["id"]: r for r in replies if isinstance(r, dict)}
    assert sorted(singles, key=str) == [1, 2, 3, 4, 5, "slow"]
    assert all("result" in r for r in singles.values())
    assert singles["slow"]["result"]["total_lines"] == 501
    [batch] = [r for r in replies if isinstance(r, list)]
    assert sorted(r["id"] for r in batch) == ["b1", "b2"]
    assert not [pid for pid in workers if alive(pid)]


def test_sigterm_finishes_the_request_in_flight_and_exits_0(ws: Path) -> None:
    with E2EServer(ws, "--workers", "2") as server:
        workers = server.workers(2)
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
        server.running(ws / "slow.txt")
        server.proc.send_signal(signal.SIGTERM)
        reply = server.recv(timeout=60)
        assert reply["id"] == "slow" and reply["result"]["total_lines"] == 501
        with pytest.raises(EOFError):
            server.recv()
        assert server.proc.wait(15) == 0
    assert not [pid for pid in workers if alive(pid)]


def test_regression_sigterm_as_soon_as_the_workers_exist_exits_0(ws: Path) -> None:
    """The SIGTERM handler used to be installed after the workers were forked: a SIGTERM
    in between killed the server with the signal's default action."""
    with E2EServer(ws, "--workers", "2") as server:
        workers = server.workers(2)
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(15) == 0
    assert not [pid for pid in workers if alive(pid)]


def test_workers_die_with_a_server_killed_by_sigkill(ws: Path) -> None:
    with E2EServer(ws, "--workers", "2") as server:
        workers = server.workers(2)
        server.request("file.read", {"path": "endless.txt"})
        busy = server.running(ws / "endless.txt")
        assert busy in workers
        server.proc.kill()
        server.proc.wait(15)
        wait_gone(workers)


@pytest.fixture(scope="module")
def search_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace where a search for "zebra" keeps ripgrep busy until it is stopped."""
    root = tmp_path_factory.mktemp("search")
    (root / "a.txt").write_text("alpha\nbeta\n")
    endless_tree(root / "tree")
    return root


def test_workers_and_ripgrep_die_with_a_server_killed_by_sigkill(search_ws: Path) -> None:
    with E2EServer(search_ws, "--workers", "2", "--search-engine", "ripgrep") as server:
        workers = server.workers(2)
        server.request("file.search", {"pattern": "zebra"})
        searchers = server.searchers()
        server.proc.kill()
        server.proc.wait(15)
        wait_gone(workers + searchers)


def test_shutdown_timeout_bounds_what_is_in_flight(search_ws: Path) -> None:
    with E2EServer(search_ws, "--workers", "2", "--search-engine", "ripgrep",
                   "--shutdown-timeout", "0.5") as server:
        workers = server.workers(2)
        server.request("file.search", {"pattern": "zebra"}, rid="search")
        searchers = server.searchers()
        [reply] = server.rest()  # an endless search answered at all: it was stopped
        assert server.proc.wait(15) == 0
    assert reply["id"] == "search" and "error" in reply
    assert not [pid for pid in workers + searchers if alive(pid)]


# -- cancellation --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> tuple[E2EServer, Path]:
    """A server with a single worker: a request behind an endless one stays queued."""
    root = make_workspace(tmp_path_factory.mktemp("ws"))
    with E2EServer(root, "--workers", "1") as server:
        yield server, root


def block(server: E2EServer, root: Path, rid: object) -> None:
    """Occupy the only worker with a read that never finishes by itself."""
    server.request("file.read", {"path": "endless.txt"}, rid=rid)
    server.running(root / "endless.txt")


def test_lsp_cancel_of_a_queued_request_answers_cancelled(one_worker) -> None:
    server, root = one_worker
    block(server, root, "blocker")
    server.request("file.read", {"path": "a.txt"}, rid="queued")
    server.notify(LSP_CANCEL, {"id": "queued"})
    reply = server.recv()
    assert reply["id"] == "queued" and error_of(reply) == (-32800, "cancelled")
    server.notify(LSP_CANCEL, {"id": "blocker"})
    reply = server.recv()
    assert reply["id"] == "blocker" and error_of(reply) == (-32800, "cancelled")
    assert "result" in server.call("file.read", {"path": "a.txt"})


def test_mcp_cancel_of_a_queued_request_gets_no_response(one_worker) -> None:
    server, root = one_worker
    block(server, root, "blocker")
    server.request("file.read", {"path": "a.txt"}, rid="queued")
    server.notify(MCP_CANCEL, {"requestId": "queued", "reason": "user pressed stop"})
    server.request("file.info", {"path": "a.txt"}, rid="after")
    server.notify(LSP_CANCEL, {"id": "blocker"})
    first, second = server.recv(), server.recv()
    # one worker, first come first served: "queued" would have been answered before "after"
    assert [first["id"], second["id"]] == ["blocker", "after"]
    assert error_of(first) == (-32800, "cancelled") and "result" in second


def test_lsp_cancel_of_a_running_read_stops_it(one_worker) -> None:
    server, root = one_worker
    block(server, root, "running")
    server.notify(LSP_CANCEL, {"id": "running"})
    reply = server.recv()  # an endless read answered at all: it was stopped
    assert reply["id"] == "running" and error_of(reply) == (-32800, "cancelled")
    assert "result" in server.call("file.read", {"path": "a.txt"})


@pytest.mark.parametrize("cancel", [
    (LSP_CANCEL, {"id": 424242}),
    (LSP_CANCEL, {"id": "done"}),
    (MCP_CANCEL, {"requestId": "never-sent"}),
    (MCP_CANCEL, {"requestId": "done"}),
    (LSP_CANCEL, {"id": [1]}),
    (LSP_CANCEL, {"id": {"a": 1}}),
    (MCP_CANCEL, {"requestId": True}),
    (LSP_CANCEL, {}),
    (MCP_CANCEL, None),
    (LSP_CANCEL, [7]),
])
def test_cancel_for_an_unknown_or_finished_id_is_ignored(one_worker, cancel) -> None:
    server, _ = one_worker
    server.request("file.info", {"path": "a.txt"}, rid="done")
    assert "result" in server.recv()
    server.notify(*cancel)
    server.fence()
    assert "result" in server.call("file.read", {"path": "a.txt"})


def test_mcp_cancel_of_a_running_read_stops_it_unanswered(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1") as server:
        server.request("file.read", {"path": "endless.txt"}, rid="running")
        server.running(ws / "endless.txt")
        server.notify(MCP_CANCEL, {"requestId": "running"})
        # the only worker serves again: the endless read was stopped
        assert "result" in server.call("file.read", {"path": "a.txt"})
        rest = server.rest()  # everything still in flight is answered before the exit
        assert server.proc.wait(15) == 0
    assert rest == []


def test_regression_cancel_read_together_with_its_request_is_not_lost(one_worker) -> None:
    """The request and its cancel arrive in one read: the cancel used to look for the
    request before the request was registered, and was dropped."""
    server, root = one_worker
    block(server, root, "blocker")
    server.send_raw(json.dumps(request("file.read", {"path": "a.txt"}, "queued")).encode()
                    + b"\n" + json.dumps(request(LSP_CANCEL, {"id": "queued"})).encode()
                    + b"\n")
    reply = server.recv()
    assert reply["id"] == "queued" and error_of(reply) == (-32800, "cancelled")
    server.notify(LSP_CANCEL, {"id": "blocker"})
    assert error_of(server.recv()) == (-32800, "cancelled")


def test_regression_cancel_in_a_batch_after_its_request(one_worker) -> None:
    server, root = one_worker
    block(server, root, "blocker")
    server.send([request("file.read", {"path": "a.txt"}, "queued"),
                 request(MCP_CANCEL, {"requestId": "queued"})])
    server.request("file.info", {"path": "a.txt"}, rid="after")
    server.notify(LSP_CANCEL, {"id": "blocker"})
    assert [server.recv()["id"], server.recv()["id"]] == ["blocker", "after"]
    # one worker, first come first served: an uncancelled "queued" would be answered first
    assert "result" in server.call("file.info", {"path": "a.txt"})


@pytest.mark.parametrize("bad_id", [[1], {"a": 1}])
def test_regression_cancel_naming_an_unhashable_id_keeps_the_server(one_worker,
                                                                     bad_id) -> None:
    """An array or object id in a cancel used to raise in the reader and stop the server."""
    server, _ = one_worker
    server.notify(LSP_CANCEL, {"id": bad_id})
    server.notify(MCP_CANCEL, {"requestId": bad_id})
    server.fence()


def test_regression_cancel_of_id_true_does_not_cancel_id_1(one_worker) -> None:
    """true == 1 in Python: a cancel naming `true` used to cancel the request with id 1."""
    server, root = one_worker
    block(server, root, 1)
    server.notify(LSP_CANCEL, {"id": True})
    server.fence()
    server.notify(LSP_CANCEL, {"id": 1})
    reply = server.recv()
    assert reply["id"] == 1 and error_of(reply) == (-32800, "cancelled")


@pytest.mark.parametrize("cancel", [(LSP_CANCEL, "id"), (MCP_CANCEL, "requestId")])
def test_cancel_of_a_running_search_stops_ripgrep(search_ws: Path, cancel) -> None:
    method, key = cancel
    with E2EServer(search_ws, "--workers", "1", "--search-engine", "ripgrep") as server:
        server.request("file.search", {"pattern": "zebra"}, rid="search")
        searchers = server.searchers()
        server.notify(method, {key: "search"})
        if method == LSP_CANCEL:
            reply = server.recv()
            assert reply["id"] == "search" and error_of(reply) == (-32800, "cancelled")
        wait_gone(searchers)
        assert "result" in server.call("file.search", {"pattern": "alpha", "path": "a.txt"})
        assert server.rest() == []


def test_cancel_of_a_running_python_search_stops_every_part(search_ws: Path) -> None:
    with E2EServer(search_ws, "--workers", "2", "--search-engine", "python") as server:
        server.request("file.search", {"pattern": "zebra"}, rid="search")
        server.running(search_ws / "tree" / "f0.txt")
        server.notify(LSP_CANCEL, {"id": "search"})
        reply = server.recv()
        assert reply["id"] == "search" and error_of(reply) == (-32800, "cancelled")
        # both workers serve again: no part of the search runs on
        replies = server.call_many([("file.search", {"pattern": "alpha", "path": "a.txt"}),
                                    ("file.read", {"path": "a.txt"})])
        assert all("result" in r for r in replies)
