"""ripgrep's `--type` for the python engine: a file is selected when its name matches a
glob of one of the chosen types (tools/search/rg_types.py, generated from rg itself)."""

from __future__ import annotations

import re
from functools import lru_cache

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.globs import glob_regex
from chorus_tools.tools.search.rg_types import TYPES


def check_types(names: list[str], param: str = "type") -> None:
    """invalid_params naming the first type ripgrep would not know."""
    for name in names:
        if name not in TYPES:
            raise ToolError("invalid_params",
                            f"Unknown file type {name!r} in '{param}'. Use a ripgrep type "
                            "name such as py, ts, rust, js, go, java, md, json, yaml "
                            "(`rg --type-list` lists them all).", param=param)


class FileTypes:
    """The chosen types as one name matcher."""

    def __init__(self, names: tuple[str, ...]) -> None:
        check_types(list(names))
        self._regex = _compiled(names)

    def matches(self, name: str) -> bool:
        return self._regex.fullmatch(name) is not None


@lru_cache(maxsize=32)
def _compiled(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{glob_regex(g)})" for n in names for g in TYPES[n]))
