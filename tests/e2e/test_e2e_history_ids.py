"""Versions and checkpoints are opaque ids (docs/protocol.md, History): only the very
string the server gave out names one.

Bug: the ids were read back with int(), so `h-0 `, `h-00` and `h-+0` restored version
`h-0`, and `cp-00 ` rewound to checkpoint `cp-0`: a mangled id did something instead of
being refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_client import RpcServer, error_code


@pytest.mark.parametrize("mangle", [" {}", "{} ", "0{}", "+{}", "{}\n"])
def test_only_the_exact_id_given_out_names_a_version_or_a_checkpoint(
        tmp_path: Path, mangle: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("then\n")
    with RpcServer(ws, "--workers", "1", "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.write", {"path": "a.txt", "content": "now\n"})
        version = server.result("file.history", {"path": "a.txt"})["versions"][0]["version"]
        kind, _, number = version.partition("-")
        bad = f"{kind}-{mangle.format(number)}"
        assert error_code(server.call("file.restore", {"path": "a.txt", "version": bad})) \
            == "invalid_params"
        kind, _, number = cp.partition("-")
        bad_cp = f"{kind}-{mangle.format(number)}"
        assert error_code(server.call("workspace.rewind", {"checkpoint": bad_cp})) == \
            "invalid_params"
        assert (ws / "a.txt").read_text() == "now\n"
        assert server.result("file.restore", {"path": "a.txt", "version": version})
    assert (ws / "a.txt").read_text() == "then\n"
