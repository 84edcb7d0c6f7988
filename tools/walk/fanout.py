"""A tool's way to ask the runtime to split its work across the worker pool.

A tool that returns a FanOut instead of a dict has its `parts` run by `part` in the pool's
workers, in parallel. After each part finishes, the runtime calls `merge(args, results,
complete)` with the results of the longest finished prefix of `parts` (in order); merge
returns the final result (a dict) once it has enough, which stops the remaining parts, or
None to wait for more. With `complete=True` it must return the result. merge is pure: it
runs in the dispatcher, which never touches files.

`sizes` and `unit` are the honest progress of a split call (MCP's notifications/progress):
part i covers `sizes[i]` items of `unit` ("files searched"), counted as each part finishes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class FanOut:
    part: str  # "module:function" called in a worker as f(ctx, **part_kwargs) -> dict
    parts: list[dict[str, Any]]
    merge: str  # "module:function": merge(args, results, complete) -> dict | None
    args: dict[str, Any] = field(default_factory=dict)
    sizes: list[int] = field(default_factory=list)  # items each part covers, for progress
    unit: str = ""  # what the items are, e.g. "files searched"
