"""A server's store of reads removed under it (docs/protocol.md, The `claude` set's reads
across processes): a store untouched for 30 days is removed when a server of another
workspace opens the same --state, even while a long-idle server of its own workspace still
runs. That server then answered every Read and Write internal_error (remembering the
version failed, and the call's real result was lost). The call's result stands; what could
not be remembered must be read again (`not_read`, never a wrong success)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rpc_client import RpcServer, error_code


def test_a_read_after_its_store_was_pruned_is_still_answered(tmp_path: Path) -> None:
    ws, other, state = tmp_path / "ws", tmp_path / "other", tmp_path / "state"
    ws.mkdir()
    other.mkdir()
    (ws / "a.txt").write_text("one\n")
    with RpcServer(ws, "--tools", "claude", "--state", str(state)) as srv:
        assert "result" in srv.call("Read", {"file_path": "a.txt"})
        [store] = [p for p in state.iterdir() if p.name.startswith("reads-")]
        month_ago = time.time() - 31 * 86400
        os.utime(store, (month_ago, month_ago))
        with RpcServer(other, "--tools", "claude", "--state", str(state)) as pruner:
            assert "result" in pruner.call("rpc.discover", {})
        assert not store.exists()  # the other server's start removed it
        (ws / "a.txt").write_text("two\n")
        read = srv.call("Read", {"file_path": "a.txt"})
        assert read.get("result", {}).get("content") == "     1\ttwo", read
        written = srv.call("Write", {"file_path": "new.txt", "content": "x\n"})
        assert written.get("result", {}).get("success") is True, written
        assert (ws / "new.txt").read_text() == "x\n"
        edit = srv.call("Edit", {"file_path": "a.txt", "old_string": "two",
                                 "new_string": "2"})
        assert error_code(edit) == "not_read", edit
        assert (ws / "a.txt").read_text() == "two\n"
