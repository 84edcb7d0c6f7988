"""rpc/dispatch/history.py: the log, the packs and the byte budget, in process."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import Any

from chorus_tools.rpc.dispatch.history import History


def _item(path: str, data: bytes) -> dict[str, Any]:
    return {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            "mode": 0o644, "data": data, "spool": None, "after": "v"}


def test_two_servers_sharing_a_history_never_reuse_an_id(tmp_path: Path) -> None:
    one, two = History(str(tmp_path), 1 << 20), History(str(tmp_path), 1 << 20)
    for n in range(5):
        asyncio.run(one.keep("file.write", [_item("a", b"one %d" % n)]))
        asyncio.run(two.keep("file.write", [_item("a", b"two %d" % n)]))
    one.load()
    versions = one.versions("a", 20)["versions"]
    assert len({v["version"] for v in versions}) == 10
    assert [one.read(v["sha256"]) for v in versions][:2] == [b"two 4", b"one 4"]


def test_the_budget_drops_the_oldest_pack_first(tmp_path: Path) -> None:
    history = History(str(tmp_path), 10_000)
    for n in range(6):
        asyncio.run(history.keep("file.write", [_item("a", bytes([n]) * 3000)]))
    got = history.versions("a", 20)
    assert [v["evicted"] for v in got["versions"]] == [False] * 3 + [True] * 3
    assert history.stored() <= 10_000 and got["evicted"] == 3


def test_content_larger_than_the_budget_is_listed_as_evicted(tmp_path: Path) -> None:
    history = History(str(tmp_path), 1000)
    asyncio.run(history.keep("file.write", [_item("a", b"x" * 2000)]))
    assert history.versions("a", 20)["versions"][0]["evicted"] is True
    assert history.stored() == 0


def test_the_log_is_read_back_by_a_new_server(tmp_path: Path) -> None:
    first = History(str(tmp_path), 1 << 20)
    asyncio.run(first.keep("file.delete", [_item("d/x", b"gone")]))
    cp = first.checkpoint("before")
    first.close()
    again = History(str(tmp_path), 1 << 20)
    again.load()
    (version,) = again.versions("d/x", 20)["versions"]
    assert version["method"] == "file.delete" and again.read(version["sha256"]) == b"gone"
    assert again.checkpoints == {cp: "before"}


def test_spooled_content_is_copied_in_and_its_spool_blocks_freed(tmp_path: Path) -> None:
    history = History(str(tmp_path / "h"), 1 << 30)
    (spool,) = history.spools(1)
    data = os.urandom(3 << 20)
    os.pwrite(spool, b"\0" * 100 + data, 0)
    item = {**_item("big", data), "data": None, "spool": (0, 100)}
    asyncio.run(history.keep("file.write", [item]))
    assert history.read(item["sha256"]) == data
    assert os.fstat(spool).st_blocks * 512 < 1 << 20
    assert os.listdir(tmp_path / "h" / "spool") == []


def test_a_history_in_memory_keeps_reads_evicts_and_journals_as_on_disk() -> None:
    """For a workspace that holds every directory (`--workspace /`): memfds, no path."""
    from chorus_tools.rpc.dispatch import rewind
    history = History(None, 10_000)
    (spool,) = history.spools(1)
    for n in range(6):
        asyncio.run(history.keep("file.write", [_item("a", bytes([n]) * 3000)]))
    got = history.versions("a", 20)
    assert [v["evicted"] for v in got["versions"]] == [False] * 3 + [True] * 3
    assert history.read(got["versions"][0]["sha256"]) == bytes([5]) * 3000
    assert history.stored() <= 10_000
    rewind.write_journal(history, "cp-0", [{"path": "a", "sha256": None, "mode": 0,
                                             "expected": None}], False)
    assert rewind.read_journal(history)["items"][0]["path"] == "a"  # type: ignore[index]
    rewind.clear_journal(history)
    assert rewind.read_journal(history) is None
    os.pwrite(spool, b"x", 0)
    history.close()


def test_a_path_that_is_not_utf8_is_logged_and_read_back(tmp_path: Path) -> None:
    """JSON holds no lone surrogate: such a path (a file name's undecodable bytes) is
    logged by its bytes."""
    name = "caf\udce9.txt"
    first = History(str(tmp_path), 1 << 20)
    asyncio.run(first.keep("file.move", [{**_item(name, b"old"), "moved_to": name + "2"}]))
    first.close()
    again = History(str(tmp_path), 1 << 20)
    (version,) = again.versions(name, 20)["versions"]
    assert version["moved_to"] == name + "2" and again.read(version["sha256"]) == b"old"
