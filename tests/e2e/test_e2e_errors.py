"""The error model on the wire (docs/protocol.md, Errors), table-driven: each failure an
agent can provoke gets its numeric code and its data.error name, data repeats the message,
and a path in data is the path as the client gave it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from e2e_support import E2EServer, error_of

MAX_WRITE = 1000

SPEC_CODES = {
    "invalid_params": -32602, "path_outside_workspace": -32001, "file_not_found": -32002,
    "is_directory": -32003, "not_a_directory": -32004, "not_a_regular_file": -32005,
    "binary_file": -32006, "file_too_large": -32007, "already_exists": -32008,
    "conflict": -32009, "permission_denied": -32010, "find_not_found": -32011,
    "find_not_unique": -32012, "invalid_pattern": -32013, "write_failed": -32014,
    "timeout": -32015, "worker_crashed": -32016, "server_busy": -32017, "not_read": -32018,
    "edit_breaks_syntax": -32019, "unsupported_language": -32023, "symbol_not_found": -32024,
    "symbol_not_unique": -32025, "quota_exceeded": -32026, "shutting_down": -32027,
    "upload_not_found": -32028, "verification_failed": -32029, "cancelled": -32800,
    "internal_error": -32603,
}

# Provoked elsewhere, where the situation they need is set up, or not provokable at all.
ELSEWHERE = {
    "timeout": "test_e2e_pool.py", "worker_crashed": "test_e2e_pool.py",
    "server_busy": "test_e2e_pool.py", "cancelled": "test_e2e_lifecycle.py",
    "write_failed": "needs an I/O error such as ENOSPC or EIO from the file system",
    "internal_error": "needs a bug",
    "not_read": "test_dialect_claude.py (a claude-set session)",
    "edit_breaks_syntax": "test_patch_kinds_e2e.py (a parsed file, a looser-tier patch)",
    "symbol_not_found": "code.edit's own tests", "symbol_not_unique": "code.edit's own tests",
    "quota_exceeded": "test_e2e_quota.py (a server started with a quota)",
    "shutting_down": "test_e2e_drain.py (a server draining after SIGTERM)",
    "upload_not_found": "test_e2e_bytes.py (an upload's own tests)",
    "verification_failed": "test_e2e_bytes.py (an upload's own tests)",
}

CASES = [
    ("unsupported_language", "code.outline", {"path": "a.txt"}),
    ("invalid_params", "file.read", {}),
    ("invalid_params", "file.read", {"path": "a.txt", "bogus": 1}),
    ("invalid_params", "file.read", {"path": "a.txt", "offset": "1"}),
    ("invalid_params", "file.read", {"path": "a.txt", "offset": 0}),
    ("invalid_params", "file.read", {"path": ""}),
    ("invalid_params", "file.read", {"path": "a\x00b"}),
    ("invalid_params", "file.write", {"path": "new.txt"}),
    ("invalid_params", "file.patch", {"path": "a.txt", "patches": []}),
    ("invalid_params", "file.patch", {"path": "a.txt",
                                      "patches": [{"find": "alpha", "replace": "alpha"}]}),
    ("invalid_params", "file.list", {"sort": "name"}),
    ("invalid_params", "file.search", {"pattern": "a", "output_mode": "lines"}),
    ("invalid_params", "rpc.discover", {"verbose": True}),
    ("path_outside_workspace", "file.read", {"path": "../outside/canary.txt"}),
    ("path_outside_workspace", "file.read", {"path": "/etc/passwd"}),
    ("path_outside_workspace", "file.read", {"path": "escape"}),
    ("path_outside_workspace", "file.read", {"path": "absolute_inside"}),
    ("path_outside_workspace", "file.write", {"path": "escape", "content": "x"}),
    ("path_outside_workspace", "file.list", {"path": ".."}),
    ("path_outside_workspace", "file.info", {"path": "dir/../../x"}),
    ("file_not_found", "file.read", {"path": "missing.txt"}),
    ("file_not_found", "file.delete", {"path": "missing.txt"}),
    ("file_not_found", "file.info", {"path": "missing/deeper.txt"}),
    ("file_not_found", "file.write", {"path": "missing/x.txt", "content": "x",
                                      "create_dirs": False}),
    ("is_directory", "file.read", {"path": "dir"}),
    ("is_directory", "file.delete", {"path": "dir"}),
    ("is_directory", "file.write", {"path": "dir", "content": "x"}),
    ("not_a_directory", "file.list", {"path": "a.txt"}),
    ("not_a_directory", "file.read", {"path": "a.txt/x"}),
    ("not_a_directory", "file.write", {"path": "a.txt/x", "content": "x"}),
    ("not_a_regular_file", "file.read", {"path": "fifo"}),
    ("not_a_regular_file", "file.write", {"path": "fifo", "content": "x"}),
    ("not_a_regular_file", "file.patch", {"path": "fifo",
                                          "patches": [{"find": "a", "replace": "b"}]}),
    ("binary_file", "file.read", {"path": "bin.dat"}),
    ("binary_file", "file.patch", {"path": "bin.dat",
                                   "patches": [{"find": "a", "replace": "b"}]}),
    ("file_too_large", "file.write", {"path": "big.txt", "content": "x" * (MAX_WRITE + 1)}),
    ("already_exists", "file.write", {"path": "a.txt", "content": "x", "overwrite": False}),
    ("conflict", "file.write", {"path": "a.txt", "content": "x", "expected_version": "old"}),
    ("conflict", "file.patch", {"path": "a.txt", "expected_version": "old",
                                "patches": [{"find": "alpha", "replace": "omega"}]}),
    ("permission_denied", "file.delete", {"path": "locked/kept.txt"}),
    ("find_not_found", "file.patch", {"path": "a.txt",
                                      "patches": [{"find": "gamma", "replace": "x"}]}),
    ("find_not_unique", "file.patch", {"path": "dup.txt",
                                       "patches": [{"find": "same", "replace": "x"}]}),
    ("invalid_pattern", "file.search", {"pattern": "("}),
    ("invalid_pattern", "file.search", {"pattern": "a\\nb"}),
]


def _lock(directory: Path, on: bool) -> None:
    """Make the OS refuse changes inside `directory`, even to root."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i" if on else "-i", str(directory)], check=True)
    else:
        directory.chmod(0o555 if on else 0o755)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> E2EServer:
    base = tmp_path_factory.mktemp("errors")
    (base / "outside").mkdir()
    (base / "outside" / "canary.txt").write_text("CANARY\n")
    root = base / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "dup.txt").write_text("same\nother\nsame\n")
    (root / "bin.dat").write_bytes(b"a\x00b" * 100)
    (root / "dir").mkdir()
    os.mkfifo(root / "fifo")
    (root / "escape").symlink_to("../outside/canary.txt")
    (root / "absolute_inside").symlink_to(root / "a.txt")
    (root / "locked").mkdir()
    (root / "locked" / "kept.txt").write_text("kept\n")
    _lock(root / "locked", True)
    try:
        with E2EServer(root, "--workers", "2", "--max-write-bytes", str(MAX_WRITE)) as s:
            s.root = root
            yield s
    finally:
        _lock(root / "locked", False)


@pytest.mark.parametrize("name,method,params", CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_error_code_and_name(server: E2EServer, name: str, method: str, params: dict) -> None:
    reply = server.call(method, params)
    assert error_of(reply) == (SPEC_CODES[name], name), reply
    error = reply["error"]
    assert error["data"]["message"] == error["message"] and error["message"].strip()
    if "path" in error["data"] and "path" in params:
        assert error["data"]["path"] == params["path"]


def test_details_named_by_the_spec(server: E2EServer) -> None:
    data = server.error("file.read", {"path": "bin.dat"})["data"]
    assert data["size"] == 300 and data["mime_type"]
    data = server.error("file.write", {"path": "big.txt", "content": "x" * 2000})["data"]
    assert (data["size"], data["limit"]) == (2000, MAX_WRITE)
    data = server.error("file.patch", {"path": "dup.txt", "patches": [
        {"find": "other", "replace": "x"}, {"find": "same", "replace": "y"}]})["data"]
    assert (data["patch_index"], data["count"], data["lines"]) == (1, 2, [1, 3])
    data = server.error("file.patch", {"path": "a.txt", "patches": [
        {"find": "alpha\nbeta!", "replace": "x"}]})["data"]
    assert data["patch_index"] == 0 and data["hint"]["start_line"] == 1
    assert server.error("file.read", {"path": "a.txt", "bogus": 1})["data"]["param"] == "bogus"


def test_failures_leave_the_files_alone(server: E2EServer) -> None:
    root: Path = server.root
    assert (root / "a.txt").read_text() == "alpha\nbeta\n"
    assert (root / "dup.txt").read_text() == "same\nother\nsame\n"
    assert (root / "locked" / "kept.txt").read_text() == "kept\n"
    assert not (root / "big.txt").exists() and not (root / "new.txt").exists()


def test_the_table_covers_every_error_of_the_spec() -> None:
    covered = {name for name, _, _ in CASES} | set(ELSEWHERE)
    assert covered == set(SPEC_CODES)


def test_rpc_discover_lists_the_spec_error_table(server: E2EServer) -> None:
    doc = server.result("rpc.discover")
    errors = doc["components"]["errors"]
    assert {name: e["code"] for name, e in errors.items()} == SPEC_CODES
