"""Audit records over the real server (docs/protocol.md, Audit records): one JSON line in
DIR/records.jsonl per mutating call (write, patch not in dry-run, delete), failures and
invalid_params included, none for read/list/search/info; each line on disk before its
response arrives, with hashes that match the real bytes before and after the call.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rpc_client import REPO, RpcServer, error_code

ISO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
FIELDS = {"time", "id", "method", "path", "outcome", "bytes", "sha256_before",
          "sha256_after"}


def sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Audited:
    """A server with --records, and the expectation of one line per mutating call."""

    def __init__(self, tmp: Path) -> None:
        self.ws = tmp / "ws"
        self.ws.mkdir()
        self.dir = tmp / "records"
        self.file = self.dir / "records.jsonl"
        self.server = RpcServer(self.ws, "--workers", "2", "--records", str(self.dir))
        self.seen = 0

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(ln) for ln in self.file.read_text().splitlines()]

    def content(self, path: str) -> bytes | None:
        target = self.ws / path
        return target.read_bytes() if target.is_file() else None

    def call(self, method: str, params: Any, *, recorded: bool = True,
             before: bytes | None = None, after: bytes | None = None) -> dict[str, Any]:
        """Call, then check the record is already there (or that none was added)."""
        reply = self.server.call(method, params)
        lines = self.lines() if self.file.exists() else []
        if not recorded:
            assert len(lines) == self.seen, (method, params, lines[self.seen:])
            return reply
        assert len(lines) == self.seen + 1, (method, params, reply)
        self.seen += 1
        rec = lines[-1]
        assert set(rec) == FIELDS and ISO_Z.fullmatch(rec["time"]), rec
        assert rec["id"] == reply["id"] and rec["method"] == method, rec
        given = params.get("path") if isinstance(params, dict) else None
        assert rec["path"] == given, rec
        assert rec["outcome"] == (error_code(reply) or "ok"), (rec, reply)
        assert (rec["sha256_before"], rec["sha256_after"]) == (sha(before), sha(after)), rec
        return rec


@pytest.fixture
def audited(tmp_path: Path):
    a = Audited(tmp_path)
    with a.server:
        yield a
    assert not any(n == "records.jsonl" for _, _, names in os.walk(a.ws) for n in names)


def test_every_mutating_call_is_recorded_with_true_hashes(audited: Audited) -> None:
    a = audited
    one, two = "hello\n".encode(), "hello, world\n".encode()
    rec = a.call("file.write", {"path": "a.txt", "content": "hello\n"}, after=one)
    assert rec["bytes"] == len(one)
    rec = a.call("file.write", {"path": "a.txt", "content": "hello, world\n"},
                 before=one, after=two)
    assert rec["bytes"] == len(two)
    rec = a.call("file.write", {"path": "a.txt", "content": "hello, world\n"},
                 before=two, after=two)  # identical: nothing written, still recorded
    patched = "hello, patched\n".encode()
    rec = a.call("file.patch", {"path": "a.txt", "patches": [
        {"find": "world", "replace": "patched"}]}, before=two, after=patched)
    assert rec["bytes"] == len(patched) and a.content("a.txt") == patched
    a.call("file.patch", {"path": "a.txt", "patches": [{"find": "hello", "replace": "x"}],
                          "dry_run": True}, recorded=False)
    rec = a.call("file.patch", {"path": "new.txt", "patches": [
        {"find": "", "replace": "created\n"}]}, after=b"created\n")
    assert rec["bytes"] == len(b"created\n")
    rec = a.call("file.delete", {"path": "a.txt"}, before=patched)
    assert rec["bytes"] == len(patched) and a.content("a.txt") is None
    unicode = "héllo ✓\n"
    rec = a.call("file.write", {"path": "d/u.txt", "content": unicode},
                 after=unicode.encode())
    assert rec["bytes"] == len(unicode.encode())


def test_failures_are_recorded_with_their_code(audited: Audited) -> None:
    a = audited
    (a.ws / "f.txt").write_bytes(b"keep\n")
    keep = b"keep\n"
    for method, params, before, after in [
        ("file.patch", {"path": "f.txt", "patches": [{"find": "nope", "replace": "x"}]},
         keep, keep),
        ("file.write", {"path": "f.txt", "content": "x", "overwrite": False}, keep, keep),
        ("file.write", {"path": "f.txt", "content": "x", "expected_version": "0-0-0"},
         keep, keep),
        ("file.delete", {"path": "missing.txt"}, None, None),
        ("file.patch", {"path": "missing.txt", "patches": [{"find": "a", "replace": "b"}]},
         None, None),
        ("file.write", {"path": "../escape.txt", "content": "x"}, None, None),
        ("file.delete", {"path": "/etc/passwd"}, None, None),
        ("file.delete", {"path": "."}, None, None),
    ]:
        rec = a.call(method, params, before=before, after=after)
        assert rec["outcome"] != "ok" and rec["bytes"] == 0, rec
    assert a.content("f.txt") == keep
    assert not (a.ws.parent / "escape.txt").exists()


def test_invalid_params_are_recorded(audited: Audited) -> None:
    a = audited
    for method, params in [
        ("file.write", {"path": "x.txt"}),  # no content
        ("file.write", {"path": "x.txt", "content": "x", "bogus": 1}),
        ("file.write", {"path": 7, "content": "x"}),
        ("file.write", {"content": "x"}),
        ("file.delete", {"path": ""}),
        ("file.delete", {"path": "a\x00b"}),
        ("file.patch", {"path": "x.txt", "patches": []}),
        ("file.patch", {"path": "x.txt", "patches": [{"find": "a", "replace": "a"}]}),
        ("file.write", ["x.txt", "by position"]),
    ]:
        rec = a.call(method, params)
        assert rec["outcome"] == "invalid_params" and rec["bytes"] == 0, rec
    assert not (a.ws / "x.txt").exists()


def test_patch_with_non_boolean_dry_run_is_recorded_as_invalid_params(audited: Audited) -> None:
    """Regression: a truthy non-boolean dry_run ("yes", 1) was taken for a dry run and
    left unaudited, though the call was refused as invalid_params, which is recorded
    (docs/protocol.md, "Audit records")."""
    for value in ("yes", 1, "false"):
        rec = audited.call("file.patch", {"path": "x.txt", "dry_run": value, "patches": [
            {"find": "a", "replace": "b"}]})
        assert rec["outcome"] == "invalid_params", rec


def test_no_record_for_reads(audited: Audited) -> None:
    a = audited
    (a.ws / "r.txt").write_text("read me\n")
    for method, params in [
        ("file.read", {"path": "r.txt"}),
        ("file.read", {"path": "missing"}),
        ("file.list", {}),
        ("file.search", {"pattern": "read"}),
        ("file.info", {"path": "r.txt"}),
        ("file.info", {"path": 5}),
        ("rpc.discover", {}),
    ]:
        a.call(method, params, recorded=False)


def test_concurrent_mutations_each_get_one_whole_line(audited: Audited) -> None:
    a = audited
    calls = [("file.write", {"path": f"c/{i}.txt", "content": "x" * i}) for i in range(60)]
    calls += [("file.delete", {"path": f"c/{i}.txt"}) for i in range(0, 60, 3)]
    replies = a.server.call_many(calls)
    records = a.lines()
    assert len(records) == len(calls)
    by_id = {r["id"]: r for r in records}
    for (method, params), reply in zip(calls, replies):
        rec = by_id[reply["id"]]
        assert (rec["method"], rec["path"]) == (method, params["path"])
        assert rec["outcome"] == (error_code(reply) or "ok")


def test_records_dir_inside_the_workspace_is_refused_at_start(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    os.symlink(ws / "sub", tmp_path / "sneaky")
    for records in (ws, ws / "sub", ws / "new", tmp_path / "sneaky"):
        run = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                              "--records", str(records)], cwd=REPO, input=b"",
                             capture_output=True, timeout=30)
        assert run.returncode == 2, (records, run)
        assert run.stdout == b"" and len(run.stderr.decode().strip().splitlines()) == 1
    assert not any(n == "records.jsonl" for _, _, names in os.walk(ws) for n in names)


def test_a_call_refused_before_it_read_the_file_records_the_file_as_it_is(
        audited: Audited) -> None:
    """Regression: calls refused as invalid_params (by the schema) or over a limit never
    read the file, and their records said null hashes for a file that existed."""
    a = audited
    a.call("file.write", {"path": "a.txt", "content": "kept\n"}, after=b"kept\n")
    for params in ({"path": "a.txt", "content": 5},
                   {"path": "a.txt", "content": "x", "bogus": 1},
                   {"path": "a.txt", "patches": []}):
        method = "file.patch" if "patches" in params else "file.write"
        a.call(method, params, before=b"kept\n", after=b"kept\n")
    a.call("file.delete", {"path": "absent.txt"})
