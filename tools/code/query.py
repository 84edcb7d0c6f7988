"""What code.symbols asks for: a name or a name path, matched exactly, as a prefix or as a
substring, with or without case (docs/protocol.md, "Code by structure").

`Parser/parse` matches a symbol named `parse` whose enclosing path ends in `Parser`; a
leading `/` anchors the path at the top level (`/Parser/parse`). Only the last part is
matched as `match` says; the parts before it must be the enclosing names exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from chorus_tools.tools.code.symbols import Symbol
from chorus_tools.tools.code.symbols.record import KINDS
from chorus_tools.tools.errors import ToolError

MATCHES = ("exact", "prefix", "substring")


@dataclass(frozen=True)
class NameQuery:
    parts: tuple[str, ...]  # the name path's parts, the symbol's own name last
    anchored: bool
    match: str
    case_sensitive: bool
    kind: str | None

    @classmethod
    def read(cls, query: str, match: str = "exact", case_sensitive: bool = True,
             kind: str | None = None) -> NameQuery:
        anchored = query.startswith("/")
        parts = tuple(query[1:].split("/") if anchored else query.split("/"))
        if not query.strip() or any(not part for part in parts):
            raise ToolError("invalid_params", "query must be a name or a name path such as "
                            "`Parser/parse` (no empty part); got "
                            f"{query!r}.", param="query")
        if not case_sensitive:
            parts = tuple(part.lower() for part in parts)
        if kind is not None and kind not in KINDS:
            raise ToolError("invalid_params", f"kind must be one of {', '.join(KINDS)}; got "
                            f"{kind!r}.", param="kind")
        return cls(parts, anchored, match, case_sensitive, kind)

    @property
    def needle(self) -> str:
        """What a file must contain to define a match: the longest run without white
        space of the name asked for (a heading's name is its words, collapsed)."""
        return max(self.parts[-1].split(), key=len)

    def matches(self, symbol: Symbol) -> bool:
        if self.kind is not None and symbol.kind != self.kind:
            return False
        name = symbol.name if self.case_sensitive else symbol.name.lower()
        wanted = self.parts[-1]
        if not (name == wanted if self.match == "exact" else name.startswith(wanted)
                if self.match == "prefix" else wanted in name):
            return False
        if len(self.parts) == 1 and not self.anchored:
            return True
        path = symbol.name_path if self.case_sensitive else symbol.name_path.lower()
        above = path[:len(path) - len(symbol.name)].rstrip("/")
        wanted_above = "/".join(self.parts[:-1])
        if self.anchored:
            return above == wanted_above
        return above == wanted_above or above.endswith("/" + wanted_above)

    def exact(self, symbol: Symbol) -> bool:
        """Whether the name is the one asked for (these come first in a reply)."""
        name = symbol.name if self.case_sensitive else symbol.name.lower()
        return name == self.parts[-1]
