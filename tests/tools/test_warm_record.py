"""The symbol index's packed record of a file (tools/warm/refs.py): what it gives back is
what the parse gave, name by name (every use's offset, kind and holder, the defined names
in file order, the map's words in their order, the holders, the stamp), whichever widths
the file needs: offsets past 64 KiB, over 31 and over 8,191 holders, names that are no
identifier (a heading, a computed member). And it is small: a few bytes a use."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chorus_tools.tools.code.codemap import read_summary
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.refs import Record, local

SAMPLES = Path(__file__).parent.parent / "samples" / "code"


def _methods(count: int) -> str:
    return "class Many:\n" + "".join(f"    def m{i}(self, x):\n        return helper(x, m{i})\n"
                                     for i in range(count))


CASES = {
    "small.py": "import os\n\ndef area(s):\n    return os.path.join(s, area(s))\n",
    "big.py": "def area(s):\n    return s\n" + "# filler line\n" * 6000 +
              "def late(s):\n    return area(late(s))\n",  # offsets past 64 KiB
    "holders40.py": _methods(40),  # holders packed in 16 bits
    "holders9000.py": _methods(9000),  # holders packed in 32 bits
    "members.js": "class A {\n  #slurp(ex) { return this.#slurp(ex); }\n"
                  "  static [Symbol.hasInstance](x) { return x; }\n}\n",
    "zz_install.md": "# Install guide\n\nText.\n\n## Use it\n",
    "empty.py": "",
    "dense.py": "".join(f"def f{i}(a):\n" + "    b_c = d_e(a, b_c)\n" * 20 for i in range(8)),
}


@pytest.fixture
def files(root: Path) -> ToolContext:
    for name, text in CASES.items():
        (root / name).write_text(text)
    for sample in SAMPLES.iterdir():
        (root / sample.name).write_bytes(sample.read_bytes())
    return ToolContext(ws=Workspace(str(root)))


def _all(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_a_record_gives_back_what_the_parse_gave(files: ToolContext, root: Path) -> None:
    checked = 0
    every = {path: read_summary(files, path) for path in _all(root)}
    for path, parsed in every.items():
        if parsed is None:
            continue
        found = local(parsed)
        vocabulary = ["zz_unrelated", *found.names]  # ids that are no local positions
        ids = {name: i for i, name in enumerate(vocabulary)}
        record = Record(found, np.array([ids[n] for n in found.names]), vocabulary)
        table = parsed.table
        assert record.stamp == parsed.stamp
        assert record.names == parsed.summary.names, path
        assert [vocabulary[i] for i in record.words] == list(parsed.summary.words), path
        assert record.refs.holders == table.holders, path
        step = max(1, len(table.names) // 500)  # a sample of the 9,000 methods' names
        for position, name in list(enumerate(table.names))[::step]:
            uses = record.find(ids[name])
            assert uses is not None, (path, name)
            at = np.flatnonzero(table.name == position)
            assert uses.offset.tolist() == table.offset[at].tolist(), (path, name)
            assert uses.kind.tolist() == table.kind[at].tolist(), (path, name)
            assert uses.inside.tolist() == table.inside[at].tolist(), (path, name)
            checked += len(at)
        for name in sorted(set(parsed.summary.names) - set(table.names))[::step]:
            assert record.find(ids[name]) is None, (path, name)  # defined, never used
        assert record.find(ids["zz_unrelated"]) is None
        _holds_agrees_with_find(record, np.array([ids[n] for n in found.names]))
        assert record.find(len(vocabulary) + 5) is None
    assert checked > 2000
    big, many, defined = every["big.py"], every["holders9000.py"], every["zz_install.md"]
    assert big is not None and int(big.table.offset.max()) >= 1 << 16  # 32-bit offsets
    assert many is not None and len(many.table.holders) > 8191  # 32-bit holders
    assert defined is not None and local(defined).markdown
    assert local(defined).names == ["Install guide", "Use it"]  # names no identifier


def test_a_use_costs_three_bytes_in_a_small_file(files: ToolContext) -> None:
    parsed = read_summary(files, "dense.py")
    assert parsed is not None
    found = local(parsed)
    record = Record(found, np.arange(len(found.names)), found.names)
    uses, names = len(parsed.table.offset), len(found.names)
    # 2 bytes of offset and 1 of holder and kind a use; 4 of id, 2 of bounds and 2 of
    # definition a name; the header; the 8 holders' lengths and text ("f0")
    assert uses > 300
    assert len(record.data) <= 3 * uses + 8 * names + 28 + 8 * 4 + 8


def _holds_agrees_with_find(record: Record, ids: np.ndarray) -> None:
    """Record.holds, the plain-Python look-up a warm code.references runs on every file
    that may hold a name, says what find finds, for every id and for the ids an id's
    bytes make with its neighbour's (4 bytes that straddle two ids are none of them)."""
    raw = ids.astype(np.uint32).tobytes()
    straddling = [int.from_bytes(raw[at:at + 4], "little") for at in range(2, len(raw) - 4, 4)]
    for word in [*ids.tolist()[:2000], *straddling[:50], 0xFFFFFFFF]:
        assert record.holds(word) == (record.find(word) is not None), word
