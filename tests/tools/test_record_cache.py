"""The symbol index's records on disk (--index-cache, tools/warm/record_cache.py): a record
comes back as it was put, under the key of the same bytes, grammar and code only; whatever
is wrong with a file in the directory (truncated, corrupt, another key's, a symlink, a
FIFO) is a miss, removed, never an error and never an answer; writers of the same key race
safely; the directory is bounded; read_local with a cache gives what a parse gives."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from chorus_tools.tools.code.codemap import read_summary
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm import record_cache, symbol_index
from chorus_tools.tools.warm.record_cache import (CacheError, RecordCache, decode, encode,
                                                  open_cache)
from chorus_tools.tools.warm.refs import Local, local
from chorus_tools.tools.warm.symbol_helpers import Helpers
from chorus_tools.tools.warm.symbol_index import read_local

SAMPLES = Path(__file__).parent.parent / "samples" / "code"
SOURCE = b"import os\n\nclass Shape:\n    def area(self):\n        return os.sep\n"


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def cache(cache_dir: Path) -> RecordCache:
    found = open_cache(str(cache_dir), 1 << 30, os.geteuid(), os.getegid())
    yield found
    os.close(found.fd)


def _record(tmp: Path) -> Local:
    ws = tmp / "parsed"
    ws.mkdir(exist_ok=True)
    (ws / "shapes.py").write_bytes(SOURCE)
    parsed = read_summary(ToolContext(ws=Workspace(str(ws))), "shapes.py")
    assert parsed is not None
    return local(parsed)


def _file(cache_dir: Path, key: bytes) -> Path:
    return cache_dir / key.hex()[:2] / key.hex()[2:]


def test_a_record_comes_back_as_it_was_put(cache: RecordCache, cache_dir: Path,
                                           tmp_path: Path) -> None:
    found = _record(tmp_path)
    key = cache.key(SOURCE, "python")
    assert cache.get(key) is None  # a miss before
    cache.put(key, found)
    assert cache.get(key) == found
    path = _file(cache_dir, key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


def test_the_key_is_the_bytes_the_grammar_and_the_code(cache: RecordCache) -> None:
    key = cache.key(SOURCE, "python")
    assert cache.key(SOURCE, "python") == key
    assert cache.key(SOURCE + b"\n", "python") != key
    assert cache.key(SOURCE, "markdown") != key
    other = RecordCache(cache.directory, cache.fd, cache.limit)
    other._format = b"another version of the parsing code"
    assert other.key(SOURCE, "python") != key


def test_a_record_of_another_format_or_key_is_never_used(cache: RecordCache,
                                                         cache_dir: Path,
                                                         tmp_path: Path) -> None:
    key = cache.key(SOURCE, "python")
    cache.put(key, _record(tmp_path))
    other = RecordCache(cache.directory, cache.fd, cache.limit)
    other._format = b"a newer parser"
    foreign = other.key(SOURCE, "python")
    assert other.get(foreign) is None  # filed under another name: not found
    # the old record copied under the new key's name (a rename, a restore from backup)
    target = _file(cache_dir, foreign)
    target.parent.mkdir(mode=0o700, exist_ok=True)
    target.write_bytes(_file(cache_dir, key).read_bytes())
    assert other.get(foreign) is None
    assert not target.exists()  # removed: the next server writes the right one


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "grown", "magic"])
def test_a_broken_record_is_a_miss_and_removed(cache: RecordCache, cache_dir: Path,
                                               tmp_path: Path, damage: str) -> None:
    key = cache.key(SOURCE, "python")
    found = _record(tmp_path)
    cache.put(key, found)
    path = _file(cache_dir, key)
    data = path.read_bytes()
    broken = {"truncated": data[:len(data) // 2], "empty": b"",
              "flipped": data[:-3] + bytes([data[-3] ^ 0x40]) + data[-2:],
              "grown": data + b"\0", "magic": b"x" + data[1:]}[damage]
    path.write_bytes(broken)
    assert cache.get(key) is None
    assert not path.exists()
    cache.put(key, found)  # and the next parse puts it back
    assert cache.get(key) == found


def test_a_symlink_or_fifo_planted_in_the_directory_is_never_followed(
        cache: RecordCache, cache_dir: Path, tmp_path: Path) -> None:
    found = _record(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    key = cache.key(SOURCE, "python")
    cache.put(key, found)
    real = _file(cache_dir, key)
    (outside / "record").write_bytes(real.read_bytes())  # a valid record, out of reach
    real.unlink()
    real.symlink_to(outside / "record")
    assert cache.get(key) is None  # the link is not followed, and removed
    assert not real.is_symlink() and (outside / "record").exists()
    # a fan-out directory that is a link to elsewhere: never read, never written through
    other = cache.key(SOURCE + b"#", "python")
    place = _file(cache_dir, other).parent
    if place.exists():
        for entry in place.iterdir():
            entry.unlink()
        place.rmdir()
    place.symlink_to(outside, target_is_directory=True)
    (outside / _file(cache_dir, other).name).write_bytes(b"planted")
    assert cache.get(other) is None
    cache.put(other, found)
    assert not place.is_symlink() and cache.get(other) == found
    assert sorted(p.name for p in outside.iterdir()) == sorted(
        ["record", _file(cache_dir, other).name])
    assert (outside / _file(cache_dir, other).name).read_bytes() == b"planted"
    # a FIFO in a record's place: not opened for reading (which would block), removed
    third = cache.key(SOURCE + b"##", "python")
    _file(cache_dir, third).parent.mkdir(mode=0o700, exist_ok=True)
    os.mkfifo(_file(cache_dir, third))
    assert cache.get(third) is None and not _file(cache_dir, third).exists()


def _writer(directory: str, key: bytes, found: Local, rounds: int) -> None:
    cache = open_cache(directory, 1 << 30, os.geteuid(), os.getegid())
    for _ in range(rounds):
        cache.put(key, found)
        got = cache.get(key)
        if got is not None and got != found:
            os._exit(3)  # a reader saw another record than the one put
    os._exit(0)


def test_concurrent_writers_of_one_key_leave_one_whole_record(cache: RecordCache,
                                                              cache_dir: Path,
                                                              tmp_path: Path) -> None:
    found = _record(tmp_path)
    key = cache.key(SOURCE, "python")
    fork = multiprocessing.get_context("fork")
    writers = [fork.Process(target=_writer, args=(str(cache_dir), key, found, 200))
               for _ in range(4)]
    for writer in writers:
        writer.start()
    misses = 0
    while any(w.is_alive() for w in writers):  # a reader meanwhile: whole or nothing
        got = cache.get(key)
        assert got is None or got == found
        misses += got is None
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert cache.get(key) == found
    assert [p.name for p in _file(cache_dir, key).parent.iterdir()] == [_file(cache_dir,
                                                                            key).name]


def test_a_name_holding_a_nul_is_not_kept(cache: RecordCache) -> None:
    found = Local(["a\0b"], b"\0" * 28, b"", True)
    assert encode(b"k" * 20, found) is None
    cache.put(cache.key(b"x", "markdown"), found)
    assert cache.get(cache.key(b"x", "markdown")) is None


def test_every_sample_survives_the_round_trip(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = ToolContext(ws=Workspace(str(ws)))
    for sample in SAMPLES.iterdir():
        (ws / sample.name).write_bytes(sample.read_bytes())
        parsed = read_summary(ctx, sample.name)
        assert parsed is not None
        found = local(parsed)
        data = encode(b"k" * 20, found)
        assert data is not None and decode(b"k" * 20, data) == found, sample.name
        assert decode(b"j" * 20, data) is None


def test_read_local_reads_the_record_instead_of_parsing(cache: RecordCache,
                                                        tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for sample in SAMPLES.iterdir():
        (ws / sample.name).write_bytes(sample.read_bytes())
    (ws / "notes.txt").write_text("no code\n")
    plain = ToolContext(ws=Workspace(str(ws)))
    cached = ToolContext(ws=Workspace(str(ws)), index_cache=cache)
    names = sorted(p.name for p in ws.iterdir())
    fresh = {name: read_local(plain, name) for name in names}
    assert {name: read_local(cached, name) for name in names} == fresh  # stored
    assert cache.stored == sum(found is not None for found in fresh.values()) > 5
    parsed = []
    monkeypatch.setattr("chorus_tools.tools.warm.symbol_index.parse_summary",
                        lambda *args: parsed.append(args))
    assert {name: read_local(cached, name) for name in names} == fresh  # read back
    assert parsed == []
    (ws / "shapes.py").write_text((ws / "shapes.py").read_text().replace("area", "zone"))
    monkeypatch.undo()
    changed = read_local(cached, "shapes.py")
    assert changed == read_local(plain, "shapes.py") and changed != fresh["shapes.py"]
    assert "zone" in changed.names and "area" not in changed.names


def test_the_directory_is_pruned_to_its_bound(cache_dir: Path, tmp_path: Path) -> None:
    small = open_cache(str(cache_dir), 40 * 4096, os.geteuid(), os.getegid())
    found = _record(tmp_path)
    keys = [small.key(SOURCE + str(i).encode(), "python") for i in range(60)]
    for age, key in enumerate(keys):
        small.put(key, found)
        os.utime(_file(cache_dir, key), (1_000_000 + age, 1_000_000 + age))
    stale = cache_dir / keys[0].hex()[:2] / ".leftover.123"
    stale.write_bytes(b"half a record")
    os.utime(stale, (1_000, 1_000))
    assert small.prune() > 0
    kept = [key for key in keys if _file(cache_dir, key).exists()]
    blocks = sum(_file(cache_dir, k).stat().st_blocks * 512 for k in kept)
    assert blocks <= 40 * 4096 * record_cache.KEEP_SHARE
    assert kept == keys[len(keys) - len(kept):]  # the least recently used went first
    assert not stale.exists()
    assert small.prune() == 0  # within the bound: nothing more
    os.close(small.fd)


def test_a_directory_others_may_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(CacheError, match="writable by it alone"):
        open_cache(str(shared), 1 << 30, os.geteuid(), os.getegid())


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a directory to --user needs root")
def test_as_root_it_is_handed_to_the_user_and_another_users_is_refused(
        tmp_path: Path) -> None:
    made = open_cache(str(tmp_path / "made"), 1 << 30, 12345, 12345)
    os.close(made.fd)
    assert (tmp_path / "made").stat().st_uid == 12345
    with pytest.raises(CacheError, match="must be owned by uid 0"):
        open_cache(str(tmp_path / "made"), 1 << 30, 0, 0)  # not root's to take back


def test_an_index_that_added_records_prunes_once_built(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The symbol index, a helper parsing beside it, files every record, then keeps the
    directory within its bound; an index that added none never scans it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(40):
        (ws / f"m{i:02d}.py").write_text(f"def f{i}(x):\n    return g(x) + {i}\n")
    monkeypatch.setattr(Helpers, "wanted", staticmethod(lambda: 1))
    monkeypatch.setattr(symbol_index, "BATCH", 4)
    limit = 16 * 4096
    cache = open_cache(str(tmp_path / "cache"), limit, os.geteuid(), os.getegid())
    scans = []
    prune = cache.prune
    monkeypatch.setattr(cache, "prune", lambda: scans.append(prune()))

    def build() -> symbol_index.SymbolIndex:
        index = symbol_index.SymbolIndex(ToolContext(ws=Workspace(str(ws)),
                                                     index_cache=cache), 1 << 30)
        for path in sorted(p.name for p in ws.iterdir()):
            index.changed(path, os.stat(ws / path))
        index.start()
        while index.step(1.0, lambda: False):
            pass
        index.close()
        return index

    first = build()
    assert len(first.files) == 40 and first._stored > 0  # the helper filed some
    assert len(scans) == 1 and scans[0] > 0
    kept = list((tmp_path / "cache").glob("*/*"))
    assert 0 < sum(p.stat().st_blocks * 512 for p in kept) <= limit * record_cache.KEEP_SHARE
    cache.stored = 0
    for path in kept:  # a second index with every record in place adds none
        path.unlink()
    (ws / "m00.py").write_text("def only(x):\n    return x\n")
    for name in sorted(p.name for p in ws.iterdir())[1:]:
        (ws / name).unlink()
    build()
    assert len(scans) == 2  # one record added: pruned again (nothing to remove)
    cache.stored = 0
    second = build()
    assert len(scans) == 2 and second.symbols == 1  # a hit: nothing added, no scan
    os.close(cache.fd)
