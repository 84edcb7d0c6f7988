"""Quotas over the real server (docs/protocol.md, Quotas): every way the workspace grows is
refused with quota_exceeded and its data, nothing written; shrinking always passes, also
over quota; outside writes counted as they happen (warm tree); a multi-file change that
would cross the quota half-way refused whole; concurrent writes never jointly past it."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path
from typing import Any

from benchmarks.quota_rows import outside_changes, walked_usage
from rpc_client import RpcServer, error_code, snapshot
from tar_support import tar_of

BASE = "head\n" + "x" * 895  # big.txt: 900 of the workspace's 1000 bytes


def _server(root: Path, *args: str) -> RpcServer:
    return RpcServer(root, "--workers", "2", "--index-memory", "0", "--quota-bytes", "1000",
                     *args)


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.txt").write_text(BASE)
    return root


def _refused(reply: dict[str, Any], quota: str = "bytes") -> dict[str, Any]:
    assert error_code(reply) == "quota_exceeded", reply
    assert reply["error"]["code"] == -32026
    data = reply["error"]["data"]
    assert data["quota"] == quota and data["needed"] > 0
    assert data["used"] + data["needed"] > data["limit"], data
    return data


def test_each_growing_method_is_refused_with_nothing_written(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "src.py").write_text("def f():\n    return 1\n")
    before = snapshot(root)
    with _server(root, "--history", str(tmp_path / "hist")) as srv:
        used = srv.result("workspace.status", {})["usage"]
        assert used == {"bytes": 900 + 22, "files": 2}
        data = _refused(srv.call("file.write", {"path": "new.txt", "content": "y" * 200}))
        assert (data["used"], data["limit"], data["needed"]) == (922, 1000, 200)
        _refused(srv.call("file.write", {"path": "d/e/new.txt", "content": "y" * 200}))
        _refused(srv.call("file.patch", {"path": "big.txt", "patches": [
            {"find": "head", "replace": "y" * 300}]}))
        _refused(srv.call("code.edit", {"path": "src.py", "symbol": "f", "action": "replace",
                                        "text": "def f():\n    return '" + "z" * 200
                                        + "'\n"}))
        assert snapshot(root) == before
        assert srv.result("workspace.status", {})["usage"] == used


def test_a_restore_past_the_quota_is_refused_and_a_rewind_that_ends_within_passes(
        tmp_path: Path) -> None:
    """Putting big.txt back alone would pass the quota: refused. The rewind that also
    shrinks small.txt ends within it, and passes: it frees room before it takes any, so
    the workspace is never over its quota on the way, whatever its paths' order."""
    root = _workspace(tmp_path)
    (root / "small.txt").write_text("s" * 50)
    with _server(root, "--history", str(tmp_path / "hist")) as srv:
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
        srv.result("file.write", {"path": "big.txt", "content": "b"})  # 900 -> 1 byte
        srv.result("file.write", {"path": "small.txt", "content": "s" * 950})
        versions = srv.result("file.history", {"path": "big.txt"})["versions"]
        before = snapshot(root)
        _refused(srv.call("file.restore", {"path": "big.txt",
                                           "version": versions[-1]["version"]}))
        assert snapshot(root) == before
        rewound = srv.result("workspace.rewind", {"checkpoint": cp, "force": True})
        assert rewound["restored"] == ["big.txt", "small.txt"]
        assert (root / "big.txt").read_text() == BASE
        assert (root / "small.txt").read_text() == "s" * 50
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 950, "files": 2}


def test_dir_create_and_files_quota(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with _server(root, "--quota-files", "3") as srv:
        assert srv.result("dir.create", {"path": "a"})["created"]
        assert srv.result("file.write", {"path": "a/f.txt", "content": "1"})["created"]
        _refused(srv.call("dir.create", {"path": "b"}), "files")
        _refused(srv.call("file.write", {"path": "g.txt", "content": "1"}), "files")
        assert sorted(os.listdir(root)) == ["a", "big.txt"]
        # a move to a new name adds nothing; over an existing file it frees one
        assert srv.result("file.move", {"source": "a/f.txt", "destination": "moved.txt"})
        assert srv.result("file.move", {"source": "moved.txt", "destination": "big.txt",
                                        "overwrite": True})
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 1, "files": 2}
        assert srv.result("file.write", {"path": "g.txt", "content": "1"})["created"]


def test_shrinking_passes_even_over_quota(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "over.txt").write_text("cut\n" + "o" * 496)  # 1400 of 1000 before the server starts
    with _server(root) as srv:
        assert srv.result("workspace.status", {})["usage"]["bytes"] == 1400
        _refused(srv.call("file.write", {"path": "n.txt", "content": "1"}))
        srv.result("file.patch", {"path": "over.txt", "patches": [
            {"find": "cut\n" + "o" * 96, "replace": ""}]})
        srv.result("file.write", {"path": "big.txt", "content": "x" * 800})
        srv.result("file.delete", {"path": "over.txt"})
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 800, "files": 1}
        assert srv.result("file.write", {"path": "n.txt", "content": "y" * 200})["created"]
        assert srv.result("workspace.status", {})["quota"] == {"bytes": 1000, "files": None}


def test_apply_patch_crossing_the_quota_half_way_is_refused_whole(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    before = snapshot(root)
    with _server(root, "--tools", "native,codex") as srv:
        reply = srv.call("apply_patch", {"input": "\n".join([
            "*** Begin Patch", "*** Add File: a.txt", "+" + "a" * 40,
            "*** Add File: b.txt", "+" + "b" * 40, "*** Add File: c.txt", "+" + "c" * 40,
            "*** End Patch"])})
        assert "error" in reply and "quota" in str(reply["error"]), reply
        assert snapshot(root) == before
        assert srv.result("workspace.status", {})["usage"]["bytes"] == 900


def test_tool_set_writers_are_refused(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    before = snapshot(root)
    with _server(root, "--tools", "gemini") as srv:
        reply = srv.call("write_file", {"file_path": "w.txt", "content": "w" * 200})
        assert "error" in reply and "quota" in str(reply["error"]), reply
    with _server(root, "--tools", "anthropic") as srv:
        reply = srv.call("str_replace_based_edit_tool", {
            "command": "create", "path": "w.txt", "file_text": "w" * 200})
        assert "error" in reply and "quota" in str(reply["error"]), reply
    assert snapshot(root) == before


def test_concurrent_writes_cannot_jointly_exceed(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with RpcServer(root, "--workers", "4", "--index-memory", "0",
                   "--quota-bytes", "1000") as srv:
        replies = srv.call_many([("file.write", {"path": f"c{i}.txt", "content": "c" * 30})
                                 for i in range(10)])
    landed = [r for r in replies if "result" in r]
    assert len(landed) == 3 and all(error_code(r) == "quota_exceeded"
                                    for r in replies if "error" in r)
    assert sum(p.stat().st_size for p in root.iterdir()) == 990


def test_outside_changes_count_as_they_happen(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with RpcServer(root, "--workers", "2", "--quota-bytes", "1000") as srv:
        _until(srv, lambda u: u == {"bytes": 900, "files": 1})
        (root / "outside.txt").write_text("o" * 200)  # past the quota, from outside
        _until(srv, lambda u: u == {"bytes": 1100, "files": 2})
        _refused(srv.call("file.write", {"path": "n.txt", "content": "1"}))
        (root / "big.txt").unlink()
        _until(srv, lambda u: u == {"bytes": 200, "files": 1})
        assert srv.result("file.write", {"path": "n.txt", "content": "y" * 700})["created"]


def _until(srv: RpcServer, wanted: Any, patience: float = 20.0) -> None:
    """Poll workspace.status until its usage is as wanted (bounded: no timing assert)."""
    end = time.monotonic() + patience
    while True:
        usage = srv.result("workspace.status", {})["usage"]
        if wanted(usage) or time.monotonic() > end:
            break
        time.sleep(0.05)
    assert wanted(usage), usage


def test_upload_parts_count_as_they_arrive(tmp_path: Path) -> None:
    import base64

    root = _workspace(tmp_path)
    with _server(root) as srv:
        upload = srv.result("file.upload_begin", {"path": "up.bin"})["upload_id"]
        part = base64.b64encode(b"u" * 60).decode()
        srv.result("file.upload_part", {"upload_id": upload, "offset": 0, "data": part})
        assert srv.result("workspace.status", {})["usage"]["bytes"] == 960
        data = _refused(srv.call("file.upload_part", {"upload_id": upload, "offset": 60,
                                                      "data": part}))
        assert (data["used"], data["needed"]) == (960, 60)
        _refused(srv.call("file.write_bytes", {"path": "w.bin", "data": part}))
        assert srv.result("file.upload_commit", {"upload_id": upload})["created"]
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 960, "files": 2}
        second = srv.result("file.upload_begin", {"path": "up2.bin"})["upload_id"]
        small = base64.b64encode(b"s" * 20).decode()
        srv.result("file.upload_part", {"upload_id": second, "offset": 0, "data": small})
        assert srv.result("workspace.status", {})["usage"]["bytes"] == 980
        srv.result("file.upload_abort", {"upload_id": second})
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 960, "files": 2}
    assert sorted(os.listdir(root)) == ["big.txt", "up.bin"]


def test_an_upload_whose_size_is_past_the_quota_is_refused_at_begin(tmp_path: Path) -> None:
    """A declared size the quota cannot hold was accepted, and refused only once the
    parts that filled the room had been sent (a GiB later, for a large upload)."""
    root = _workspace(tmp_path)
    with _server(root) as srv:
        data = _refused(srv.call("file.upload_begin", {"path": "up.bin", "size": 101}))
        assert (data["used"], data["needed"]) == (900, 101)
        fits = srv.result("file.upload_begin", {"path": "up.bin", "size": 100})["upload_id"]
        srv.result("file.upload_abort", {"upload_id": fits})
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 900, "files": 1}
    assert sorted(os.listdir(root)) == ["big.txt"]


def _archive(*files: tuple[str, bytes]) -> str:
    return base64.b64encode(tar_of(files, gz=True)).decode()


def test_archive_import_past_the_quota_is_refused_whole(tmp_path: Path) -> None:
    """The archive's own bytes count while it waits in its spool (an upload's parts),
    and leave the account once its entries are read; what it extracts counts as it
    lands, and a file past the quota puts back all."""
    root = _workspace(tmp_path)
    with RpcServer(root, "--workers", "2", "--index-memory", "0", "--quota-bytes", "1400",
                   "--quota-files", "6") as srv:
        def imported(data: str) -> dict[str, Any]:
            upload = srv.result("archive.import_begin", {"path": "dest"})["upload_id"]
            srv.result("file.upload_part", {"upload_id": upload, "offset": 0, "data": data})
            return srv.call("archive.import_commit", {"upload_id": upload})

        before = snapshot(root)
        _refused(imported(_archive(("a.txt", b"a" * 200), ("b/c.txt", b"c" * 200),
                                   ("d.txt", b"d" * 200))))  # 900 + 600 > 1400
        _refused(imported(_archive(*((f"n{i}", b"") for i in range(8)))), "files")
        assert snapshot(root) == before
        got = imported(_archive(("a.txt", b"a" * 150), ("b/c.txt", b"c" * 150)))
        assert "result" in got and got["result"]["created"] == 2, got
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 1200, "files": 5}


def test_metrics_report_the_usage_account_and_the_quota(tmp_path: Path) -> None:
    """chorus_workspace_bytes/files and chorus_quota_bytes/files are the account's figures
    (0 for a quota not set), the same as workspace.status says."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    with RpcServer(ws, "--quota-bytes", "1M") as server:
        status = server.result("workspace.status", {})
        figures = server.result("rpc.metrics", {})
    assert status["usage"] == {"bytes": 6, "files": 1}
    assert figures["chorus_workspace_bytes"] == 6 and figures["chorus_workspace_files"] == 1
    assert figures["chorus_quota_bytes"] == 1 << 20 and figures["chorus_quota_files"] == 0


def test_a_rewind_past_the_quota_is_refused_before_its_first_file(tmp_path: Path) -> None:
    """a1.txt and a2.txt would fit, a3.txt would not: the rewind is refused whole, its
    need the whole growth, before it touches a file (so none is written again with a new
    version: the next rewind still knows all three as this server left them, and the
    next start sees the history as it was, no rewind in it)."""
    root, hist = tmp_path / "ws", tmp_path / "hist"
    root.mkdir()
    sizes = {"a1.txt": 50, "a2.txt": 50, "a3.txt": 800}
    for name, size in sizes.items():
        (root / name).write_text(name[1] * size)
    with RpcServer(root, "--workers", "2", "--index-memory", "0",
                   "--history", str(hist)) as srv:
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
        for name in sizes:
            srv.result("file.write", {"path": name, "content": "s"})
    before = snapshot(root)
    with _server(root, "--history", str(hist), "--quota-bytes", "500") as srv:
        data = _refused(srv.call("workspace.rewind", {"checkpoint": cp}))
        assert (data["used"], data["limit"], data["needed"]) == (3, 500, 49 + 49 + 799)
        assert snapshot(root) == before
        assert srv.result("workspace.status", {})["usage"] == {"bytes": 3, "files": 3}
    assert not (hist / "rewind.json").exists()
    with _server(root, "--history", str(hist)) as srv:
        for name in sizes:
            versions = srv.result("file.history", {"path": name})["versions"]
            assert versions[0]["method"] == "file.write", versions
        assert srv.result("workspace.rewind", {"checkpoint": cp, "dry_run": True})[
            "restored"] == list(sizes)


def test_usage_after_many_outside_changes_equals_a_fresh_walk(tmp_path: Path) -> None:
    """1,000 creates, resizes and deletes made beside the server (the benchmark's 10,000 at
    a test's size), with the warm tree on: workspace.status's usage comes to equal a walk
    of the disk, bytes and files (polled, bounded: no timing is asserted)."""
    root = tmp_path / "ws"
    root.mkdir()
    with RpcServer(root, "--workers", "2", "--quota-bytes", "10M") as srv:
        _until(srv, lambda u: u == {"bytes": 0, "files": 0})
        outside_changes(root, 1000, 10)
        walked = walked_usage(root)
        assert walked["files"] > 500 and walked["bytes"] > 50_000  # the changes happened
        _until(srv, lambda u: u == walked)
