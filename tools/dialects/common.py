"""What every dialect's adapters share: applying a conversion to a core result that may
still be a FanOut, and renaming the core's parameter names in its errors."""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.fanout import FanOut


def _resolve(target: str) -> Callable[..., Any]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def then(result: dict[str, Any] | FanOut, convert: str,
         **extra: Any) -> dict[str, Any] | FanOut:
    """`convert(result, **extra)` now, or, when the core split its work across the pool,
    after the parts are merged (in the dispatcher: `convert` must be pure)."""
    if isinstance(result, FanOut):
        return FanOut(part=result.part, parts=result.parts,
                      merge="chorus_tools.tools.dialects.common:merge_then",
                      args={"merge": result.merge, "args": result.args, "convert": convert,
                            "extra": extra})
    return _resolve(convert)(result, **extra)


def merge_then(args: dict[str, Any], results: list[dict[str, Any]],
               complete: bool) -> dict[str, Any] | None:
    """FanOut merge: the core's merge, then the dialect's conversion."""
    merged = _resolve(args["merge"])(args["args"], results, complete)
    return None if merged is None else _resolve(args["convert"])(merged, **args["extra"])


def renamed(err: ToolError, names: dict[str, str]) -> ToolError:
    """The core's error in the dialect's words: each core parameter name (a key of
    `names`, e.g. 'patches[0].find', or a pattern with {i}) becomes the dialect's."""
    message, details = err.message, dict(err.details)
    for core, own in names.items():
        rx = re.compile(re.escape(core).replace(r"\{i\}", r"(\d+)"))

        def swap(m: re.Match[str], own: str = own) -> str:
            return own.replace("{i}", m.group(1)) if m.groups() else own
        message = rx.sub(swap, message)
        if isinstance(details.get("param"), str):
            details["param"] = rx.sub(swap, details["param"])
    return ToolError(err.code, message, **details)
