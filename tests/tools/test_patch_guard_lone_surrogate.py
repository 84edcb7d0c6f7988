"""Bug: a patch of a Python file matched by a looser tier, whose replace held a lone
surrogate, was refused as edit_breaks_syntax with the codec's complaint as the "syntax
error" (the guard's compile could not encode the text). Text no encoding can hold is
invalid_params naming the patch's replace, nothing written, as for an exact match
(docs/protocol.md, file.read: text the encoding cannot hold is invalid_params)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.patch import patch

SOURCE = "def f():\n    return 1\n"


@pytest.mark.parametrize("find", ["return 1", "def f():\n  return 1"])
def test_a_lone_surrogate_is_invalid_whatever_the_tier(ctx: ToolContext, root: Path,
                                                       find: str) -> None:
    (root / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as caught:
        patch(ctx, "m.py", [{"find": find, "replace": find.replace("1", '"\ud800"')}])
    assert caught.value.code == "invalid_params"
    assert caught.value.details["param"] == "patches[0].replace"
    assert (root / "m.py").read_text() == SOURCE
