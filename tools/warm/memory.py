"""The warm tree as the walker's source (tools/walk/source.py): a directory's handle is its
path, and nothing is read from the disk but what --deny's symlink check reads live."""

from __future__ import annotations

import os

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.walk.globs import RuleSet
from chorus_tools.tools.walk.source import FILE
from chorus_tools.tools.warm.tree import WarmTree


class NotWarm(Exception):
    """The tree cannot answer this one (a start it does not hold): walk the disk."""


class MemorySource:
    splits = False  # in memory, one pass is faster than sharing out

    def __init__(self, tree: WarmTree) -> None:
        self.tree = tree

    def open_start(self, ctx: ToolContext, rel: str, shown: str | None) -> str:
        if self.tree.lookup(rel) is None:
            raise NotWarm(rel)
        return rel

    def open_child(self, handle: str, name: str) -> str | None:
        path = f"{handle}/{name}" if handle else name
        return path if path in self.tree.dirs else None

    def close(self, handle: str) -> None:
        pass

    def list(self, handle: str) -> list[tuple[str, str]]:
        return [(name, kind) for name, (kind, _) in self.tree.dirs[handle].entries.items()]

    def stat(self, handle: str, name: str, kind: str) -> os.stat_result | None:
        entry = self.tree.dirs[handle].entries.get(name)
        if entry is None or (kind == FILE and entry[0] != FILE):
            return None
        return entry[1]

    def rules(self, ctx: ToolContext, dir_rel: str,
              names: set[str] | None = None) -> dict[str, RuleSet]:
        node = self.tree.dirs.get(dir_rel)
        return node.rules if node is not None else {}

    def real_prefix(self, ctx: ToolContext, handle: str, dir_rel: str) -> str:
        return f"{dir_rel}/" if dir_rel else ""  # the tree holds real paths only
