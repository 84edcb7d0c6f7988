"""What the seed dialects brought into the core, called natively over the real server:
file.search's before_context/after_context, type and files_searched, file.list's
recursive, depth and exclude, all documented by rpc.discover."""

from __future__ import annotations

from typing import Iterator

import pytest

from rpc_client import RpcServer


@pytest.fixture(scope="module", params=["ripgrep", "python"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RpcServer]:
    root = tmp_path_factory.mktemp("core")
    (root / "src/deep").mkdir(parents=True)
    (root / "src/a.py").write_text("one\ntwo\nneedle\nfour\nfive\n")
    (root / "src/deep/b.rs").write_text("needle\n")
    (root / "notes.md").write_text("needle\n")
    with RpcServer(root, "--workers", "2", "--search-engine", request.param) as srv:
        yield srv


def test_search_asymmetric_context_type_and_files_searched(server: RpcServer) -> None:
    got = server.result("file.search", {"pattern": "needle", "type": "py",
                                        "before_context": 2, "after_context": 0})
    assert got["matches"] == [{"path": "src/a.py", "line": 3,
                               "content": "    one\n    two\n--> needle"}]
    assert got["files_searched"] == 1
    both = server.result("file.search", {"pattern": "needle", "type": ["py", "rust"],
                                         "context_lines": 1, "after_context": 2,
                                         "output_mode": "count"})
    assert [c["path"] for c in both["counts"]] == ["src/a.py", "src/deep/b.rs"]
    assert both["files_searched"] == 2
    every = server.result("file.search", {"pattern": "needle", "max_results": 1})
    # stopped early (docs/protocol.md, file.search): the files up to src/a.py, which holds
    # the match past max_results
    assert every["truncated"] is True and every["files_searched"] == 2
    bad = server.call("file.search", {"pattern": "x", "type": "nosuch"})["error"]["data"]
    assert (bad["error"], bad["param"]) == ("invalid_params", "type")


def test_list_recursive_depth_and_exclude(server: RpcServer) -> None:
    def paths(**params: object) -> list[str]:
        return [f["path"] for f in server.result("file.list", params)["files"]]
    assert paths(recursive=True) == ["notes.md", "src", "src/a.py", "src/deep",
                                     "src/deep/b.rs"]
    assert paths(recursive=True, depth=2) == ["notes.md", "src", "src/a.py", "src/deep"]
    assert paths(pattern="**/*.*", exclude=["deep", "*.md"]) == ["src/a.py"]
    bad = server.call("file.list", {"depth": 0})["error"]["data"]
    assert (bad["error"], bad["param"]) == ("invalid_params", "depth")


def test_discover_documents_the_additions(server: RpcServer) -> None:
    methods = {m["name"]: m for m in server.result("rpc.discover")["methods"]}
    search = {p["name"]: p for p in methods["file.search"]["params"]}
    listing = {p["name"]: p for p in methods["file.list"]["params"]}
    assert {"before_context", "after_context", "type"} <= set(search)
    assert listing["recursive"]["schema"]["default"] is False
    assert {"depth", "exclude"} <= set(listing)
    result = methods["file.search"]["result"]["schema"]
    assert "files_searched" in result["required"]
