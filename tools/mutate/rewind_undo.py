"""The way back of a change of several files when one of them fails (docs/protocol.md,
History: a rewind is all or nothing; apply_patch's files likewise): each entry it
replaces or removes is first hard-linked into one reserved directory at the workspace's
root, and put back by one rename, the very inode it was.

Writing the old bytes anew would give each file a new inode and mtime, so a new version:
the history would still name the one this server left, and the next rewind would take
every such file for someone else's change. The directory's name is reserved (hidden,
refused to every tool); a link is named by a hash of its path, so a change of that path
after a killed server's (a rewind completing one) replaces the link that one made. An
entry that cannot be linked there (on another filesystem: a mount inside the workspace)
has its bytes written back instead (`keep` says False).
"""

from __future__ import annotations

import hashlib
import os

from chorus_tools.tools.confine.reserved import TEMP_PREFIX
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate.atomic import open_parent, split_parent

FOLDER = f"{TEMP_PREFIX}rewind"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _key(path: str) -> str:
    return hashlib.sha256(os.fsencode(path)).hexdigest()[:32]


def keep(ctx: ToolContext, path: str) -> bool:
    """Hard-link the entry at `path` (a file or a symlink itself, never followed); False
    when it cannot be (another filesystem, a root the server cannot write, a file the
    kernel's protected_hardlinks keeps from this user). No directory lock is taken: the
    rewind runs alone (every call waits for it), and the calls on an apply_patch's paths
    wait for it (docs/protocol.md, Messages: order per path)."""
    parent, name = split_parent(path)
    dir_fd = ctx.ws.open_dir(parent, shown=path)
    try:
        folder = _folder(ctx, path)
        try:
            _unlink(folder, _key(path))
            os.link(name, _key(path), src_dir_fd=dir_fd, dst_dir_fd=folder,
                    follow_symlinks=False)
        finally:
            os.close(folder)
    except OSError:
        return False
    finally:
        os.close(dir_fd)
    return True


def entry(ctx: ToolContext, path: str, follow: bool) -> str:
    """Where the entry `path` names really is (the name to keep it by): through a
    symlinked directory on its way, and through a symlink at its end when `follow` (a
    write lands on the link's target, a removal takes the link itself)."""
    if follow:
        path = ctx.ws.resolve_symlinks(path, shown=path)
    parent, name = split_parent(path)
    dir_fd = ctx.ws.open(parent, os.O_PATH | os.O_DIRECTORY, shown=path)
    try:
        return ctx.ws.real_entry(dir_fd, name, path)
    finally:
        os.close(dir_fd)


def put_back(ctx: ToolContext, path: str) -> None:
    """Rename the kept entry over whatever `path` holds now (a file or link), making its
    directories again if the rewind removed them."""
    parent, name = split_parent(path)
    dir_fd = open_parent(ctx, parent, path, True)
    try:
        folder = _folder(ctx, path)
        try:
            os.rename(_key(path), name, src_dir_fd=folder, dst_dir_fd=dir_fd)
        finally:
            os.close(folder)
        os.fsync(dir_fd)
    except OSError as exc:
        raise from_os_error(exc, path, "write_failed") from None
    finally:
        os.close(dir_fd)


def drop(ctx: ToolContext, paths: list[str]) -> None:
    """Remove the links kept for `paths` and the directory once empty (best effort: what
    is left is hidden, and the next rewind of those paths removes it)."""
    if not paths:
        return
    try:
        root = ctx.ws.open_dir(ROOT)
    except ToolError:
        return
    try:
        folder = os.open(FOLDER, _DIR_FLAGS, dir_fd=root)
        try:
            for path in paths:
                _unlink(folder, _key(path))
        finally:
            os.close(folder)
        os.rmdir(FOLDER, dir_fd=root)
    except OSError:
        pass
    finally:
        os.close(root)


def _folder(ctx: ToolContext, path: str) -> int:
    root = ctx.ws.open_dir(ROOT, shown=path)
    try:
        try:
            os.mkdir(FOLDER, 0o700, dir_fd=root)
        except FileExistsError:
            pass
        return os.open(FOLDER, _DIR_FLAGS, dir_fd=root)
    finally:
        os.close(root)


def _unlink(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
