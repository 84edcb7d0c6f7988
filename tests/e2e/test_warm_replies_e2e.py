"""A whole warm code reply answered again without a worker (rpc/process/warm_replies.py),
end to end: the same code.symbols and code.references asked over and over of a warm
server answer as a cold one (`--index-memory 0`) does, asked at the same moment, right
after an outside change (no pause), after the warm server's own write, and across a
killed warm process; and its MCP tool gives the same result as structuredContent."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Iterator

import pytest

from warm_matrix import Call
from warm_support import Pair, paired

ASKED: list[Call] = [
    ("code.symbols", {"query": "Engine"}),
    ("code.symbols", {"query": "Engine/start"}),
    ("code.symbols", {"query": "eng", "match": "prefix", "case_sensitive": False}),
    ("code.references", {"name": "Engine", "include_definitions": True}),
    ("code.references", {"name": "start", "context_lines": 1}),
]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "engine.py").write_text(
        "class Engine:\n    def start(self):\n        return 1\n")
    (ws / "src" / "use.py").write_text(
        "from src.engine import Engine\n\nEngine().start()\n")
    (ws / "web").mkdir()
    (ws / "web" / "engine.ts").write_text(
        "export class Engine {\n  start(): number { return 2; }\n}\n")
    yield from paired(ws, "ripgrep")


def alike(pair: Pair, context: str, rounds: int = 3) -> None:
    """Every question asked `rounds` times (the first makes the reply the server keeps,
    the others are answered from it) answers as the cold server does."""
    found = []
    for i in range(rounds):
        found += pair.differences(ASKED, f"{context}, round {i + 1}: ")
    assert not found, "\n".join(found)


def symbols_of(pair: Pair, query: str) -> list[tuple[str, int]]:
    result = pair.warm.call("code.symbols", {"query": query})["result"]
    return [(s["path"], s["line"]) for s in result["symbols"]]


def test_kept_replies_answer_as_a_cold_server_through_changes(pair: Pair) -> None:
    alike(pair, "unchanged")
    assert symbols_of(pair, "Engine") == [("src/engine.py", 1), ("web/engine.ts", 1)]
    # an outside change, asked about at once: the reply made before it never answers
    with open(pair.ws / "src" / "engine.py", "a") as f:
        f.write("\n\nclass Engine2:\n    pass\n\nEngine = Engine2\n")
    (pair.ws / "src" / "more.py").write_text("class Engine:\n    pass\nEngine().start()\n")
    alike(pair, "after an outside change")
    assert ("src/more.py", 1) in symbols_of(pair, "Engine")
    # the warm server's own change, asked about at once
    reply = pair.warm.call("file.write", {"path": "src/more.py", "content": "x = 1\n"})
    assert "result" in reply, reply
    alike(pair, "after the server's own write")
    assert ("src/more.py", 1) not in symbols_of(pair, "Engine")
    os.unlink(pair.ws / "web" / "engine.ts")
    alike(pair, "after a file is deleted")


def test_a_killed_warm_process_never_answers_from_a_kept_reply(pair: Pair) -> None:
    alike(pair, "before the kill")
    pid = pair.warm.warm_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    (pair.ws / "src" / "late.py").write_text("class Engine:\n    pass\n")
    alike(pair, "while it is dead or starting again")  # the disk walk answers
    end = time.monotonic() + 60
    while pair.warm.warm_pid() in (None, pid):  # a hang guard, not a timing check
        assert time.monotonic() < end, "the warm process never started again"
        time.sleep(0.05)
    pair.wait_warm()
    alike(pair, "once it runs again")
    assert ("src/late.py", 1) in symbols_of(pair, "Engine")


def test_the_mcp_tool_gives_the_kept_reply_as_its_structured_content(pair: Pair) -> None:
    server = pair.warm
    init = server.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "1"}})
    assert "result" in init, init
    plain = server.call("code.symbols", {"query": "Engine"})["result"]
    for _ in range(3):
        reply = server.call("tools/call", {"name": "code_symbols",
                                           "arguments": {"query": "Engine"}})["result"]
        assert reply["isError"] is False and reply["structuredContent"] == plain
        text = "".join(block["text"] for block in reply["content"])
        assert "src/engine.py" in text and "web/engine.ts" in text
