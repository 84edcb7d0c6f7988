"""What a failed edit tells the agent, in the text it reads: the closest region's lines and
text, the line of every occurrence. Most MCP hosts hand a model an error's text alone
(docs/protocol.md, MCP), so that text holds what the error's data holds; the core's errors
and every tool set's own texts say it through these sentences, never "see data.hint"."""

from __future__ import annotations

from typing import Any


def closest(hint: dict[str, Any] | None, name: str) -> tuple[str, str | None]:
    """The sentence that points at `hint` (the region find_not_found carries), naming
    `name`, what the agent should correct; and the quote to show after it: the region's
    text exactly as in the file (None when nothing is similar)."""
    if hint is None:
        return ("No region of the file is similar: read the file and copy the exact "
                "text.", None)
    return (f"The closest region is lines {hint['start_line']}-{hint['end_line']} "
            f"(similarity {hint['similarity']}); correct {name} from its text, which "
            "follows exactly as in the file:", hint["text"])


def occurrences(lines: list[int], more: int = 0) -> str:
    """'lines 4, 9, 12' for every line given, and how many more there are."""
    listed = ", ".join(map(str, lines))
    tail = f" and {more} more" if more else ""
    return f"line{'s' if len(lines) + more > 1 else ''} {listed}{tail}"
