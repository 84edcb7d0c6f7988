"""codex's `grep_files` on the python engine over more files than one worker searches
inline (tools/search/search.py: INLINE_FILES) answered internal_error: it runs the split
search's parts itself (sorting by modification time needs the files), but called them
without the query every part shares and merged them through an interface the merger no
longer has. Its answer is now the same as ripgrep's, newest first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rpc_client import RpcServer

FILES = 120  # well past the 32 files a python-engine search runs inline


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    for i in range(FILES):
        folder = root / f"d{i // 20}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i:03}.txt").write_text("needle\n" if i % 3 == 0 else "hay\n")
        os.utime(folder / f"f{i:03}.txt", (1_000_000 + i, 1_000_000 + i))
    return root


@pytest.mark.parametrize("engine", ["python", "ripgrep"])
def test_grep_files_over_a_split_search_lists_the_matches_newest_first(
        ws: Path, engine: str) -> None:
    expected = [f"d{i // 20}/f{i:03}.txt" for i in reversed(range(0, FILES, 3))]
    with RpcServer(ws, "--tools", "codex", "--search-engine", engine,
                   "--workers", "2") as srv:
        reply = srv.call("grep_files", {"pattern": "needle"})
        assert reply.get("result", {}).get("files") == expected[:100], reply
        assert reply["result"]["truncated"] is False  # 40 matches, under the limit
        limited = srv.call("grep_files", {"pattern": "needle", "limit": 5})["result"]
        assert limited["files"] == expected[:5] and limited["truncated"] is True
        none = srv.call("grep_files", {"pattern": "nothing here"})["result"]
        assert none == {"output": "No matches found.", "files": [], "truncated": False}
        mcp = srv.call("tools/call", {"name": "grep_files",
                                      "arguments": {"pattern": "needle", "limit": 2}})
        assert mcp["result"]["isError"] is False, mcp
        assert mcp["result"]["structuredContent"]["files"] == expected[:2]
