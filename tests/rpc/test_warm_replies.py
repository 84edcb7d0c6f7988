"""rpc/process/warm_replies.py against a stand-in warm process on a real Unix socket,
speaking what tools/warm/service.py speaks (multiprocessing's Connection frames): a kept
whole reply is answered again only while the warm process gives the stamp it was made
with; a changed stamp, a warm process gone, silent or closing every connection is a miss
(the job then runs in a worker)."""

from __future__ import annotations

import asyncio
import threading
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import Any, Iterator

import pytest

from chorus_tools.rpc.process import warm_replies
from chorus_tools.rpc.process.warm_replies import WarmReplies
from chorus_tools.tools.encoded import Encoded, encoded
from chorus_tools.tools.task import Task

SYMBOLS = "chorus_tools.tools.code.find:find_symbols"
ROOM = 16 << 20  # the default --index-memory's share for kept replies


class FakeWarm:
    """Answers each `stamp` question with `self.stamp`, counting them; `close_all`: closes
    every connection at once, as the server's socket does before the warm process runs."""

    def __init__(self, path: Path) -> None:
        self.stamp: Any = (1, 1, 7)
        self.asked = 0
        self.close_all = False
        self._listener = Listener(str(path), family="AF_UNIX")
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        with conn:
            while True:
                try:
                    op, _ = conn.recv()
                except (EOFError, OSError):
                    return
                if self.close_all:
                    return
                assert op == "stamp"
                self.asked += 1
                conn.send(self.stamp)

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def warm(tmp_path: Path) -> Iterator[FakeWarm]:
    fake = FakeWarm(tmp_path / "socket")
    yield fake
    fake.close()


def task(query: str = "Engine", **more: Any) -> Task:
    return Task(SYMBOLS, {"query": query, **more}, {})


def reply(stamp: Any = (1, 1, 7), symbols: int = 1) -> Encoded:
    made = encoded({"symbols": [{"name": "Engine"}] * symbols, "total": symbols}, stamp)
    assert made is not None
    return made


def test_a_kept_reply_answers_while_the_stamp_holds(warm: FakeWarm, tmp_path: Path) -> None:
    async def go() -> None:
        replies = WarmReplies(str(tmp_path / "socket"), ROOM)
        assert await replies.get(task()) is None and warm.asked == 0  # nothing kept: not asked
        made = reply()
        replies.put(task(), made)
        assert await replies.get(task()) is made
        assert await replies.get(task()) is made  # the connection kept for the next one
        assert warm.asked == 2 and len(replies.fds()) == 1
        # another question, the same one with its arguments in another order
        assert await replies.get(task("Other")) is None
        assert await replies.get(Task(SYMBOLS, {"match": "exact", "query": "Engine"}, {})) \
            is None
        replies.put(Task(SYMBOLS, {"match": "exact", "query": "Engine"}, {}), made)
        assert await replies.get(Task(SYMBOLS, {"query": "Engine", "match": "exact"}, {})) \
            is made
        replies.close()
    asyncio.run(go())


def test_a_changed_tree_misses_and_forgets_the_reply(warm: FakeWarm, tmp_path: Path) -> None:
    async def go() -> None:
        replies = WarmReplies(str(tmp_path / "socket"), ROOM)
        replies.put(task(), reply((1, 1, 7)))
        warm.stamp = (1, 1, 8)  # a change applied since
        assert await replies.get(task()) is None
        warm.stamp = (1, 1, 7)  # never comes back, but were it to: the reply is gone
        assert await replies.get(task()) is None
        assert warm.asked == 1
        warm.stamp = None  # not current (the barrier failed): a miss, the reply stays
        replies.put(task(), reply((1, 1, 7)))
        assert await replies.get(task()) is None
        warm.stamp = (1, 1, 7)
        assert await replies.get(task()) is not None
        replies.close()
    asyncio.run(go())


def test_what_is_never_kept(warm: FakeWarm, tmp_path: Path) -> None:
    async def go() -> None:
        replies = WarmReplies(str(tmp_path / "socket"), ROOM)
        replies.put(task("NoStamp"), reply(None))  # not made whole by the warm process
        assert await replies.get(task("NoStamp")) is None
        replies.put(Task(SYMBOLS, {"query": b"bytes"}, {}), reply())  # no JSON key
        assert await replies.get(Task(SYMBOLS, {"query": b"bytes"}, {})) is None
        replies.put(task(), reply())
        changing = task()._replace(mutating=True)  # a change always runs
        assert await replies.get(changing) is None
        assert warm.asked == 0
        replies.close()
    asyncio.run(go())


def test_the_oldest_go_past_the_limits(warm: FakeWarm, tmp_path: Path) -> None:
    async def go() -> None:
        replies = WarmReplies(str(tmp_path / "socket"), ROOM)
        for i in range(warm_replies.ENTRIES + 1):
            replies.put(task(f"N{i}"), reply())
        assert await replies.get(task("N0")) is None
        assert await replies.get(task(f"N{warm_replies.ENTRIES}")) is not None
        replies.close()
        replies = WarmReplies(str(tmp_path / "socket"), 4000)
        big = reply(symbols=300)
        assert len(big.json) > 4000
        replies.put(task("Big"), big)  # larger than the whole room: not kept
        assert await replies.get(task("Big")) is None
        replies.put(task("A"), reply(symbols=150))
        replies.put(task("B"), reply(symbols=150))  # the two pass the room: A goes
        assert await replies.get(task("A")) is None
        assert await replies.get(task("B")) is not None
        replies.close()
    asyncio.run(go())


def test_no_warm_process_or_one_that_closes_is_a_miss(warm: FakeWarm,
                                                      tmp_path: Path) -> None:
    async def go() -> None:
        nowhere = WarmReplies(str(tmp_path / "none"), ROOM)
        nowhere.put(task(), reply())
        assert await nowhere.get(task()) is None
        replies = WarmReplies(str(tmp_path / "socket"), ROOM)
        replies.put(task(), reply())
        assert await replies.get(task()) is not None
        warm.close_all = True  # the kept connection now ends at the next question
        assert await replies.get(task()) is None
        assert await replies.get(task()) is None  # a new connection, closed as well
        assert replies.fds() == ()
        warm.close_all = False
        assert await replies.get(task()) is not None  # and the next one works again
        nowhere.close()
        replies.close()
    asyncio.run(go())


def test_a_silent_warm_process_is_a_miss(warm: FakeWarm, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A question not answered in time drops its connection: a late answer is never read
    as the next question's."""
    monkeypatch.setattr(warm_replies, "PATIENCE", 0.2)
    silent = Listener(str(tmp_path / "silent"), family="AF_UNIX")  # accepts, never answers

    async def go() -> None:
        replies = WarmReplies(str(tmp_path / "silent"), ROOM)
        replies.put(task(), reply())
        assert await replies.get(task()) is None
        assert replies.fds() == ()  # the connection was dropped
        replies.close()
    held: list[Connection] = []
    threading.Thread(target=lambda: held.append(silent.accept()), daemon=True).start()
    asyncio.run(go())
    silent.close()
