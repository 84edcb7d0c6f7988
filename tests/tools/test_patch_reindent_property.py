"""Blocks cut from real-looking files (tests/samples: Python, YAML, JavaScript, a Makefile,
Markdown), re-indented the ways agents do it (a shift, a change of unit, both, tabs read as
spaces), then patched through the indentation tier: the tier writes exactly the intended
bytes, or refuses; it never writes a file that parses worse than before (issue 25).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from fuzzing import examples
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from syntax_support import broken

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.indent import indent
from chorus_tools.tools.patch.patch import patch

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NAMES = sorted(p.name for p in SAMPLES.iterdir() if p.is_file())  # not samples/code/
UNITS = {"inventory.py": 4, "deploy.yaml": 2, "cart.js": 2, "Makefile": 8, "guide.md": 2}
REFUSALS = {"find_not_found", "find_not_unique", "edit_breaks_syntax"}


def _respace(ind: str, file_unit: int, how: str, width: int, drop: int) -> str | None:
    """One line's indentation as the agent wrote it; None when the way cannot say it."""
    tabs = len(ind) - len(ind.lstrip("\t"))
    spaces = len(ind) - tabs
    if tabs:
        levels, rest = tabs, spaces
    else:
        levels, rest = divmod(spaces, file_unit)
    if how == "shift":
        if width >= 0:
            return " " * width + ind
        return ind[-width:] if ind.startswith(" " * -width) else None
    levels -= drop
    if levels < 0:
        return None
    if how == "tabs":
        return "\t" * levels + " " * rest
    return " " * (width * levels + rest)  # a change of unit (with `drop` levels fewer)


@st.composite
def cuts(draw: st.DrawFn) -> tuple[str, list[str], int, int, str, int, int]:
    name = draw(st.sampled_from(NAMES))
    lines = (SAMPLES / name).read_text().splitlines(keepends=True)
    start = draw(st.integers(0, len(lines) - 1))
    size = draw(st.integers(1, min(8, len(lines) - start)))
    how = draw(st.sampled_from(["shift", "unit", "tabs"]))
    width = (draw(st.integers(-8, 8).filter(bool)) if how == "shift"
             else draw(st.sampled_from([2, 3, 4, 8])))
    drop = draw(st.integers(0, 2))
    return name, lines, start, size, how, width, drop


def _agent(block: list[str], name: str, how: str, width: int, drop: int) -> list[str] | None:
    out = []
    for line in block:
        body = line.rstrip("\r\n")
        if not body.strip():
            out.append("\n")
            continue
        ind = indent(body)
        new = _respace(ind, UNITS[name], how, width, drop)
        if new is None:
            return None
        out.append(new + body[len(ind):] + "\n")
    return out


def _reindented(cut: tuple) -> tuple[list[str], list[int], list[str]]:
    """The cut block, its non-blank lines' indices and the agent's re-indented copy of it,
    or the example is dropped (an empty block, one that cannot be re-indented that way,
    or a copy found as it is, which belongs to the exact tier)."""
    name, lines, start, size, how, width, drop = cut
    block = lines[start:start + size]
    filled = [i for i, line in enumerate(block) if line.strip()]
    assume(filled)
    agent = _agent(block, name, how, width, drop)
    assume(agent is not None and "".join(agent) not in "".join(lines))
    assert agent is not None
    return block, filled, agent


@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
@given(cut=cuts())
def test_a_reindented_block_is_written_exactly_or_refused(ctx: ToolContext, root: Path,
                                                          cut: tuple) -> None:
    name, lines, start, size, how, width, _ = cut
    block, filled, agent = _reindented(cut)
    text = "".join(lines)
    find = "".join(agent)
    # the edit: the block's last non-blank line said twice
    last = filled[-1]
    replace = "".join(agent[:last + 1] + [agent[last]] + agent[last + 1:])
    intended = "".join(lines[:start] + block[:last + 1] + [block[last]] + block[last + 1:]
                       + lines[start + size:])
    f = root / name
    f.write_text(text)
    try:
        result = patch(ctx, name, [{"find": find, "replace": replace}])
    except ToolError as err:
        assert err.code in REFUSALS, err.message
        assert f.read_text() == text
        return
    assert result["matches"][0]["tier"] == "indentation"
    assert f.read_text() == intended
    assert broken(name, text, intended) is None


@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
@given(cut=cuts(), depth=st.integers(-2, 3))
def test_a_new_line_never_moves_finds_lines_nor_breaks_the_file(ctx: ToolContext, root: Path,
                                                               cut: tuple, depth: int) -> None:
    """A replace line at a width find does not show: wherever the mapping writes it, the
    lines find matched stay byte for byte, and the file parses no worse."""
    name, lines, start, size, how, width, _ = cut
    block, filled, agent = _reindented(cut)
    text = "".join(lines)
    find = "".join(agent)
    base = indent(agent[filled[-1]])
    step = " " * (width if how != "shift" else UNITS[name]) if "\t" not in base else "\t"
    assume(depth >= 0 or len(base) >= len(step) * -depth)
    new_ind = base + step * depth if depth >= 0 else base[:len(base) - len(step) * -depth]
    replace = find + new_ind + "added_line = 1\n"
    f = root / name
    f.write_text(text)
    try:
        patch(ctx, name, [{"find": find, "replace": replace}])
    except ToolError as err:
        assert err.code in REFUSALS, err.message
        assert f.read_text() == text
        return
    after = f.read_text().splitlines(keepends=True)
    inserted = start + size
    assert after[inserted].strip() == "added_line = 1"
    assert after[:inserted] + after[inserted + 1:] == lines
    assert broken(name, text, f.read_text()) is None


def test_the_samples_parse() -> None:
    for name in NAMES:
        text = (SAMPLES / name).read_text()
        assert broken(name, text, text) is None
        assert name in UNITS
    yaml.safe_load((SAMPLES / "deploy.yaml").read_text())
    compile((SAMPLES / "inventory.py").read_text(), "inventory.py", "exec")


def test_regression_one_find_width_for_two_file_indentations_rewrote_a_recipe_line(
        ctx: ToolContext, root: Path) -> None:
    """A Makefile's `\\t    $(LDLIBS)` continuation and a `\\t\\t--maxfail` line both read
    as 8 spaces in a find written with 4-space levels: the tier wrote the continuation
    back as `\\t\\t` (the width's last file line won). Ambiguous now: refused, file kept."""
    text = "app: $(OBJ)\n\t$(CC) -o $@ \\\n\t    $(LDLIBS)\n\ntest: app\n\t$(PY) -m pytest \\\n" \
           "\t\t--maxfail=1 tests/\n"
    find = "        $(LDLIBS)\n\ntest: app\n    $(PY) -m pytest \\\n        --maxfail=1 tests/\n"
    f = root / "Makefile"
    f.write_text(text)
    try:
        patch(ctx, "Makefile", [{"find": find, "replace": find + "    added_line = 1\n"}])
    except ToolError as err:
        assert err.code == "find_not_found" and "indents differently" in err.message
    assert f.read_text() == text
