"""A search pattern or glob longer than the kernel lets one argument be (MAX_ARG_STRLEN,
128 KiB) was internal_error on every search tool that runs ripgrep (file.search, claude's
Grep, gemini's grep_search, ...): the spawn failed with E2BIG. Such a query runs on the
python engine, which means the same. And a glob nesting {..} groups a thousand deep was
internal_error (expanding it recursed past Python's stack) in file.list, file.search and
claude's Glob: groups nested past 100 deep are invalid_pattern, as ripgrep itself refuses
them past about 124."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator

import pytest

from rpc_client import RpcServer

BIG = " ".join(hashlib.sha256(str(i).encode()).hexdigest()[:12] for i in range(16_000))
# 207,999 bytes: past 128 KiB; not self-similar, so the python engine finds it at once
NESTED = "{a," * 1000 + "b" + "}" * 1000


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcServer]:
    root: Path = tmp_path_factory.mktemp("ws")
    (root / "big.txt").write_text(BIG + "\n")
    (root / "small.txt").write_text("needle\n")
    with RpcServer(root, "--tools", "native,claude") as server:
        yield server


def _result(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    return reply["result"]


def test_a_pattern_past_the_bound_is_searched(srv: RpcServer) -> None:
    found = _result(srv.call("file.search", {"pattern": BIG, "literal": True,
                                             "output_mode": "files_with_matches"}))
    assert found["files"] == ["big.txt"]
    grep = _result(srv.call("Grep", {"pattern": BIG}))  # a regex of plain words
    assert grep["files"] == ["big.txt"]


@pytest.mark.long  # seconds of the default suite; CI runs it in -m long
def test_a_glob_past_the_bound_is_searched(srv: RpcServer) -> None:
    glob = "{small.txt," + "q" * 200_000 + "}"
    found = _result(srv.call("file.search", {"pattern": "needle", "glob": glob,
                                             "output_mode": "files_with_matches"}))
    assert found["files"] == ["small.txt"]
    many = ["nothing-" + "x" * 1_000 + str(i) for i in range(300)] + ["small.txt"]
    found = _result(srv.call("Grep", {"pattern": "needle", "glob": "{" + ",".join(many)
                                      + "}"}))
    assert found["files"] == ["small.txt"]


@pytest.mark.parametrize("method, params", [
    ("file.list", {"pattern": NESTED}),
    ("file.search", {"pattern": "needle", "glob": NESTED}),
    ("Glob", {"pattern": NESTED}),
    ("Grep", {"pattern": "needle", "glob": NESTED}),
])
def test_braces_nested_a_thousand_deep_are_invalid_pattern(srv: RpcServer, method: str,
                                                            params: dict[str, Any]) -> None:
    reply = srv.call(method, params)
    assert reply["error"]["data"]["error"] == "invalid_pattern", reply
    assert "deep" in reply["error"]["message"]


def test_braces_nested_a_little_still_work(srv: RpcServer) -> None:
    glob = "{x,{y,small}}.txt"
    assert _result(srv.call("Glob", {"pattern": glob}))["files"] == ["small.txt"]
    found = _result(srv.call("file.search", {"pattern": "needle", "glob": glob,
                                             "output_mode": "files_with_matches"}))
    assert found["files"] == ["small.txt"]
