"""A tool's way to ask the runtime to split its work across the worker pool.

A tool that returns a FanOut instead of a dict has its `parts` run by `part` in the pool's
workers, in parallel: part i is called as `part(ctx, **shared, **parts[i])`. `shared` (the
query every part needs) is pickled once here, in the worker that split the call, and the
dispatcher passes it on unread, so neither it nor the part's own work list is ever turned
into something else on the way.

The runtime merges as parts finish, in order: `merge` names a class built once as
`Merge(args)`; `add(result)` takes the next part's result (the longest finished prefix
grows by one) and returns the final result once it has enough, which stops the remaining
parts, or None to wait for more; `finish()` returns the result when every part is in.
A merger keeps its running state, so each part is looked at once. It runs in the
dispatcher, which never touches files: it must be pure.

`sizes` and `unit` are the honest progress of a split call (MCP's notifications/progress):
part i covers `sizes[i]` items of `unit` ("files searched"), counted as each part finishes.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any, Protocol

from chorus_tools.tools.method import load


class Merger(Protocol):
    def add(self, result: dict[str, Any]) -> dict[str, Any] | None: ...

    def finish(self) -> dict[str, Any]: ...


@dataclass
class FanOut:
    part: str  # "module:function" called in a worker as f(ctx, **shared, **part_kwargs)
    parts: list[dict[str, Any]]  # each part's own share of the work list
    merge: str  # "module:Class": Class(args) is a Merger
    args: dict[str, Any] = field(default_factory=dict)
    shared: bytes = b""  # pickled kwargs every part takes (see `shared`)
    sizes: list[int] = field(default_factory=list)  # items each part covers, for progress
    unit: str = ""  # what the items are, e.g. "files searched"


def shared(**kwargs: Any) -> bytes:
    """The kwargs every part of a FanOut takes, pickled once."""
    return pickle.dumps(kwargs, protocol=pickle.HIGHEST_PROTOCOL)


def run_here(ctx: Any, fan: FanOut) -> dict[str, Any]:
    """A split call's result, its parts run one after another in this worker: for a tool
    that needs the merged result itself (codex's grep_files stats the files it found).
    The parts and the merger are called as the runtime calls them."""
    common = pickle.loads(fan.shared) if fan.shared else {}
    merger: Merger = load(fan.merge)(fan.args)
    for kwargs in fan.parts:
        done = merger.add(load(fan.part)(ctx, **common, **kwargs))
        if done is not None:
            return done
    return merger.finish()
