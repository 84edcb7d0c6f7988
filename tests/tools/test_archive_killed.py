"""An archive import whose commit is killed midway (tools/bytes/landing.py): a REAL process
running `archive.import_commit` SIGKILLs itself after some entries landed, and each way of
rolling it back (the invoker's follow-up, the next start, the expiry of its spool) puts the
workspace back exactly as it was, the files replaced as the very inodes they were (same
version). And an expired upload leaves the quota's account as an abort does."""

from __future__ import annotations

import os
import signal
import stat
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.bytes import archive_in, spool
from chorus_tools.tools.bytes.archive_in import import_begin, import_commit
from chorus_tools.tools.bytes.landing import JOURNAL
from chorus_tools.tools.bytes.spool import SPOOL_PREFIX, Spool
from chorus_tools.tools.bytes.uploads import upload_begin, upload_part
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.quota import Room

from test_archive import build, member, put, tree


def _setup(root: Path) -> None:
    dest = root / "dest"
    (dest / "b").mkdir(parents=True)
    (dest / "old.txt").write_text("old content")
    (dest / "old.txt").chmod(0o640)
    (dest / "oldlink").symlink_to("old.txt")
    (dest / "b" / "keep").write_text("keep")


ARCHIVE = build(member("old.txt", b"the archive's old.txt"),
                member("new/deep/n.txt", b"new"),
                member("oldlink", kind=tarfile.SYMTYPE, link="new/deep/n.txt"),
                member("newlink", kind=tarfile.SYMTYPE, link="old.txt"),
                member("b/x.txt", b"never lands"))


def _stats(root: Path) -> dict[str, Any]:
    """Each regular file's inode, mtime and mode: its version."""
    return {p: (st.st_ino, st.st_mtime_ns, st.st_mode) for p in tree(root)
            for st in [os.lstat(root / p)] if stat.S_ISREG(st.st_mode)}


def _killed_commit(ctx: ToolContext, root: Path) -> str:
    """An import begun and sent whole, whose commit ran in a child process that
    SIGKILLed itself as `b/x.txt` was about to land: its upload id."""
    upload = import_begin(ctx, "dest")["upload_id"]
    with Spool.open(ctx, upload) as sp:
        sp.write_part(0, ARCHIVE)
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child never returns)
        try:
            real = archive_in._land_file

            def landing_then_killed(ctx: ToolContext, fd: int, dir_fd: int, x: Any,
                                    i: int) -> None:
                if x.rel == "dest/b/x.txt":
                    os.kill(os.getpid(), signal.SIGKILL)
                real(ctx, fd, dir_fd, x, i)

            archive_in._land_file = landing_then_killed  # type: ignore[assignment]
            import_commit(ctx, upload)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    # killed midway: the first entries landed, the last did not, the journal stayed
    assert (root / "dest" / "old.txt").read_bytes() == b"the archive's old.txt"
    assert os.readlink(root / "dest" / "newlink") == "old.txt"
    assert not (root / "dest" / "b" / "x.txt").exists()
    assert os.path.exists(root / f"{SPOOL_PREFIX}{upload}" / JOURNAL)
    return upload


@pytest.mark.parametrize("how", ["follow-up", "start", "expiry"])
def test_a_killed_commit_is_rolled_back_whole(ctx: ToolContext, root: Path,
                                              how: str) -> None:
    _setup(root)
    before, stats = tree(root), _stats(root)
    upload = _killed_commit(ctx, root)
    if how == "follow-up":
        said = archive_in.recover(ctx, upload)
        assert said["rolled_back"] is True and "4 entries" in said["note"]
    elif how == "start":
        assert spool.recover(ctx, before=time.time() + 1) == {"removed": 1}
    else:
        assert spool.expire(ctx, now=time.time() + ctx.limits.upload_timeout + 1) == 1
    assert tree(root) == before  # the directories made are gone, and so is the spool
    assert _stats(root) == stats  # old.txt is its old inode again: the same version
    assert put(ctx, "dest", ARCHIVE) == {"created": 3, "replaced": 2, "bytes": 35}


def test_a_file_changed_since_is_left_alone(ctx: ToolContext, root: Path) -> None:
    _setup(root)
    upload = _killed_commit(ctx, root)
    (root / "dest" / "new" / "deep" / "n.txt").write_text("someone else's")  # changed in place
    (root / "dest" / "newlink").unlink()
    (root / "dest" / "newlink").symlink_to("b")  # replaced by another link
    assert archive_in.recover(ctx, upload)["rolled_back"] is True
    assert (root / "dest" / "old.txt").read_text() == "old content"
    assert (root / "dest" / "new" / "deep" / "n.txt").read_text() == "someone else's"
    assert os.readlink(root / "dest" / "newlink") == "b"
    assert not os.path.exists(root / f"{SPOOL_PREFIX}{upload}")


def test_a_commit_still_running_is_never_taken(ctx: ToolContext, root: Path) -> None:
    _setup(root)
    upload = _killed_commit(ctx, root)
    with Spool.open(ctx, upload):  # its lock held: as a live commit holds it
        assert spool.recover(ctx, before=time.time() + 1) == {"removed": 0}
        assert spool.expire(ctx, now=time.time() + ctx.limits.upload_timeout + 1) == 0
    assert (root / "dest" / "old.txt").read_bytes() == b"the archive's old.txt"
    assert spool.recover(ctx, before=time.time() + 1) == {"removed": 1}
    assert (root / "dest" / "old.txt").read_text() == "old content"


def test_regression_a_late_start_sweep_leaves_this_servers_own_commit(
        ctx: ToolContext, root: Path) -> None:
    """Regression: on a loaded machine the start's sweep ran after a worker of the same
    server was killed mid-commit, rolled the import back first, and the invoker's own
    recovery then found no spool and answered `rolled_back: false`. A spool touched since
    the server started is the invoker's."""
    _setup(root)
    started = time.time() - 60
    upload = _killed_commit(ctx, root)
    assert spool.recover(ctx, before=started) == {"removed": 0}
    assert archive_in.recover(ctx, upload)["rolled_back"] is True


def test_recover_says_what_became_of_an_import_not_killed(ctx: ToolContext,
                                                          root: Path) -> None:
    (root / "dest").mkdir()
    upload = import_begin(ctx, "dest")["upload_id"]
    assert archive_in.recover(ctx, upload) == {
        "rolled_back": False, "note": "Nothing of the archive had landed yet."}
    assert archive_in.recover(ctx, upload)["note"].startswith("Its spool is gone")
    assert list(root.iterdir()) == [root / "dest"]


def test_an_expired_upload_is_booked_as_freed(ctx: ToolContext, root: Path) -> None:
    upload = upload_begin(ctx, "big.bin")["upload_id"]
    ctx.room, ctx.grown = Room(0, 1 << 30, 0, 100), (0, 0, 0)
    upload_part(ctx, upload, 0, "A" * 4000)  # 3000 bytes, charged as they arrive
    assert ctx.grown == (3000, 0, 0)
    assert spool.expire(ctx, now=time.time() + ctx.limits.upload_timeout + 1) == 1
    assert ctx.grown == (0, 0, -3000)  # freed, and freed even if the call then fails
    assert list(root.iterdir()) == []
