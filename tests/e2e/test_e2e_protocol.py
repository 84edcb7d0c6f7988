"""The wire protocol end to end, over the real server's pipes: the JSON-RPC 2.0
specification's examples (its section 7) adapted to our methods, strict request objects,
both framings, oversized messages, and concurrent requests answered out of order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e_support import (LINE, LSP, SLOW_SIZE, E2EServer, error_of, request, sparse_text,
                         wait_for)

MAX_MESSAGE = 1000


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "b.txt").write_text("bravo\n")
    sparse_text(root / "slow.txt", SLOW_SIZE)
    return root


@pytest.fixture(scope="module")
def server(ws: Path) -> E2EServer:
    with E2EServer(ws, "--workers", "2", "--max-message-bytes", str(MAX_MESSAGE)) as s:
        yield s


def ok(reply: dict, rid: object) -> dict:
    assert reply["jsonrpc"] == "2.0" and reply["id"] == rid and "error" not in reply, reply
    return reply["result"]


def failed(reply: dict, code: int, rid: object = None) -> dict:
    assert reply["jsonrpc"] == "2.0" and reply["id"] == rid and "result" not in reply, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]


# -- section 7 of the JSON-RPC 2.0 specification -------------------------------------------

def test_positional_params_are_refused_naming_params(server: E2EServer) -> None:
    server.send(request("file.read", ["a.txt"], 1))
    error = failed(server.recv(), -32602, 1)
    assert error["data"]["error"] == "invalid_params"
    assert error["data"]["param"] == "params"


def test_empty_positional_params_mean_no_params(server: E2EServer) -> None:
    server.send(request("rpc.discover", [], 2))
    assert ok(server.recv(), 2)["openrpc"].startswith("1.")


def test_an_unknown_parameter_of_rpc_discover_is_named(server: E2EServer) -> None:
    server.send(request("rpc.discover", {"verbose": True}, 21))
    assert failed(server.recv(), -32602, 21)["data"]["param"] == "verbose"


def test_named_params_in_any_order(server: E2EServer) -> None:
    server.send_raw(b'{"jsonrpc": "2.0", "method": "file.read", '
                    b'"params": {"limit": 1, "path": "a.txt"}, "id": 3}\n')
    server.send_raw(b'{"id": 4, "params": {"path": "a.txt", "limit": 1}, '
                    b'"method": "file.read", "jsonrpc": "2.0"}\n')
    replies = server.recv_by_id(2)
    assert ok(replies[3][0], 3) == ok(replies[4][0], 4)
    assert ok(replies[3][0], 3)["content"] == "     1\talpha"


def test_notifications_get_no_response_but_run(server: E2EServer, ws: Path) -> None:
    server.send(request("update", [1, 2, 3, 4, 5]))
    server.send(request("foobar"))
    server.send(request("file.read", {"path": "missing.txt"}))
    server.send(request("file.write", {"path": "notified.txt", "content": "done\n"}))
    server.fence()
    wait_for(lambda: (ws / "notified.txt").exists())
    assert (ws / "notified.txt").read_text() == "done\n"


def test_non_existent_method(server: E2EServer) -> None:
    server.send(request("foobar", None, "1"))
    error = failed(server.recv(), -32601, "1")
    assert error["data"]["error"] == "method_not_found"
    assert "rpc.discover" in error["message"]


def test_invalid_json(server: E2EServer) -> None:
    server.send_raw(b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]\n')
    assert failed(server.recv(), -32700)["data"]["error"] == "parse_error"


def test_invalid_request_object(server: E2EServer) -> None:
    server.send_raw(b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}\n')
    assert failed(server.recv(), -32600)["data"]["error"] == "invalid_request"


def test_batch_with_invalid_json_is_one_parse_error(server: E2EServer) -> None:
    server.send_raw(b'[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
                    b'{"jsonrpc": "2.0", "method"]\n')
    reply = server.recv()
    assert isinstance(reply, dict)
    failed(reply, -32700)


def test_empty_batch_is_one_invalid_request(server: E2EServer) -> None:
    server.send_raw(b"[]\n")
    reply = server.recv()
    assert isinstance(reply, dict)
    failed(reply, -32600)


@pytest.mark.parametrize("batch", ["[1]", "[1,2,3]"])
def test_batch_of_non_objects_is_an_error_each(server: E2EServer, batch: str) -> None:
    server.send_raw(batch.encode() + b"\n")
    replies = server.recv()
    assert isinstance(replies, list) and len(replies) == len(json.loads(batch))
    for reply in replies:
        failed(reply, -32600)


def test_mixed_batch(server: E2EServer) -> None:
    server.send([
        request("file.read", {"path": "a.txt", "raw": True}, "1"),
        request("file.info", {"path": "a.txt"}),
        request("rpc.discover", {}, "2"),
        {"foo": "boo"},
        request("foo.get", {"name": "myself"}, "5"),
        request("file.info", {"path": "b.txt"}, "9"),
    ])
    replies = server.recv()
    assert isinstance(replies, list) and len(replies) == 5
    by_id: dict[object, list[dict]] = {}
    for reply in replies:
        by_id.setdefault(reply["id"], []).append(reply)
    assert sorted(by_id, key=str) == ["1", "2", "5", "9", None]
    assert ok(by_id["1"][0], "1")["content"] == "alpha\nbeta\n"
    assert "methods" in ok(by_id["2"][0], "2")
    failed(by_id[None][0], -32600)
    failed(by_id["5"][0], -32601, "5")
    assert ok(by_id["9"][0], "9")["size"] == len("bravo\n")
    server.fence()


def test_batch_of_notifications_gets_nothing(server: E2EServer) -> None:
    server.send([request("notify_sum", [1, 2, 4]), request("notify_hello", [7]),
                 request("file.info", {"path": "a.txt"})])
    server.fence()


# -- strict request objects (docs/protocol.md, Messages) -----------------------------------

@pytest.mark.parametrize("version", [None, "1.0", "2", 2.0, "2.0 ", ["2.0"]])
def test_jsonrpc_member_must_be_exactly_2_0(server: E2EServer, version: object) -> None:
    message = request("file.info", {"path": "a.txt"}, 11)
    if version is None:
        del message["jsonrpc"]
    else:
        message["jsonrpc"] = version
    server.send(message)
    reply = server.recv()
    assert reply["error"]["code"] == -32600 and reply["id"] in (11, None), reply


@pytest.mark.parametrize("rid", [True, False, {"a": 1}, [1]])
def test_id_of_the_wrong_type_is_invalid_request(server: E2EServer, rid: object) -> None:
    server.send(request("file.info", {"path": "a.txt"}, rid))
    failed(server.recv(), -32600)


@pytest.mark.parametrize("params", ['"a.txt"', "1", "true"])
def test_params_must_be_an_object_or_an_array(server: E2EServer, params: str) -> None:
    server.send_raw(b'{"jsonrpc": "2.0", "method": "file.info", "params": %s, "id": 12}\n'
                    % params.encode())
    failed(server.recv(), -32600, 12)


@pytest.mark.parametrize("rid", ["abc", "", 0, -7, 1.5, 2**70, None])
def test_every_valid_id_is_echoed_exactly(server: E2EServer, rid: object) -> None:
    server.send_raw(b'{"jsonrpc": "2.0", "method": "file.info", "params": {"path": "a.txt"},'
                    b' "id": %s}\n' % json.dumps(rid).encode())
    assert ok(server.recv(), rid)["type"] == "file"


def test_two_requests_in_flight_with_one_id_are_both_answered(server: E2EServer) -> None:
    server.send_raw(b"".join(json.dumps(request("file.read", {"path": p, "raw": True}, 7))
                             .encode() + b"\n" for p in ("a.txt", "b.txt")))
    replies = server.recv_by_id(2)[7]
    assert sorted(ok(r, 7)["content"] for r in replies) == ["alpha\nbeta\n", "bravo\n"]
    server.fence()


# -- framing -------------------------------------------------------------------------------

def test_content_length_request_gets_a_content_length_reply(server: E2EServer) -> None:
    server.send_lsp(request("file.read", {"path": "b.txt", "raw": True}, 21))
    reply, framing = server.recv_framed()
    assert framing == LSP
    assert ok(reply, 21)["content"] == "bravo\n"


def test_content_length_with_other_headers_and_a_batch(server: E2EServer) -> None:
    server.send_lsp([request("file.info", {"path": "a.txt"}, 22), request("nope", None, 23)],
                    headers="Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n")
    replies, framing = server.recv_framed()
    assert framing == LSP
    assert sorted(r["id"] for r in replies) == [22, 23]


def test_both_framings_mixed_on_one_stream(server: E2EServer) -> None:
    framed = []
    for rid, framing in enumerate([LINE, LSP, LSP, LINE, LSP, LINE], start=30):
        message = request("file.info", {"path": "a.txt"}, rid)
        framed.append((rid, framing))
        if framing == LSP:
            server.send_lsp(message)
        else:
            server.send(message)
    got = {}
    for _ in framed:
        reply, framing = server.recv_framed()
        got[reply["id"]] = framing
        ok(reply, reply["id"])
    assert got == dict(framed)


def test_parse_error_inside_a_content_length_frame(server: E2EServer) -> None:
    server.send_raw(b"Content-Length: 5\r\n\r\n{oops")
    reply, framing = server.recv_framed()
    assert framing == LSP
    failed(reply, -32700)


@pytest.mark.parametrize("framing", [LINE, LSP])
def test_oversized_message_is_refused_and_skipped(server: E2EServer, framing: str) -> None:
    big = request("file.write", {"path": "big.txt", "content": "x" * 5 * MAX_MESSAGE}, 40)
    after = request("file.read", {"path": "a.txt", "limit": 1}, 41)
    send = server.send_lsp if framing == LSP else server.send
    send(big)
    send(after)
    reply, got = server.recv_framed()
    assert got == framing
    error = failed(reply, -32600)
    assert str(MAX_MESSAGE) in error["message"]
    reply, got = server.recv_framed()
    assert got == framing
    assert ok(reply, 41)["content"] == "     1\talpha"


def test_oversized_line_sent_in_pieces_is_skipped(server: E2EServer) -> None:
    for _ in range(10):
        server.send_raw(b'{"jsonrpc": "2.0", "method": "file.info", "id": 42, "params": '
                        + b'{"path": "' + b"y" * MAX_MESSAGE)
    server.send_raw(b'"}}\n')
    failed(server.recv(), -32600)
    server.send(request("file.info", {"path": "a.txt"}, 43))
    ok(server.recv(), 43)


# -- concurrency ---------------------------------------------------------------------------

def test_fast_request_overtakes_a_slow_one(server: E2EServer, ws: Path) -> None:
    server.send(request("file.read", {"path": "slow.txt", "limit": 1}, "slow"))
    server.running(ws / "slow.txt")
    server.send(request("file.read", {"path": "b.txt"}, "fast"))
    first, second = server.recv(), server.recv(timeout=120)
    assert first["id"] == "fast" and ok(first, "fast")["content"] == "     1\tbravo"
    result = ok(second, "slow")
    assert result["total_lines"] == 501 and result["truncated"] is True


def test_64_requests_in_flight_each_answered_once(server: E2EServer) -> None:
    methods = [("file.read", {"path": "a.txt"}), ("file.info", {"path": "b.txt"}),
               ("file.read", {"path": "missing.txt"}), ("rpc.discover", {})]
    lines = [json.dumps(request(*methods[i % 4], rid=1000 + i)).encode() + b"\n"
             for i in range(64)]
    server.send_raw(b"".join(lines))
    replies = server.recv_by_id(64)
    assert sorted(replies) == list(range(1000, 1064))
    for rid, [reply] in replies.items():
        if rid % 4 == 2:
            assert error_of(reply) == (-32002, "file_not_found")
        else:
            ok(reply, rid)
    server.fence()


def test_discover_states_each_optional_parameter_default(server: E2EServer) -> None:
    server.send(request("rpc.discover", None, 22))
    methods = {m["name"]: {p["name"]: p["schema"].get("default") for p in m["params"]}
               for m in ok(server.recv(), 22)["methods"]}
    assert methods["file.read"]["offset"] == 1 and methods["file.read"]["raw"] is False
    assert methods["file.write"]["create_dirs"] is True
    assert methods["file.write"]["overwrite"] is True
    assert methods["file.list"]["max_results"] == 5000
    assert methods["file.search"]["max_results"] == 100
    assert methods["file.search"]["output_mode"] == "content"
    assert methods["file.read"]["limit"] is None  # no default: all lines
