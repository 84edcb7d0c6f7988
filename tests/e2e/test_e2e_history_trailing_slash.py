"""A history path ending in '/' names a directory (docs/protocol.md, Paths).

Bug: `file.history {"path": "a.txt/"}` listed the versions of the file a.txt, where
file.read and file.info of a file through such a path are not_a_directory (and
file.restore, a write, is_directory, as it was already).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_client import RpcServer, error_code


@pytest.mark.parametrize("suffix", ["/", "/."])
def test_a_file_named_as_a_directory_has_no_history_to_list(tmp_path: Path,
                                                            suffix: str) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "a.txt").write_text("then\n")
    with RpcServer(ws, "--workers", "1", "--history", str(tmp_path / "hist")) as server:
        server.result("file.write", {"path": "d/a.txt", "content": "now\n"})
        version = server.result("file.history", {"path": "d/a.txt"})["versions"][0]
        path = "d/a.txt" + suffix
        assert error_code(server.call("file.history", {"path": path})) == "not_a_directory"
        assert error_code(server.call("file.read", {"path": path})) == "not_a_directory"
        assert error_code(server.call("file.restore", {"path": path,
                                                       "version": version["version"]})) \
            == "is_directory"
        assert server.result("file.history", {"path": "d/"})["versions"] == []
    assert (ws / "d" / "a.txt").read_text() == "now\n"
