"""What a call of an unknown method or MCP tool is told: the names it probably meant, from
the registry (docs/protocol.md, Errors: `method_not_found`'s `data.did_you_mean`), and the
tool set that has the name when the server was started without it."""

from __future__ import annotations

import difflib
import re
from typing import Iterable

from chorus_tools.tools.registry import ALL_METHODS

MOST = 3
CUTOFF = 0.6  # difflib's own default for close matches
CLOSE = 0.1  # suggested beside the best only when about as alike
_SEPARATORS = re.compile(r"[._\-\s]")


def near(name: str, known: Iterable[str]) -> list[str]:
    """The known names `name` probably meant, best first (at most MOST): the same name
    spelled with other separators or case (`file_read`, `File.Read` for `file.read`), or
    its words in another order (`read_file`), else those most alike (difflib's ratio,
    within CLOSE of the best)."""
    by_key: dict[str, list[str]] = {}
    for candidate in known:
        by_key.setdefault(_key(candidate), []).append(candidate)
    key = _key(name)
    same = [c for c in by_key.get(key, []) if c != name]
    if not same:  # the same words in another order: read_file for file.read
        same = [c for k, names in by_key.items() for c in names
                if _words(c) == _words(name) and c != name]
    if same:
        return same[:MOST]
    scored = sorted(((_ratio(key, k), k) for k in by_key),
                    key=lambda pair: (-pair[0], pair[1]))
    best = scored[0][0] if scored else 0.0
    alike = [k for ratio, k in scored if ratio >= max(CUTOFF, best - CLOSE)]
    return [c for k in alike for c in by_key[k]][:MOST]


def _ratio(name: str, known: str) -> float:
    """difflib's ratio of the two, or 0.0 when their lengths alone keep it under CUTOFF:
    its cost grows with the name's length, and a megabytes-long name took the dispatcher
    seconds a megabyte, every other request waiting."""
    matcher = difflib.SequenceMatcher(None, name, known)
    return matcher.ratio() if matcher.real_quick_ratio() >= CUTOFF else 0.0


def _key(name: str) -> str:
    return _SEPARATORS.sub("", name).lower()


def _words(name: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _SEPARATORS.split(name) if w)


def other_sets(name: str, served: tuple[str, ...]) -> list[str]:
    """The tool sets not served here that have a method or tool of this name."""
    return sorted({m.toolset for m in ALL_METHODS
                   if name in (m.name, m.tool_name) and m.toolset not in served})


def advice(name: str, known: Iterable[str], served: tuple[str, ...],
           listing: str) -> tuple[str, list[str]]:
    """The sentence to add to an unknown name's message, and the names it suggests."""
    suggestions = near(name, known)
    sets = other_sets(name, served)
    said = []
    if sets:
        named = sets[0] if len(sets) == 1 else f"{', '.join(sets[:-1])} and {sets[-1]}"
        said.append(f"{name} belongs to the {named} tool set{'s' if len(sets) > 1 else ''}, "
                    f"not served here: add one to --tools (now {','.join(served)}) to use "
                    "it.")
    if suggestions:
        said.append(f"Did you mean {' or '.join(repr(s) for s in suggestions)}?")
    said.append(f"Call {listing} for the list.")
    return " ".join(said), suggestions
