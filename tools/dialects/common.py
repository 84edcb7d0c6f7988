"""What the dialects' adapters share: applying a conversion to a core result that may
still be a FanOut, aliases, integers given as strings, and a search window cut into
context arrays. (Errors are said in each tool's words by its table's `words`:
tools/errors.in_words.)"""

from __future__ import annotations

import dataclasses
from typing import Any

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut, Merger
from chorus_tools.tools.method import load
from chorus_tools.tools.search.results import MATCH_PREFIX


def then(result: dict[str, Any] | FanOut, convert: str,
         **extra: Any) -> dict[str, Any] | FanOut:
    """`convert(result, **extra)` now, or, when the core split its work across the pool,
    after the parts are merged (in the dispatcher: `convert` must be pure)."""
    if isinstance(result, FanOut):
        return dataclasses.replace(
            result, merge="chorus_tools.tools.dialects.common:MergeThen",
            args={"merge": result.merge, "args": result.args, "convert": convert,
                  "extra": extra})
    return load(convert)(result, **extra)


class MergeThen:
    """FanOut merger: the core's merger, then the dialect's conversion."""

    def __init__(self, args: dict[str, Any]) -> None:
        self._core: Merger = load(args["merge"])(args["args"])
        self._convert = load(args["convert"])
        self._extra: dict[str, Any] = args["extra"]

    def add(self, result: dict[str, Any]) -> dict[str, Any] | None:
        merged = self._core.add(result)
        return None if merged is None else self._convert(merged, **self._extra)

    def finish(self) -> dict[str, Any]:
        return self._convert(self._core.finish(), **self._extra)


def window(match: dict[str, Any], before: int,
           context: bool) -> tuple[list[str], str, list[str]]:
    """(lines before, the matching line, lines after) of a file.search content entry: with
    context its lines are prefixed (`--> ` or four spaces) and start `before` lines above
    the match, or at line 1."""
    if not context:
        return [], match["content"], []
    lines = [line[len(MATCH_PREFIX):] for line in match["content"].split("\n")]
    at = min(before, match["line"] - 1)
    return lines[:at], lines[at], lines[at + 1:]


def alias(params: dict[str, Any], name: str, *aliases: str, required: bool = True) -> Any:
    """The value given under `name` or any of its `aliases`; invalid_params when they
    disagree, or none is given for a required one."""
    names = (name, *aliases)
    given = {n: params[n] for n in names if params.get(n) is not None}
    values = list(dict.fromkeys(map(repr, given.values())))
    if len(values) > 1:
        raise ToolError("invalid_params", f"{' and '.join(map(repr, given))} are aliases of "
                        "one parameter but were given different values; give one of them.",
                        own_words=True, param=next(iter(given)))
    if not given and required:
        raise ToolError("invalid_params", f"Missing required parameter '{name}' (or "
                        f"its alias{'es' if len(aliases) > 1 else ''} "
                        f"{', '.join(repr(n) for n in aliases)}).", own_words=True,
                        param=name)
    return next(iter(given.values()), None)


def integer(value: int | str | None, name: str) -> int | None:
    """An integer parameter that may come as a decimal string ("120")."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, float):  # 2.0: the schema let only integral numbers through
        return int(value)
    try:
        return int(value.strip())
    except ValueError:
        raise ToolError("invalid_params", f"'{name}' must be an integer or a decimal "
                        f"string, not {value!r}.", param=name) from None
