"""docs/protocol.md, History, over the real server: every mutation keeps what it replaced,
file.history lists it, file.restore puts it back byte for byte, workspace.rewind undoes
every change since a checkpoint (conflicts, force, dry run), under the byte budget,
across restarts, and a server killed mid-rewind leaves no torn file and the next rewind
completes it."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rewind_support import changed_since_checkpoint, kill_mid_rewind
from rpc_client import REPO, RpcServer, error_code

ORIGINAL = b"\xef\xbb\xbfcaf\xc3\xa9 one\r\nline two\r\n"  # a BOM, CRLF, non-ASCII
UTF16 = "h\u00e9llo\r\nw\u00f6rld\r\n".encode("utf-16")  # a BOM of its own


@pytest.fixture
def hist(tmp_path: Path) -> Path:
    return tmp_path / "history"


def serve(root: Path, hist: Path, *args: str) -> RpcServer:
    return RpcServer(root, "--history", str(hist), "--workers", "2", *args)


def files(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file beneath `root`: its bytes and permission bits."""
    out = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = (path.read_bytes(),
                                                      path.stat().st_mode & 0o7777)
    return out


def restore_first(srv: RpcServer, path: str) -> dict[str, Any]:
    """Restore the newest kept version of `path` that held a file."""
    versions = srv.result("file.history", {"path": path})["versions"]
    version = next(v for v in versions if v["exists"])
    return srv.result("file.restore", {"path": path, "version": version["version"]})


def seed(root: Path, name: str = "a.txt", data: bytes = ORIGINAL, mode: int = 0o640) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    return path


# every mutating method, then restore: the exact bytes and mode come back ----------------

NATIVE: dict[str, Callable[[RpcServer, Path], Any]] = {
    "file.write": lambda s, _: s.result("file.write", {"path": "a.txt", "content": "new\n"}),
    "file.patch": lambda s, _: s.result("file.patch", {"path": "a.txt", "patches": [
        {"find": "line two", "replace": "line 2"}]}),
    "file.delete": lambda s, _: s.result("file.delete", {"path": "a.txt"}),
    "file.move": lambda s, _: s.result("file.move", {"source": "a.txt", "destination": "b.txt"}),
    "file.move onto": lambda s, root: (seed(root, "c.txt", b"other", 0o600),
                                 s.result("file.move", {"source": "c.txt",
                                                        "destination": "a.txt",
                                                        "overwrite": True})),
}


@pytest.mark.parametrize("change", list(NATIVE))
def test_every_native_mutation_then_restore_gives_the_exact_bytes_back(
        root: Path, hist: Path, change: str) -> None:
    seed(root)
    with serve(root, hist) as srv:
        NATIVE[change](srv, root)
        assert (root / "a.txt").exists() == (change in ("file.write", "file.patch",
                                                        "file.move onto"))
        restore_first(srv, "a.txt")
    assert (root / "a.txt").read_bytes() == ORIGINAL
    assert (root / "a.txt").stat().st_mode & 0o777 == 0o640


def test_a_utf16_file_and_a_big_file_come_back_exactly(root: Path, hist: Path) -> None:
    """UTF-16 with its BOM, and content over the inline limit (streamed through the
    spool, not held by the worker)."""
    seed(root, "u.txt", UTF16, 0o600)
    big = os.urandom(3 << 20)
    seed(root, "big.bin", big, 0o755)
    with serve(root, hist) as srv:
        srv.result("file.write", {"path": "u.txt", "content": "plain"})
        srv.result("file.write", {"path": "big.bin", "content": "small now"})
        history = srv.result("file.history", {"path": "big.bin"})["versions"]
        assert history[0]["bytes"] == len(big) and not history[0]["evicted"]
        restore_first(srv, "u.txt")
        restore_first(srv, "big.bin")
    assert (root / "u.txt").read_bytes() == UTF16
    assert (root / "big.bin").read_bytes() == big
    assert (root / "big.bin").stat().st_mode & 0o777 == 0o755
    assert list((hist / "spool").iterdir()) == []  # spools are unlinked at once


def test_a_moved_and_a_deleted_directory_come_back_file_by_file(root: Path,
                                                                 hist: Path) -> None:
    seed(root, "d/x.txt", b"x\r\n", 0o600)
    seed(root, "d/sub/y.bin", b"\0\1\2", 0o644)
    seed(root, "e/z.txt", b"zzz", 0o644)
    with serve(root, hist) as srv:
        srv.result("file.move", {"source": "d", "destination": "moved"})
        srv.result("dir.delete", {"path": "e", "recursive": True})
        moved = srv.result("file.history", {"path": "d/sub/y.bin"})["versions"][0]
        assert moved["method"] == "file.move" and moved["moved_to"] == "moved/sub/y.bin"
        for path in ("d/x.txt", "d/sub/y.bin", "e/z.txt"):
            restore_first(srv, path)
    assert files(root)["d/x.txt"] == (b"x\r\n", 0o600)
    assert files(root)["d/sub/y.bin"] == (b"\0\1\2", 0o644)
    assert files(root)["e/z.txt"] == (b"zzz", 0o644)


DIALECTS: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
    ("claude", [("Read", {"file_path": "a.txt"}),
                ("Write", {"file_path": "a.txt", "content": "w"})]),
    ("claude", [("Read", {"file_path": "a.txt"}),
                ("Edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"})]),
    ("claude", [("Read", {"file_path": "a.txt"}),
                ("MultiEdit", {"file_path": "a.txt", "edits": [
                    {"old_string": "one", "new_string": "1"}]})]),
    ("claude", [("Delete", {"file_path": "a.txt"})]),
    ("scope", [("write_file", {"path": "a.txt", "content": "s", "encoding": "utf-16-le"})]),
    ("shadow", [("Write", {"file_path": "a.txt", "content": "w", "overwrite": True})]),
    ("shadow", [("Edit", {"file_path": "a.txt", "old": "two", "new": "2"})]),
]


@pytest.mark.parametrize(("toolset", "calls"), DIALECTS,
                         ids=[f"{t}-{c[-1][0]}" for t, c in DIALECTS])
def test_every_tool_sets_writer_then_restore_gives_the_exact_bytes_back(
        root: Path, hist: Path, toolset: str, calls: list[tuple[str, dict[str, Any]]]
        ) -> None:
    seed(root)
    with serve(root, hist, "--tools", toolset) as srv:
        for method, params in calls:
            srv.result(method, params)
        assert files(root).get("a.txt") != (ORIGINAL, 0o640)
        assert srv.result("file.history", {"path": "a.txt"})["versions"][0]["method"] == \
            calls[-1][0]
        restore_first(srv, "a.txt")
    assert files(root)["a.txt"] == (ORIGINAL, 0o640)


def test_a_restore_is_recorded_and_itself_undoable(root: Path, hist: Path,
                                                   tmp_path: Path) -> None:
    seed(root)
    records = tmp_path / "records"
    with serve(root, hist, "--records", str(records)) as srv:
        srv.result("file.write", {"path": "a.txt", "content": "second"})
        restore_first(srv, "a.txt")
        assert (root / "a.txt").read_bytes() == ORIGINAL
        top = srv.result("file.history", {"path": "a.txt"})["versions"][0]
        assert top["method"] == "file.restore" and top["bytes"] == len("second")
        srv.result("file.restore", {"path": "a.txt", "version": top["version"]})
        assert (root / "a.txt").read_bytes() == b"second"
        cp = srv.result("workspace.checkpoint", {"label": "x"})["checkpoint"]
        srv.result("file.write", {"path": "a.txt", "content": "third"})
        srv.result("workspace.rewind", {"checkpoint": cp})
    lines = [json.loads(line) for line in (records / "records.jsonl").read_text().splitlines()]
    methods = [line["method"] for line in lines]
    assert methods.count("file.restore") == 2 and "workspace.rewind" in methods
    restore = next(line for line in lines if line["method"] == "file.restore")
    assert restore["outcome"] == "ok" and restore["path"] == "a.txt"


def test_restoring_a_deleted_file_and_a_creation(root: Path, hist: Path) -> None:
    """A deleted file reappears; the version that says 'no file' removes it again."""
    with serve(root, hist) as srv:
        srv.result("file.write", {"path": "n.txt", "content": "made"})
        srv.result("file.delete", {"path": "n.txt"})
        versions = srv.result("file.history", {"path": "n.txt"})["versions"]
        assert [v["exists"] for v in versions] == [True, False]
        srv.result("file.restore", {"path": "n.txt", "version": versions[0]["version"]})
        assert (root / "n.txt").read_bytes() == b"made"
        got = srv.result("file.restore", {"path": "n.txt", "version": versions[1]["version"]})
        assert got == {"success": True, "version": None}
        assert not (root / "n.txt").exists()


def test_restore_refuses_a_stale_expected_version_and_a_foreign_version(
        root: Path, hist: Path) -> None:
    seed(root)
    seed(root, "b.txt", b"b")
    with serve(root, hist) as srv:
        srv.result("file.write", {"path": "a.txt", "content": "x"})
        srv.result("file.write", {"path": "b.txt", "content": "y"})
        version = srv.result("file.history", {"path": "a.txt"})["versions"][0]["version"]
        stale = srv.error("file.restore", {"path": "a.txt", "version": version,
                                            "expected_version": "0-0-0"})
        assert stale["data"]["error"] == "conflict"
        foreign = srv.error("file.restore", {"path": "b.txt", "version": version})
        assert foreign["data"]["error"] == "invalid_params"
        assert foreign["data"]["param"] == "version"
    assert (root / "a.txt").read_bytes() == b"x" and (root / "b.txt").read_bytes() == b"y"


# rewind ---------------------------------------------------------------------------------

def _mixed_changes(srv: RpcServer, root: Path, rng: random.Random, count: int) -> None:
    """`count` random mutations (write, patch, delete, move, recursive dir.delete) over a
    small tree of paths."""
    names = [f"d{i % 3}/f{i}.txt" for i in range(12)]
    done = 0
    while done < count:
        present = sorted(p for p in files(root) if p.startswith("d"))
        kind = rng.choice(["write", "write", "patch", "delete", "move", "dirdel"])
        text = (root / present[0]).read_bytes().decode() if present else ""
        if kind == "patch" and text:
            srv.result("file.patch", {"path": present[0], "patches": [
                {"find": text.splitlines(keepends=True)[0], "replace": f"p{done}\n",
                 "replace_all": True}]})
        elif kind == "delete" and present:
            srv.result("file.delete", {"path": rng.choice(present)})
        elif kind == "move" and present:
            source = rng.choice(present)
            srv.result("file.move", {"source": source, "overwrite": True, "destination":
                                     rng.choice([n for n in names if n != source])})
        elif kind == "dirdel" and any(p.startswith("d2/") for p in present):
            srv.result("dir.delete", {"path": "d2", "recursive": True})
        else:
            srv.result("file.write", {"path": rng.choice(names),
                                      "content": f"v{done}\r\n" * rng.randint(0, 40)})
        done += 1


def test_rewind_across_fifty_mixed_changes_restores_the_tree_byte_for_byte(
        root: Path, hist: Path) -> None:
    rng = random.Random(23)
    for i in range(6):
        text = "".join(rng.choice("ab \u00e9\r\n") for _ in range(200)).encode()
        seed(root, f"d{i % 3}/f{i}.txt", text, rng.choice([0o600, 0o644]))
    with serve(root, hist) as srv:
        _mixed_changes(srv, root, rng, 10)  # history from before the checkpoint too
        then = files(root)
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
        _mixed_changes(srv, root, rng, 50)
        assert files(root) != then
        preview = srv.result("workspace.rewind", {"checkpoint": cp, "dry_run": True})
        assert preview["diff"] and files(root) != then  # a dry run changes nothing
        done = srv.result("workspace.rewind", {"checkpoint": cp})
        assert done["conflicts"] == [] and set(done["restored"]) == set(preview["restored"])
    assert files(root) == then
    assert set(done["deleted"]).isdisjoint(then)


def test_a_file_changed_by_someone_else_is_a_conflict_left_alone_unless_forced(
        root: Path, hist: Path) -> None:
    seed(root, "mine.txt", b"mine 0")
    seed(root, "theirs.txt", b"theirs 0")
    with serve(root, hist) as srv:
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
        srv.result("file.write", {"path": "mine.txt", "content": "mine 1"})
        srv.result("file.write", {"path": "theirs.txt", "content": "theirs 1"})
        (root / "theirs.txt").write_bytes(b"edited outside")  # another process
        got = srv.result("workspace.rewind", {"checkpoint": cp})
        assert got["conflicts"] == ["theirs.txt"] and got["restored"] == ["mine.txt"]
        assert (root / "mine.txt").read_bytes() == b"mine 0"
        assert (root / "theirs.txt").read_bytes() == b"edited outside"
        forced = srv.result("workspace.rewind", {"checkpoint": cp, "force": True})
        assert forced["restored"] == ["theirs.txt"] and forced["conflicts"] == []
    assert (root / "theirs.txt").read_bytes() == b"theirs 0"


def test_history_and_checkpoints_survive_a_restart(root: Path, hist: Path) -> None:
    seed(root)
    with serve(root, hist) as srv:
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
        srv.result("file.write", {"path": "a.txt", "content": "changed"})
        srv.result("file.write", {"path": "new.txt", "content": "created"})
    with serve(root, hist) as srv:
        assert srv.result("file.history", {"path": "a.txt"})["versions"][0]["bytes"] == \
            len(ORIGINAL)
        got = srv.result("workspace.rewind", {"checkpoint": cp})
        assert got["deleted"] == ["new.txt"] and got["restored"] == ["a.txt"]
    assert files(root) == {"a.txt": (ORIGINAL, 0o640)}


@pytest.mark.long  # seconds of the default suite; CI runs it in -m long
def test_a_server_killed_mid_rewind_leaves_no_torn_file_and_the_next_rewind_completes(
        root: Path, hist: Path) -> None:
    count, size = 200, 100_000
    before = {f"f{i:03}.bin": os.urandom(size) for i in range(count)}
    cp = changed_since_checkpoint(root, hist, before, lambda name: f"after {name}\n" * 5000,
                                  "--workers", "2")
    after = {name: (root / name).read_bytes() for name in before}
    kill_mid_rewind(root, hist, cp, before, "--workers", "2")
    states = [(root / n).read_bytes() in (before[n], after[n]) for n in before]
    assert all(states), "a file is neither as before nor as restored"
    assert any((root / n).read_bytes() == after[n] for n in before), "killed too late"
    assert (hist / "rewind.json").exists()
    with serve(root, hist, "--read-only") as srv:  # refused: the journal stays for later
        assert error_code(srv.call("workspace.rewind", {"checkpoint": cp})) == \
            "permission_denied"
    assert (hist / "rewind.json").exists()
    with serve(root, hist) as srv:
        srv.result("workspace.rewind", {"checkpoint": cp})
    assert {n: (root / n).read_bytes() for n in before} == before
    assert not (hist / "rewind.json").exists()


# the byte budget ------------------------------------------------------------------------

def test_the_byte_budget_evicts_the_oldest_first_and_file_history_says_so(
        root: Path, hist: Path) -> None:
    with serve(root, hist, "--history-bytes", "25000") as srv:
        for n in range(5):
            srv.result("file.write", {"path": "a.txt", "content": str(n) * 10_000})
        got = srv.result("file.history", {"path": "a.txt"})
        kept = [v["evicted"] for v in got["versions"]]
        # newest first: the creation (no content), then 0..3 of 10 kB each; 2 fit
        assert kept == [False, False, True, True, False]
        assert got["evicted"] == 2
        oldest = got["versions"][3]["version"]
        err = srv.error("file.restore", {"path": "a.txt", "version": oldest})
        assert err["data"]["error"] == "invalid_params" and err["data"]["evicted"] is True
    stored = sum(p.stat().st_size for p in (hist / "packs").iterdir())
    assert stored <= 25000


def test_unchanged_content_is_stored_once(root: Path, hist: Path) -> None:
    with serve(root, hist) as srv:
        for n in range(6):
            srv.result("file.write", {"path": "a.txt", "content": "ab"[n % 2] * 1000})
    assert sum(p.stat().st_size for p in (hist / "packs").iterdir()) == 2000


# refusals -------------------------------------------------------------------------------

def test_a_history_directory_inside_the_workspace_is_refused_at_start(root: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(root),
                           "--history", str(root / "h")], cwd=REPO, capture_output=True,
                          check=False,
                          stdin=subprocess.DEVNULL, timeout=30)
    assert proc.returncode == 2 and b"inside the workspace" in proc.stderr
    assert not (root / "h").exists()


@pytest.mark.parametrize("path", ["../outside/canary.txt", "/etc/passwd", "link/x.txt",
                                  "ln.txt", "a/../../x"])
def test_a_traversal_or_symlink_in_any_parameter_is_refused(
        root: Path, hist: Path, outside: Path, path: str) -> None:
    seed(root, "real/x.txt", b"x")
    (root / "link").symlink_to("real")
    (root / "ln.txt").symlink_to("real/x.txt")
    with serve(root, hist) as srv:
        srv.result("file.write", {"path": "real/x.txt", "content": "y"})
        version = srv.result("file.history", {"path": "real/x.txt"})["versions"][0]["version"]
        for method, params in [("file.history", {"path": path}),
                               ("file.restore", {"path": path, "version": version})]:
            code = error_code(srv.call(method, params))
            assert code in ("path_outside_workspace", "invalid_params"), (method, code)
        for bad in ("../cp-0", "cp-zz", version):
            assert error_code(srv.call("workspace.rewind", {"checkpoint": bad})) == \
                "invalid_params"
    assert (root / "real/x.txt").read_bytes() == b"y"
    assert (outside / "canary.txt").read_text() == "CANARY-OUTSIDE\n"


def test_read_only_lists_but_refuses_to_restore_and_deny_hides(root: Path,
                                                               hist: Path) -> None:
    seed(root)
    seed(root, "s.env", b"secret")
    with serve(root, hist) as srv:
        srv.result("file.write", {"path": "a.txt", "content": "x"})
        srv.result("file.write", {"path": "s.env", "content": "y"})
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
    with serve(root, hist, "--read-only") as srv:
        versions = srv.result("file.history", {"path": "a.txt"})["versions"]
        for method, params in [("file.restore", {"path": "a.txt",
                                                 "version": versions[0]["version"]}),
                               ("workspace.rewind", {"checkpoint": cp}),
                               ("workspace.checkpoint", {})]:
            assert error_code(srv.call(method, params)) == "permission_denied"
    with serve(root, hist, "--deny", "*.env") as srv:
        assert error_code(srv.call("file.history", {"path": "s.env"})) == "permission_denied"
    assert (root / "a.txt").read_bytes() == b"x"


def test_history_zero_keeps_nothing(root: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with RpcServer(root, "--history", "0", env={"XDG_STATE_HOME": str(state)}) as srv:
        srv.result("file.write", {"path": "a.txt", "content": "x"})
        assert srv.result("file.history", {"path": "a.txt"})["versions"] == []
    assert not state.exists()


def test_the_default_history_lives_in_the_users_state_directory(root: Path,
                                                                tmp_path: Path) -> None:
    state = tmp_path / "state"
    with RpcServer(root, env={"XDG_STATE_HOME": str(state)}) as srv:
        srv.result("file.write", {"path": "a.txt", "content": "x"})
        srv.result("file.write", {"path": "a.txt", "content": "y"})
    logs = list(state.glob("chorus-tools/history/*/log.jsonl"))
    assert len(logs) == 1 and len(logs[0].read_text().splitlines()) == 2


def test_the_mcp_face_lists_the_history_tools_with_the_rewind_destructive(
        root: Path, hist: Path) -> None:
    with serve(root, hist) as srv:
        srv.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "1"}})
        tools = {t["name"]: t for t in srv.result("tools/list", {})["tools"]}
    assert tools["workspace_rewind"]["annotations"]["destructiveHint"] is True
    assert tools["file_history"]["annotations"]["readOnlyHint"] is True
    assert {"file_restore", "workspace_checkpoint"} <= set(tools)


def test_a_checkpoint_label_with_a_lone_surrogate_is_invalid_params(root: Path,
                                                                    hist: Path) -> None:
    """Found by the params fuzzer: the label reached the history's UTF-8 log and was
    internal_error."""
    with serve(root, hist) as srv:
        error = srv.error("workspace.checkpoint", {"label": "\ud800"})
        assert error["data"]["error"] == "invalid_params" and error["data"]["param"] == "label"
        assert srv.result("workspace.checkpoint", {"label": "fine"})["checkpoint"]


@pytest.mark.parametrize("options", [(), ("--read-only",), ("--history", "0")],
                         ids=["history on", "read-only", "history off"])
def test_a_history_path_through_a_symlink_to_outside_is_path_outside_workspace(
        root: Path, hist: Path, outside: Path, options: tuple[str, ...]) -> None:
    """The fault: file.restore of such a path answered invalid_params (no such version):
    the path is judged before the version, for every history method."""
    (root / "out").symlink_to(outside)
    seed(root)
    with serve(root, hist) as srv:  # a real version, of another path
        srv.result("file.write", {"path": "a.txt", "content": "x"})
        version = srv.result("file.history", {"path": "a.txt"})["versions"][0]["version"]
    with serve(root, hist, "--tools", "anthropic", *options) as srv:
        for method, params in [
                ("file.restore", {"path": "out/canary.txt", "version": version}),
                ("file.restore", {"path": "out/canary.txt", "version": "h-zz"}),
                ("file.history", {"path": "out/canary.txt"}),
                ("str_replace_editor", {"command": "undo_edit", "path": "out/canary.txt"})]:
            assert error_code(srv.call(method, params)) == "path_outside_workspace", \
                (method, params)
    assert (outside / "canary.txt").read_text() == "CANARY-OUTSIDE\n"


def test_a_file_whose_name_is_not_utf8_keeps_its_history(root: Path, hist: Path) -> None:
    """The fault: the write happened, was answered internal_error, and the old content
    was in no version (the log could not hold the name)."""
    name = os.fsdecode(b"caf\xe9.txt")
    (root / name).write_bytes(b"old")
    with serve(root, hist) as srv:
        srv.result("file.write", {"path": name, "content": "new"})
        (version,) = srv.result("file.history", {"path": name})["versions"]
        srv.result("file.restore", {"path": name, "version": version["version"]})
    assert (root / name).read_bytes() == b"old"


def test_codex_apply_patch_keeps_what_it_changes_and_deletes(root: Path, hist: Path) -> None:
    """The fault: apply_patch kept nothing in the history, so its edits and deletions
    could not be restored or rewound."""
    seed(root, "a.txt", b"one\n")
    seed(root, "gone.txt", b"bye\n")
    with serve(root, hist, "--tools", "codex") as srv:
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
        srv.result("apply_patch", {"input": "\n".join([
            "*** Begin Patch", "*** Update File: a.txt", "@@", "-one", "+two",
            "*** Delete File: gone.txt", "*** Add File: new.txt", "+made", "*** End Patch"])})
        assert [v["method"] for v in srv.result("file.history", {"path": "gone.txt"})[
            "versions"]] == ["apply_patch"]
        done = srv.result("workspace.rewind", {"checkpoint": cp})
    assert sorted(done["restored"]) == ["a.txt", "gone.txt"] and done["deleted"] == ["new.txt"]
    assert files(root) == {"a.txt": (b"one\n", 0o640), "gone.txt": (b"bye\n", 0o640)}
