"""Bug: a Python script's `#!` interpreter line, directly above its first definition, was
read as that definition's comment block, so code.edit's replace or delete of it removed
the shebang (the script no longer ran as a program), where a Node script's stayed. The
interpreter line belongs to the file; a real comment block under it still belongs to the
definition (docs/protocol.md, "Code by structure": line covers the comment block
directly above)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.edit import edit
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.context import ToolContext

SCRIPTS = {
    "tool": "#!/usr/bin/env python3\ndef main():\n    pass\n",
    "run.py": "#!/usr/bin/python3\n# Entry point.\ndef main():\n    pass\n",
    "node": "#!/usr/bin/env node\nfunction main() {}\n",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_interpreter_line_stays_with_the_file(ctx: ToolContext, root: Path,
                                                  name: str) -> None:
    (root / name).write_text(SCRIPTS[name])
    [main] = outline(ctx, name)["symbols"]
    assert main["line"] == 2  # under the interpreter line; run.py's comment included
    edit(ctx, name, "main", "delete")
    assert (root / name).read_text().splitlines()[0] == SCRIPTS[name].splitlines()[0]


def test_a_replace_keeps_the_shebang_and_takes_the_comment(ctx: ToolContext,
                                                           root: Path) -> None:
    (root / "run.py").write_text(SCRIPTS["run.py"])
    edit(ctx, "run.py", "main", "replace", text="def main():\n    return 1\n")
    assert (root / "run.py").read_text() == "#!/usr/bin/python3\ndef main():\n    return 1\n"
