"""A worker's questions to the warm process (tools/warm/service.py).

Every failure is an answer of None: the caller walks the disk as it would without a warm
tree, so losing the warm process costs speed, never a wrong or missing reply. A question
not answered within PATIENCE seconds drops the connection (a late reply must never be
read as the next question's).
"""

from __future__ import annotations

import pickle
import socket
from multiprocessing.connection import Connection
from typing import Any

from chorus_tools.tools.context import ToolContext

PATIENCE = 10.0
# the budget's share that kept replies may take (16 MiB of the default), in the warm
# process (tools/warm/answers.py) and again for the server's copy (rpc/process/warm_replies.py)
KEPT_SHARE = 16
_conn: dict[str, Connection] = {}  # per process: a forked worker connects anew
_NONE = pickle.dumps(None)


class Pickled(bytes):
    """A reply still pickled, as the warm process kept it: a worker hands it on to the
    dispatcher untouched (rpc/process/pool.py unpickles it), so a 20k-entry listing is not
    unpickled and pickled again on the way (a third of its time)."""


def ask(ctx: ToolContext, op: str, *, raw: bool = False, **kwargs: Any) -> Any:
    """The warm process's reply to `op` (`raw`: as Pickled), or None (off, not ready,
    gone, or slow)."""
    if ctx.warm is None:
        return None
    conn = _conn.get(ctx.warm) or _connect(ctx.warm)
    if conn is None:
        return None
    try:
        conn.send((op, kwargs))
        if conn.poll(PATIENCE):
            data = conn.recv_bytes()
            return (None if data == _NONE else Pickled(data)) if raw else pickle.loads(data)
    except (OSError, EOFError):
        pass
    _conn.pop(ctx.warm, None)
    conn.close()
    return None


def _connect(path: str) -> Connection | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    conn = _conn[path] = Connection(sock.detach())
    return conn
