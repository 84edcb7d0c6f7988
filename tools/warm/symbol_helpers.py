"""Parsing for the symbol index on the machine's other CPUs: a parse is CPU-bound
(tree-sitter reads about 10 MB/s), so while many files wait the warm process hands batches
to helper processes forked from it (its Landlock domain, its `--user`, its nice level) and
applies their summaries as they come back. A helper only reads files and answers; what
changed meanwhile is the index's to judge (tools/warm/symbol_index.py drops an answer for
a file reported changed since it was handed out). A helper ends with the warm process (its
pipe closes) or when the index stops it; one that dies has its batch parsed again.
"""

from __future__ import annotations

import os
import signal
from multiprocessing import Pipe
from multiprocessing.connection import Connection, wait
from typing import Any

from chorus_tools.tools.context import ToolContext

BATCH = 16  # files handed to a helper at once

Answer = tuple[str, Any]  # (path, read_local's result, or None: parse it again here)
SLOW = "slow"  # the tag of a file whose parse ran past its bound: it stays unknown


class Helper:
    def __init__(self, ctx: ToolContext) -> None:
        ours, theirs = Pipe()
        self.pid = os.fork()  # not multiprocessing's: the warm process is a daemon
        if self.pid == 0:
            ours.close()
            _serve(ctx, theirs)
        theirs.close()
        self.conn = ours
        self.batch: list[str] = []

    def close(self) -> None:
        self.conn.close()
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


class Helpers:
    def __init__(self, ctx: ToolContext, count: int) -> None:
        self._ctx = ctx
        self._count = count
        self._helpers: list[Helper] = []

    @staticmethod
    def wanted() -> int:
        """Helpers worth starting: one per CPU beside the warm process's own."""
        return max(0, (os.cpu_count() or 1) - 1)

    @property
    def count(self) -> int:
        return self._count

    def running(self) -> bool:
        """Whether the helpers are started (the index stops them when its queue is done)."""
        return bool(self._helpers)

    def idle(self) -> list[Helper]:
        while len(self._helpers) < self._count:
            self._helpers.append(Helper(self._ctx))
        return [h for h in self._helpers if not h.batch]

    @staticmethod
    def give(helper: Helper, paths: list[str]) -> None:
        helper.batch = paths
        try:
            helper.conn.send(paths)
        except OSError:  # it died since it was idle: collect() gives the batch back
            pass

    def collect(self) -> list[Answer]:
        """The answers of every helper that has finished its batch (none waits); a dead
        helper's files come back with None, to be parsed again."""
        answers: list[Answer] = []
        for helper in [h for h in self._helpers if h.batch]:
            try:
                if not helper.conn.poll(0):
                    continue
                answers += helper.conn.recv()
            except (EOFError, OSError):
                answers += [(path, None) for path in helper.batch]
                helper.close()
                self._helpers.remove(helper)
            helper.batch = []
        return answers

    def wait(self, seconds: float) -> None:
        """Until a helper answers, for at most `seconds`."""
        busy = [h.conn for h in self._helpers if h.batch]
        if busy:
            wait(busy, seconds)

    def stop(self) -> None:
        for helper in self._helpers:
            helper.close()
        self._helpers.clear()


def _serve(ctx: ToolContext, conn: Connection) -> None:
    """A helper's life: batches of paths in, their records out (packed here, the warm
    process only gives their names ids), until the pipe closes."""
    from chorus_tools.tools.code.bounds import Skipped
    # symbol_index imports this module
    from chorus_tools.tools.warm.symbol_index import PARSE_SECONDS, read_local
    cache = ctx.index_cache
    try:
        while True:
            paths = conn.recv()
            before = 0 if cache is None else cache.stored
            found: list[Any] = []
            for path in paths:
                try:
                    found.append(read_local(ctx, path, PARSE_SECONDS))
                except Skipped:
                    found.append(SLOW)
            # "stored": the batch added records to --index-cache (the index prunes it)
            tag = "stored" if cache is not None and cache.stored > before else "parsed"
            conn.send([(path, (SLOW, None) if record is SLOW else (tag, record))
                       for path, record in zip(paths, found)])
    except (EOFError, OSError):
        pass
    finally:
        os._exit(0)
