"""rpc/dispatch/history_index.py: the log's lines found by offset, and what happens when
two paths or two contents share a key of the index."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.rpc.dispatch import history as history_module
from chorus_tools.rpc.dispatch import history_index
from chorus_tools.rpc.dispatch.history import History, version_id
from chorus_tools.rpc.dispatch.history_index import U64Map


def _item(path: str, data: bytes) -> dict[str, Any]:
    return {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            "mode": 0o644, "data": data, "spool": None, "after": "v"}


def _keep(history: History, path: str, data: bytes, method: str = "file.write") -> None:
    asyncio.run(history.keep(method, [_item(path, data)]))


def test_the_map_finds_every_key_through_its_growth() -> None:
    table = U64Map()
    keys = [(n * 0x9E3779B97F4A7C15) & ((1 << 64) - 1) for n in range(1, 5001)] + [0]
    for n, key in enumerate(keys):
        table.put(key, n)
    table.put(keys[7], -5)
    assert [table.get(k) for k in keys[:7]] == list(range(7)) and table.get(keys[7]) == -5
    assert table.get(keys[-1]) == len(keys) - 1 and table.get(12345) is None


def test_paths_sharing_a_key_keep_their_own_versions(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_index, "path_key", lambda path: 7)
    history = History(str(tmp_path), 1 << 20)
    for n in range(3):
        _keep(history, "a", b"a%d" % n)
        _keep(history, "b", b"b%d" % n)
    got = history.versions("a", 2)
    assert got["total"] == 3 and got["truncated"] is True
    assert [history.read(v["sha256"]) for v in got["versions"]] == [b"a2", b"a1"]
    assert [e.path for e in history.entries_of("b")] == ["b"] * 3
    assert history.versions("c", 20)["total"] == 0


def test_contents_sharing_a_key_never_read_as_each_other(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """The older loses its entry in the table (listed as no longer kept), never reads
    as the newer."""
    monkeypatch.setattr(history_index, "sha_key", lambda sha: 7)
    history = History(str(tmp_path), 1 << 20)
    _keep(history, "a", b"older")
    _keep(history, "a", b"newer")
    newer, older = history.versions("a", 20)["versions"]
    assert history.read(newer["sha256"]) == b"newer"
    assert history.read(older["sha256"]) is None and older["evicted"] is True


def test_an_id_that_is_no_change_line_is_no_version(tmp_path: Path) -> None:
    history = History(str(tmp_path), 1 << 20)
    _keep(history, "a", b"one")
    cp = history.checkpoint("here")
    _keep(history, "a", b"two")
    first, *_ = history.entries_since(-1)
    assert history.entry(first.id) == first and first.path == "a"
    assert history.entry(first.id + 1) is None and history.entry(cp) is None
    assert history.entry(1 << 40) is None
    (since,) = history.entries_since(cp)
    assert version_id(since.id) == history.versions("a", 1)["versions"][0]["version"]


def test_long_lines_and_a_long_log_are_read_back(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A path longer than the first read of a line; a log longer than a load's chunk."""
    long = "d/" + "x" * 3000
    first = History(str(tmp_path), 1 << 20)
    for n in range(40):
        _keep(first, long if n % 2 else f"f{n}", b"c%d" % n)
    first.checkpoint("end")
    first.close()
    monkeypatch.setattr(history_module, "_LOAD_CHUNK", 1000)
    again = History(str(tmp_path), 1 << 20)
    got = again.versions(long, 50)
    assert got["total"] == 20 and again.read(got["versions"][0]["sha256"]) == b"c39"
    assert list(again.checkpoints.values()) == ["end"]
    assert [e.path for e in again.entries_since(-1)][:3] == ["f0", long, "f2"]
