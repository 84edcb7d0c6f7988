"""file.move, dir.create and dir.delete over the real server: replies, errors
(docs/protocol.md, "Errors"), audit records (a move's with both paths), arrival order
across both paths of a move, and the race harness of test_security_race (directories
swapped for symlinks to the outside)."""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rpc_client import RpcServer, error_code, snapshot
from race_support import CANARY, EXPECTED_ERRORS, OUTSIDE_NAME, Flipper, build
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.dirs import create, delete
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.move import move
from chorus_tools.tools.mutate.write import write


def test_methods_answer_and_are_recorded_with_both_paths(tmp_path: Path) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    with RpcServer(ws, "--workers", "1", "--records", str(records)) as server:
        server.result("file.write", {"path": "a.txt", "content": "hi"})
        moved = server.result("file.move", {"source": "a.txt", "destination": "b/a.txt"})
        assert moved["success"] is True and isinstance(moved["version"], str)
        missing = server.error("file.move", {"source": "a.txt", "destination": "c.txt"})
        assert missing["code"] == -32002 and missing["data"]["error"] == "file_not_found"
        assert server.result("dir.create", {"path": "x/y"}) == {"success": True,
                                                                 "created": True}
        server.result("file.write", {"path": "x/y/f", "content": "12345"})
        nonempty = server.error("dir.delete", {"path": "x"})
        assert nonempty["data"]["error"] == "invalid_params"
        assert nonempty["data"]["param"] == "recursive"
        assert server.error("dir.delete", {"path": "."})["data"]["error"] == "invalid_params"
        assert server.result("dir.delete", {"path": "x", "recursive": True}) == {
            "success": True, "removed": 3}
        bad = server.error("file.move", {"source": "b", "destination": "b/c/d"})
        assert bad["data"]["error"] == "invalid_params"
        unknown = server.error("file.move", {"source": "b", "target": "c"})
        assert unknown["data"]["error"] == "invalid_params"
    lines = [json.loads(ln) for ln in (records / "records.jsonl").read_text().splitlines()]
    by_method = [(r["method"], r["outcome"]) for r in lines]
    assert by_method == [
        ("file.write", "ok"), ("file.move", "ok"), ("file.move", "file_not_found"),
        ("dir.create", "ok"), ("file.write", "ok"), ("dir.delete", "invalid_params"),
        ("dir.delete", "invalid_params"), ("dir.delete", "ok"),
        ("file.move", "invalid_params"), ("file.move", "invalid_params")]
    ok_move = lines[1]
    digest = hashlib.sha256(b"hi").hexdigest()
    assert (ok_move["path"], ok_move["destination"]) == ("a.txt", "b/a.txt")
    assert ok_move["sha256_before"] == ok_move["sha256_after"] == digest
    assert ok_move["bytes"] == 2
    assert lines[2]["destination"] == "c.txt" and lines[7]["bytes"] == 5
    assert "destination" not in lines[0] and "destination" not in lines[3]


def test_a_move_keeps_arrival_order_on_both_its_paths(tmp_path: Path) -> None:
    """Pipelined write a, move a -> b, read b, write a: the read sees what was moved and
    the second write of a starts after the move took the first away."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with RpcServer(ws, "--workers", "2") as server:
        for i in range(20):
            replies = server.call_many([
                ("file.write", {"path": f"a{i}.txt", "content": f"first {i}"}),
                ("file.move", {"source": f"a{i}.txt", "destination": f"b{i}.txt"}),
                ("file.read", {"path": f"b{i}.txt", "raw": True}),
                ("file.write", {"path": f"a{i}.txt", "content": "second",
                                "overwrite": False}),
            ])
            assert all("result" in r for r in replies), replies
            assert replies[2]["result"]["content"] == f"first {i}"
            assert (ws / f"a{i}.txt").read_text() == "second"


def test_regression_a_move_to_a_name_too_long_is_invalid_params_not_internal_error(
        tmp_path: Path) -> None:
    """Found by fuzzing: with history on, a move's destination of 300 characters was
    looked at for what it would replace, and that ENAMETOOLONG came back internal_error.
    It is invalid_params, as file.write of the same name says, and nothing moves."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("kept\n")
    long_name = "a" * 300
    with RpcServer(ws) as server:
        moved = server.call("file.move", {"source": "a.txt", "destination": long_name})
        written = server.call("file.write", {"path": long_name, "content": "x"})
        assert server.result("file.history", {"path": "a.txt"})["versions"] == []
    assert error_code(moved) == error_code(written) == "invalid_params", moved
    assert moved["error"]["data"]["path"] == long_name
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]
    assert (ws / "a.txt").read_text() == "kept\n"


def test_calls_beneath_a_moved_or_deleted_directory_keep_arrival_order(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with RpcServer(ws, "--workers", "2") as server:
        for i in range(10):
            replies = server.call_many([
                ("file.write", {"path": f"d{i}/sub/f.txt", "content": f"v{i}"}),
                ("file.move", {"source": f"d{i}", "destination": f"e{i}"}),
                ("file.read", {"path": f"e{i}/sub/f.txt", "raw": True}),
                ("dir.delete", {"path": f"e{i}", "recursive": True}),
                ("file.info", {"path": f"e{i}/sub/f.txt"}),
            ])
            assert replies[2]["result"]["content"] == f"v{i}", replies
            assert replies[3]["result"]["removed"] == 3, replies
            assert error_code(replies[4]) == "file_not_found", replies


def test_rpc_discover_describes_the_new_methods(tmp_path: Path) -> None:
    with RpcServer(tmp_path, "--workers", "1") as server:
        doc = server.result("rpc.discover")
    methods = {m["name"]: m for m in doc["methods"]}
    move_params = {p["name"]: p for p in methods["file.move"]["params"]}
    assert move_params["overwrite"]["schema"]["default"] is False
    assert move_params["create_dirs"]["schema"]["default"] is True
    assert {p["name"] for p in methods["dir.delete"]["params"]} == {"path", "recursive"}
    assert {p["name"] for p in methods["workspace.unwatch"]["params"]} == {"watch_id"}


def race_calls(n: int) -> list[tuple[str, dict]]:
    """Calls inside the flipping directories (never creating them: made while one is
    mid-swap, a new directory would take its place and end the flipping)."""
    calls = []
    for i in range(n):
        d = ("d_abs", "d_rel")[i % 2]
        calls += [
            ("dir.create", {"path": f"{d}/t{i}", "parents": False}),
            ("dir.create", {"path": f"{d}/t{i}/sub", "parents": False}),
            ("file.write", {"path": f"{d}/t{i}/sub/f.txt", "content": "T\n",
                            "create_dirs": False}),
            ("file.move", {"source": f"{d}/f.txt", "destination": f"{d}/m{i}.txt",
                           "create_dirs": False}),
            ("file.move", {"source": f"{d}/m{i}.txt", "destination": f"{d}/f.txt",
                           "create_dirs": False}),
            ("file.move", {"source": f"{d}/{OUTSIDE_NAME}", "destination": f"stolen{i}"}),
            ("file.move", {"source": f"{d}/f.txt", "destination": f"{d}/{OUTSIDE_NAME}",
                           "overwrite": True, "create_dirs": False}),
            ("dir.delete", {"path": f"{d}/t{i}", "recursive": True}),
        ]
    return calls


def check(replies: list[dict]) -> None:
    for reply in replies:
        text = json.dumps(reply)
        assert CANARY not in text, reply
        code = error_code(reply) or "ok"
        assert code == "ok" or code in EXPECTED_ERRORS | {"already_exists",
                                                          "not_a_directory"}, reply


def test_moves_and_recursive_deletes_never_touch_the_outside(tmp_path: Path) -> None:
    ws, out = build(tmp_path)
    world = snapshot(out)
    with RpcServer(ws, "--workers", "2") as server, \
            Flipper(ws, {"d_abs": str(out), "d_rel": "../outside"}) as flipper:
        replies = server.call_many(race_calls(40), timeout=120)
    check(replies)
    assert flipper.flips > 0 and snapshot(out) == world
    assert any("result" in r for r in replies)
    assert not any(CANARY in p.read_text() for p in ws.glob("stolen*"))


def test_moves_and_recursive_deletes_in_process(ctx: ToolContext, root: Path,
                                                outside: Path) -> None:
    """The same race against the tools, on openat2 and on the O_NOFOLLOW walk."""
    (outside / "f.txt").write_text(CANARY + "\n")
    (outside / OUTSIDE_NAME).write_text(CANARY + "\n")
    for name in ("d_abs", "d_rel"):
        (root / name).mkdir()
        (root / name / "f.txt").write_text("INSIDE\n")
    world = snapshot(outside)
    table = {"dir.create": create, "file.write": write, "file.move": move,
             "dir.delete": delete}

    def one(call: tuple[str, dict]) -> str:
        method, params = call
        try:
            if method == "file.write":
                table[method](ctx, params["path"], params["content"], create_dirs=False)
            else:
                table[method](ctx, **params)
        except ToolError as err:
            assert err.code in EXPECTED_ERRORS | {"already_exists", "not_a_directory"}, \
                err.to_data()
            return err.code
        return "ok"

    with Flipper(root, {"d_abs": str(outside), "d_rel": "../outside"}), \
            ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(one, race_calls(60)))
    assert "ok" in outcomes
    assert snapshot(outside) == world
    assert not any(CANARY in p.read_text() for p in root.glob("stolen*"))
