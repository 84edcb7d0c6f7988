"""Bug: code.edit took a Markdown heading's range with the blank lines that close its
section, so those blank lines went with every edit: `replace` glued the next heading to
the new text, `insert_after`/`insert_before` put a sibling with no blank line before the
next heading, and `delete` of a last subsection glued the text above to the next
heading. A section's closing blank lines separate it from the next heading, as blank
lines separate two functions (docs/protocol.md, "Code by structure": a sibling is
separated by the blank lines its neighbours use; delete takes the blank lines that
separated it). The outline's range is unchanged: the section up to the next heading."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.edit import edit
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.context import ToolContext

DOC = "# A\n\ntext\n\n## B\n\nbody\n\n## B2\n\nmore\n\n# C\n\nend\n"


@pytest.mark.parametrize("symbol, action, text, expected", [
    ("A/B", "replace", "## B\n\nchanged\n",
     "# A\n\ntext\n\n## B\n\nchanged\n\n## B2\n\nmore\n\n# C\n\nend\n"),
    ("A/B", "insert_after", "## New\n\nnew\n",
     "# A\n\ntext\n\n## B\n\nbody\n\n## New\n\nnew\n\n## B2\n\nmore\n\n# C\n\nend\n"),
    ("C", "insert_before", "# Pre\n\npre\n",
     "# A\n\ntext\n\n## B\n\nbody\n\n## B2\n\nmore\n\n# Pre\n\npre\n\n# C\n\nend\n"),
    ("A/B2", "delete", None, "# A\n\ntext\n\n## B\n\nbody\n\n# C\n\nend\n"),
    ("A/B", "delete", None, "# A\n\ntext\n\n## B2\n\nmore\n\n# C\n\nend\n"),
    ("C", "delete", None, "# A\n\ntext\n\n## B\n\nbody\n\n## B2\n\nmore\n"),
])
def test_a_section_keeps_its_neighbours_apart(ctx: ToolContext, root: Path, symbol: str,
                                              action: str, text: str | None,
                                              expected: str) -> None:
    (root / "doc.md").write_text(DOC)
    edit(ctx, "doc.md", symbol, action, text=text)
    assert (root / "doc.md").read_text() == expected


def test_the_outline_still_gives_the_whole_section(ctx: ToolContext, root: Path) -> None:
    (root / "doc.md").write_text(DOC)
    [a, c] = outline(ctx, "doc.md")["symbols"]
    assert (a["line"], a["end_line"], c["line"], c["end_line"]) == (1, 12, 13, 15)
