"""What a worker runs for one job: the invoker decides everything once (the function, its
arguments, the paths as normalised, whether it changes files, whether to keep its audit
hashes and what it replaces) and the worker runs it without looking the method up again.

It crosses the pipe as a plain tuple of its fields (the pool sends `tuple(task)`, the worker
rebuilds it with `Task._make`): pickling the NamedTuple itself goes through copyreg and
measured ~18 µs a job against ~1 µs for the tuple.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Task(NamedTuple):
    target: str  # "module:function", called as f(ctx, **kwargs)
    kwargs: dict[str, Any]
    # the call's path params as the invoker normalised them (given -> workspace-relative);
    # --deny judges these, and Workspace.rel answers from them instead of normalising again
    paths: dict[str, str] = {}
    mutating: bool = False  # --read-only refuses it
    record: bool = False  # fill ctx.record with the audit hashes
    # hand back what the mutation replaces, for the history (tools/mutate/keep.py: inline,
    # or streamed into a spool the worker inherited at fork)
    keep: bool = False
    # a split call's part: the arguments every part shares, pickled once by the tool
    # (tools/walk/fanout.py) and passed through the dispatcher unread
    shared: bytes = b""
    # the quota's room when one is set (tools/mutate/quota.py: Room's fields), else None
    room: tuple[int, int | None, int, int | None] | None = None
