"""file.write against real files, links, FIFOs and permission bits."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

import chorus_tools.tools.mutate.atomic
from chorus_tools.tools.confine.reserved import TEMP_PREFIX
from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.mutate.write import write


def _code(exc: pytest.ExceptionInfo[ToolError]) -> str:
    return exc.value.code


def _no_temp_files(directory: Path) -> None:
    assert [p.name for p in directory.iterdir() if p.name.startswith(TEMP_PREFIX)] == []


def test_creates_file_with_exact_bytes(ctx: ToolContext, root: Path) -> None:
    content = "line1\r\nline2\n\u00e9\u4e2d\U0001F600 no newline"
    out = write(ctx, "a.txt", content)
    data = (root / "a.txt").read_bytes()
    assert data == content.encode("utf-8")
    assert out == {"success": True, "bytes_written": len(data), "created": True,
                   "version": version_of(os.stat(root / "a.txt"))}
    _no_temp_files(root)


def test_new_file_mode_follows_umask(ctx: ToolContext, root: Path) -> None:
    old = os.umask(0o027)
    try:
        write(ctx, "m.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(root / "m.txt").st_mode) == 0o640


def test_replace_reports_not_created_and_changes_version(ctx: ToolContext,
                                                         root: Path) -> None:
    first = write(ctx, "a.txt", "one")
    second = write(ctx, "a.txt", "two")
    assert second["created"] is False
    assert second["version"] != first["version"]
    assert (root / "a.txt").read_text() == "two"


def test_identical_content_writes_nothing(ctx: ToolContext, root: Path) -> None:
    first = write(ctx, "a.txt", "same\n")
    inode = os.stat(root / "a.txt").st_ino
    again = write(ctx, "a.txt", "same\n")
    assert again == {"success": True, "bytes_written": 5, "created": False,
                     "version": first["version"]}
    assert os.stat(root / "a.txt").st_ino == inode


def test_create_dirs_default_makes_parents(ctx: ToolContext, root: Path) -> None:
    write(ctx, "x/y/z/f.txt", "deep")
    assert (root / "x/y/z/f.txt").read_text() == "deep"


def test_create_dirs_false_needs_parent(ctx: ToolContext, root: Path) -> None:
    with pytest.raises(ToolError) as exc:
        write(ctx, "missing/f.txt", "x", create_dirs=False)
    assert _code(exc) == "file_not_found"
    assert exc.value.details["path"] == "missing/f.txt"
    assert not (root / "missing").exists()


def test_file_as_parent_is_not_a_directory(ctx: ToolContext, root: Path) -> None:
    (root / "f").write_text("file")
    for create_dirs in (True, False):
        with pytest.raises(ToolError) as exc:
            write(ctx, "f/g.txt", "x", create_dirs=create_dirs)
        assert _code(exc) == "not_a_directory"
    assert (root / "f").read_text() == "file"


def test_overwrite_false(ctx: ToolContext, root: Path) -> None:
    assert write(ctx, "new.txt", "a", overwrite=False)["created"] is True
    with pytest.raises(ToolError) as exc:
        write(ctx, "new.txt", "b", overwrite=False)
    assert _code(exc) == "already_exists"
    assert (root / "new.txt").read_text() == "a"
    _no_temp_files(root)


def test_content_over_limit(root: Path, ctx: ToolContext) -> None:
    small = ToolContext(ws=ctx.ws, limits=Limits(max_write_bytes=4))
    with pytest.raises(ToolError) as exc:
        write(small, "big.txt", "\u00e9\u00e9\u00e9")  # 3 characters, 6 UTF-8 bytes
    assert _code(exc) == "file_too_large"
    assert exc.value.details["size"] == 6 and exc.value.details["limit"] == 4
    assert not (root / "big.txt").exists()
    assert write(small, "ok.txt", "\u00e9\u00e9")["bytes_written"] == 4


def test_keeps_permission_bits(ctx: ToolContext, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    write(ctx, "run.sh", "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o755
    script.chmod(0o600)
    write(ctx, "run.sh", "changed")
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o600


def test_hard_link_keeps_old_content(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("old")
    os.link(root / "a.txt", root / "b.txt")
    write(ctx, "a.txt", "new")
    assert (root / "a.txt").read_text() == "new"
    assert (root / "b.txt").read_text() == "old"


def test_through_relative_symlink_changes_target(ctx: ToolContext, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub/real.txt").write_text("old")
    (root / "link").symlink_to("sub/real.txt")
    (root / "sub/chain").symlink_to("../link")
    write(ctx, "link", "via link")
    assert (root / "link").is_symlink()
    assert (root / "sub/real.txt").read_text() == "via link"
    write(ctx, "sub/chain", "via chain")
    assert (root / "sub/chain").is_symlink()
    assert (root / "sub/real.txt").read_text() == "via chain"
    _no_temp_files(root)
    _no_temp_files(root / "sub")


def test_through_dangling_symlink_creates_target(ctx: ToolContext, root: Path) -> None:
    (root / "link").symlink_to("made.txt")
    assert write(ctx, "link", "x")["created"] is True
    assert (root / "made.txt").read_text() == "x"
    assert (root / "link").is_symlink()


def test_absolute_symlink_refused_even_inside(ctx: ToolContext, root: Path) -> None:
    (root / "real.txt").write_text("keep")
    (root / "abs").symlink_to(root / "real.txt")
    with pytest.raises(ToolError) as exc:
        write(ctx, "abs", "x")
    assert _code(exc) == "path_outside_workspace"
    assert (root / "real.txt").read_text() == "keep"


def test_symlink_escaping_refused(ctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "esc").symlink_to("../outside/canary.txt")
    (root / "dir").symlink_to("../outside")
    for path in ("esc", "dir/canary.txt", "dir/new.txt", "../outside/canary.txt",
                 str(outside / "canary.txt")):
        with pytest.raises(ToolError) as exc:
            write(ctx, path, "PWNED")
        assert _code(exc) == "path_outside_workspace", path
    assert (outside / "canary.txt").read_text() == "CANARY-OUTSIDE\n"
    assert sorted(p.name for p in outside.iterdir()) == ["canary.txt"]


def test_symlinked_parent_inside_is_followed(ctx: ToolContext, root: Path) -> None:
    (root / "real").mkdir()
    (root / "alias").symlink_to("real")
    write(ctx, "alias/f.txt", "x")
    assert (root / "real/f.txt").read_text() == "x"


def test_absolute_path_inside_workspace(ctx: ToolContext, root: Path) -> None:
    write(ctx, str(root / "abs.txt"), "x")
    assert (root / "abs.txt").read_text() == "x"


def test_fifo_refused_without_blocking(ctx: ToolContext, root: Path) -> None:
    os.mkfifo(root / "pipe")
    signal.alarm(20)  # a hang guard: opening the FIFO would block forever
    try:
        with pytest.raises(ToolError) as exc:
            write(ctx, "pipe", "x")
    finally:
        signal.alarm(0)
    assert _code(exc) == "not_a_regular_file"
    assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)
    _no_temp_files(root)


@pytest.mark.parametrize("path", [".", "", "sub", "sub/", "sub/..", "new/", "f/x/..",
                                  "f/."])
def test_directory_targets(ctx: ToolContext, root: Path, path: str) -> None:
    (root / "sub").mkdir()
    (root / "f").write_text("keep")
    with pytest.raises(ToolError) as exc:
        write(ctx, path, "x")
    assert _code(exc) == ("invalid_params" if path == "" else "is_directory")
    assert (root / "sub").is_dir() and (root / "f").read_text() == "keep"
    assert not (root / "new").exists()


def test_symlink_to_directory_is_directory(ctx: ToolContext, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "to_sub").symlink_to("sub")
    (root / "to_root").symlink_to(".")
    for path in ("to_sub", "to_root"):
        with pytest.raises(ToolError) as exc:
            write(ctx, path, "x")
        assert _code(exc) == "is_directory"
    assert (root / "to_sub").is_symlink()


def test_expected_version(ctx: ToolContext, root: Path) -> None:
    v1 = write(ctx, "a.txt", "one")["version"]
    v2 = write(ctx, "a.txt", "two", expected_version=v1)["version"]
    with pytest.raises(ToolError) as exc:
        write(ctx, "a.txt", "three", expected_version=v1)
    assert _code(exc) == "conflict"
    assert exc.value.details["current_version"] == v2
    assert exc.value.details["expected_version"] == v1
    assert (root / "a.txt").read_text() == "two"
    with pytest.raises(ToolError) as exc:
        write(ctx, "gone.txt", "x", expected_version=v2)
    assert _code(exc) == "conflict" and exc.value.details["current_version"] is None
    assert not (root / "gone.txt").exists()


def test_stale_temp_file_removed_by_next_write(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    stale = root / "d" / (TEMP_PREFIX + "0123456789abcdef")
    stale.write_text("half a write")
    write(ctx, "d/other.txt", "x")
    assert sorted(p.name for p in (root / "d").iterdir()) == ["other.txt"]


def test_reserved_temp_name_refused(ctx: ToolContext, root: Path) -> None:
    with pytest.raises(ToolError) as exc:
        write(ctx, TEMP_PREFIX + "0123456789abcdef", "x")
    assert _code(exc) == "invalid_params"
    assert list(root.iterdir()) == []


def test_lone_surrogate_is_invalid(ctx: ToolContext, root: Path) -> None:
    with pytest.raises(ToolError) as exc:
        write(ctx, "s.txt", "a\ud800b")
    assert _code(exc) == "invalid_params" and exc.value.details["param"] == "content"
    assert not (root / "s.txt").exists()


def test_io_error_is_write_failed_and_leaves_file(ctx: ToolContext, root: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "a.txt").write_text("old")

    def full_disk(fd: int, data: bytes) -> None:
        os.write(fd, data[:1])
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(chorus_tools.tools.mutate.atomic, "_write_all", full_disk)
    with pytest.raises(ToolError) as exc:
        write(ctx, "a.txt", "new content")
    assert _code(exc) == "write_failed"
    assert (root / "a.txt").read_text() == "old"
    _no_temp_files(root)


def test_audit_hashes(ctx: ToolContext, root: Path) -> None:
    import hashlib
    ctx.record = {}
    write(ctx, "a.txt", "one")
    assert ctx.record == {"sha256_before": None,
                          "sha256_after": hashlib.sha256(b"one").hexdigest(), "bytes": 3}
    ctx.record = {}
    write(ctx, "a.txt", "two!")
    assert ctx.record == {"sha256_before": hashlib.sha256(b"one").hexdigest(),
                          "sha256_after": hashlib.sha256(b"two!").hexdigest(), "bytes": 4}


def test_audit_hashes_of_a_failed_write_show_the_file_unchanged(ctx: ToolContext,
                                                               root: Path) -> None:
    """Regression: a refused write (conflict, already_exists) recorded null hashes for a
    file that existed; the record must show it as it was, before and after."""
    import hashlib
    (root / "a.txt").write_text("kept")
    digest = hashlib.sha256(b"kept").hexdigest()
    for kwargs in ({"expected_version": "0-0-0"}, {"overwrite": False}):
        ctx.record = {}
        with pytest.raises(ToolError):
            write(ctx, "a.txt", "new", **kwargs)
        assert ctx.record["sha256_before"] == digest == ctx.record["sha256_after"]
    assert (root / "a.txt").read_text() == "kept"


def test_symlink_in_symlinked_dir_resolves_like_the_kernel(ctx: ToolContext,
                                                           root: Path) -> None:
    """`current -> releases/v2` and `releases/v2/config -> ../shared.cfg`: the link's
    '..' is taken from where the link really is (releases/), as the kernel does."""
    (root / "releases/v2").mkdir(parents=True)
    (root / "releases/shared.cfg").write_text("old")
    (root / "releases/v2/config").symlink_to("../shared.cfg")
    (root / "current").symlink_to("releases/v2")
    write(ctx, "current/config", "new")
    assert (root / "releases/shared.cfg").read_text() == "new"
    assert not (root / "shared.cfg").exists()
    assert (root / "releases/v2/config").is_symlink()
