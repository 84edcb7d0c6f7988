"""rpc/dispatch/read_store.py: the claude set's reads on disk, bounded, shared safely by
concurrent server processes."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from chorus_tools.rpc.dispatch import read_store
from chorus_tools.rpc.dispatch.read_store import ReadStore, state_root, store_dir


def test_remembers_replaces_and_forgets(tmp_path: Path) -> None:
    store = ReadStore(str(tmp_path / "s"))
    assert store.get("a.txt") is None
    store["a.txt"] = "v1"
    store["a.txt"] = "v2"
    assert ReadStore(str(tmp_path / "s")).get("a.txt") == "v2"  # another process's view
    assert store.pop("a.txt", None) == "v2"
    assert store.get("a.txt") is None and store.pop("a.txt", None) is None


def test_odd_paths_round_trip(tmp_path: Path) -> None:
    store = ReadStore(str(tmp_path / "s"))
    keys = ["dir/with\nnewline.txt", "caf\u00e9/\udcff.bin", " spaced .txt"]
    for n, key in enumerate(keys):
        store[key] = f"v{n}"
    assert [store.get(key) for key in keys] == ["v0", "v1", "v2"]


def test_an_entry_for_another_path_is_not_taken(tmp_path: Path) -> None:
    """An entry is checked against its path: a digest collision or a stray file never
    lends one file's version to another."""
    store = ReadStore(str(tmp_path / "s"))
    store["a.txt"] = "v1"
    entry = next(p for p in (tmp_path / "s").iterdir())
    entry.unlink()
    entry.symlink_to("v1\nb.txt")
    assert store.get("a.txt") is None
    entry.unlink()
    entry.write_text("v1\na.txt")  # a regular file is no entry either
    assert store.get("a.txt") is None


def test_bounded_forgetting_the_least_recently_written(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_store, "MAX_ENTRIES", 8)
    monkeypatch.setattr(read_store, "_PRUNE_EVERY", 4)
    store = ReadStore(str(tmp_path / "s"))
    for i in range(40):
        store[f"f{i}"] = f"v{i}"
        os.utime(tmp_path / "s" / read_store._entry_name(f"f{i}"), (i, i),
                 follow_symlinks=False)
    assert len(list((tmp_path / "s").iterdir())) <= 8
    assert store.get("f39") == "v39" and store.get("f0") is None


def test_a_path_too_long_to_hold_is_forgotten_not_kept_stale(tmp_path: Path) -> None:
    store = ReadStore(str(tmp_path / "s"))
    key = "d/" * 2100 + "f.txt"
    store[key] = "v1"
    assert store.get(key) is None


def test_a_killed_writer_s_temporary_file_is_cleared(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    left = tmp_path / "s" / ".tmp-999-0"
    left.symlink_to("v1\nhalf")
    os.utime(left, (0, 0), follow_symlinks=False)
    ReadStore(str(tmp_path / "s"))
    assert not left.exists()


def _hammer(directory: str, worker: int) -> None:
    store = ReadStore(directory)
    for i in range(200):
        store["shared.txt"] = f"w{worker}-{i}"
        store[f"own-{worker}-{i % 5}"] = str(i)
        version = store.get("shared.txt")
        assert version is not None and version.startswith("w")


def test_concurrent_processes_never_see_a_torn_entry(tmp_path: Path) -> None:
    directory = str(tmp_path / "s")
    ReadStore(directory)
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_hammer, args=(directory, n)) for n in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0] * 4
    store = ReadStore(directory)
    assert store.get("shared.txt") in {f"w{n}-199" for n in range(4)}
    assert not [p for p in os.listdir(directory) if p.startswith(".tmp-")]


def test_where_the_state_lives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_root(None) == str(tmp_path / "xdg" / "chorus-tools")
    monkeypatch.delenv("XDG_STATE_HOME")
    assert state_root(None) == os.path.expanduser("~/.local/state/chorus-tools")
    assert state_root("rel") == os.path.abspath("rel")
    (tmp_path / "ws").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "ws")
    assert store_dir("/r", str(tmp_path / "ws")) == store_dir("/r", str(tmp_path / "alias"))
    assert store_dir("/r", str(tmp_path / "ws")) != store_dir("/r", str(tmp_path))


def test_a_workspace_unserved_for_long_is_forgotten(tmp_path: Path) -> None:
    old, recent = (store_dir(str(tmp_path), str(tmp_path / n)) for n in ("old", "recent"))
    for directory in (old, recent):
        ReadStore(directory)["a.txt"] = "v1"
    long_ago = time.time() - (read_store.STALE_DAYS + 1) * 86400
    os.utime(old, (long_ago, long_ago))
    os.utime(recent, (long_ago + 2 * 86400, long_ago + 2 * 86400))
    (tmp_path / "history").mkdir()  # beside other state, which is never touched
    os.utime(tmp_path / "history", (long_ago, long_ago))
    ReadStore(store_dir(str(tmp_path), str(tmp_path / "now")))
    assert not os.path.exists(old)
    assert ReadStore(recent).get("a.txt") == "v1"
    assert (tmp_path / "history").is_dir()
