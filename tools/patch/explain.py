"""What a failed edit tells the agent, in the text it reads: the closest region's lines and
text, the line of every occurrence. Most MCP hosts hand a model an error's text alone
(docs/protocol.md, MCP), so that text holds what the error's data holds; the core's errors
and every tool set's own texts say it through these sentences, never "see data.hint"."""

from __future__ import annotations

from typing import Any, NamedTuple

from chorus_tools.tools.patch.compare import Budget
from chorus_tools.tools.patch.hint import closest_region


class Miss(NamedTuple):
    """What find_not_found says of the closest region: the sentence, the quote after it,
    and the error's data on it (`hint`, and `hint_cut`)."""
    where: str
    quote: str | None
    data: dict[str, Any]


def missed(text: str, find: str, name: str) -> Miss:
    """The closest region to `find` in `text` (within the comparisons' bound), told as
    every editor's find_not_found tells it; `name` is what the agent should correct."""
    budget = Budget()
    hint = closest_region(text, find, budget)
    return Miss(*closest(hint, name, budget.cut), hint_data(hint, budget.cut))


def closest(hint: dict[str, Any] | None, name: str,
            cut: bool = False) -> tuple[str, str | None]:
    """The sentence that points at `hint` (the region find_not_found carries), naming
    `name`, what the agent should correct; and the quote to show after it: the region's
    text exactly as in the file (None when nothing is similar, or nothing was found
    similar before the comparisons reached their bound: `cut`)."""
    if hint is None and cut:
        return (f"No similar region was found within the hint's bound on comparison work "
                f"({name} is too large to compare with the file in full): read the file "
                f"and copy the exact text, or send a shorter {name}.", None)
    if hint is None:
        return ("No region of the file is similar: read the file and copy the exact "
                "text.", None)
    return (f"The closest region is lines {hint['start_line']}-{hint['end_line']} "
            f"(similarity {hint['similarity']}); correct {name} from its text, which "
            "follows exactly as in the file:", hint["text"])


def hint_data(hint: dict[str, Any] | None, cut: bool) -> dict[str, Any]:
    """find_not_found's data on the region: `hint`, and `hint_cut: true` when it is null
    because the comparisons reached their bound, not because nothing is similar."""
    return {"hint": hint, **({"hint_cut": True} if hint is None and cut else {})}


def occurrences(lines: list[int], more: int = 0) -> str:
    """'lines 4, 9, 12' for every line given, and how many more there are."""
    listed = ", ".join(map(str, lines))
    tail = f" and {more} more" if more else ""
    return f"line{'s' if len(lines) + more > 1 else ''} {listed}{tail}"
