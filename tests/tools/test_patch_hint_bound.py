"""The fault: find_not_found's hint ran difflib without bound (a find of 131k lines in a
1 MiB file took over 10 minutes). Each shape runs in a child process with a generous
deadline, so the old code fails by timeout instead of hanging the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.patch import patch

DEADLINE = 10.0  # seconds: a resource bound, orders of magnitude above the bounded cost

SHAPES = {
    "131k_line_find_in_1mib_file": """
text = "x = 11;\\n" * 131072
find = text[:524288] + "x = 12;\\n" + text[524296:]""",
    "131k_distinct_lines_one_changed": """
text = "".join(f"v{i:06d}\\n" for i in range(131072))
find = text.replace("v065536", "w065536")""",
    "many_equal_lines": """
text = "x = 1;\\n" * 150_000
find = text + "y = 2;\\n" """,
    "many_equal_lines_one_changed": """
text = "x = 1;\\n" * 150_000
find = ("x = 1;\\n" * 60_000).replace("1", "2", 1)""",
    "one_giant_line_short_find": """
text = "a" * (1 << 20)
find = "a" * 1000 + "b" """,
    "one_giant_line_giant_find": """
text = "a" * (1 << 20)
find = "a" * ((1 << 20) - 10) + "b" """,
    "find_of_one_huge_line_against_many_short": """
text = "".join(f"s{i % 50}\\n" for i in range(1 << 18))
find = "s1 " * 350_000""",
}

RUN = """
import json
from chorus_tools.tools.patch.hint import closest_region
{shape}
hint = closest_region(text, find)
print(json.dumps(hint and [hint["start_line"], hint["end_line"], hint["similarity"]]))
"""


def hint_within_deadline(shape: str) -> list | None:
    done = subprocess.run([sys.executable, "-c", RUN.format(shape=shape)], check=True,
                          capture_output=True, text=True, timeout=DEADLINE)
    return json.loads(done.stdout)


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
@pytest.mark.parametrize("name", SHAPES)
def test_hint_of_a_huge_find_is_bounded(name: str) -> None:
    hint = hint_within_deadline(SHAPES[name])
    if hint is not None:
        assert 0.5 <= hint[2] < 1


def test_131k_line_find_with_one_typo_still_lands_on_the_file() -> None:
    assert hint_within_deadline(SHAPES["131k_distinct_lines_one_changed"]) == [1, 131072, 0.999]


def test_hint_omitted_past_the_bound_says_so(ctx: ToolContext, root: Path) -> None:
    text = "".join(f"s{i % 50}\n" for i in range(1 << 18))
    (root / "short.txt").write_text(text)
    with pytest.raises(ToolError) as info:
        patch(ctx, "short.txt", [{"find": "s1 " * 350_000, "replace": "x"}])
    err = info.value
    assert err.code == "find_not_found"
    assert err.details["hint"] is None and err.details["hint_cut"] is True
    assert "within the hint's bound on comparison work" in err.message
    assert (root / "short.txt").read_text() == text


def test_no_hint_cut_when_nothing_is_similar(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("import os\nprint(os.sep)\n")
    with pytest.raises(ToolError) as info:
        patch(ctx, "a.py", [{"find": "SELECT * FROM users;", "replace": "x"}])
    assert info.value.details["hint"] is None and "hint_cut" not in info.value.details
    assert "No region of the file is similar" in info.value.message
