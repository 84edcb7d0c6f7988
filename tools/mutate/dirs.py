"""dir.create and dir.delete: `mkdir -p` and `rm -r` that cannot leave the workspace.

Directories are made with mkdirat on descriptors reached beneath the pinned root. A tree
is removed from a descriptor of its top, opened beneath the root without following it,
one level at a time: each subdirectory is opened through its parent's descriptor with
O_NOFOLLOW | O_DIRECTORY (a symlink is unlinked, never entered), and every unlink and
rmdir names an entry of a directory we hold open. A symlink or directory swapped in by
a rename meanwhile can make the call fail, never lead it out of the tree it opened.

Decisions of our own where the contract is silent: `removed` counts every entry removed, the
directory itself included (an empty directory: 1); a non-empty directory without `recursive`
is `invalid_params` naming `recursive`, since setting that parameter is the remedy (nothing
in docs/protocol.md's Errors is closer: the call is not refused by the OS, and nothing is in
the way); a symlink to a directory is `not_a_directory` (delete the link with file.delete).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any, Iterator

from chorus_tools.tools.mutate.atomic import locked_dir, open_parent, split_parent, unmake
from chorus_tools.tools.context import ToolContext, note_hashes
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.quota import charge
from chorus_tools.tools.confine.deny import denied
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.confine.policy import denied_beneath, refuse_denied_entry
from chorus_tools.tools.confine.sandbox import ROOT

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def create(ctx: ToolContext, path: str, parents: bool = True) -> dict[str, Any]:
    """Make the directory `path`; an existing one is a success with created: false."""
    rel = ctx.ws.rel(path)
    if rel == ROOT or _exists_as_dir(ctx, rel, path):
        return {"success": True, "created": False}
    parent, name = split_parent(rel)
    made: list[str] = []  # parents made for it: gone again if it is refused
    try:
        dir_fd = open_parent(ctx, parent, path, parents, made)
        try:
            refuse_denied_entry(ctx, dir_fd, name, rel, path)
            charge(ctx, 0, 1, path)
        except ToolError:
            os.close(dir_fd)
            raise
    except ToolError as err:
        unmake(ctx, made)
        if err.code == "file_not_found":
            raise ToolError("file_not_found", f"Parent directory does not exist: {path}. " + (
                "A parent on the way is missing even with parents: true (a symlink whose "
                "target does not exist, or one removed meanwhile); check it with file.info."
                if parents else "Pass parents: true to create it too."), path=path) from None
        raise
    try:
        os.mkdir(name, 0o777, dir_fd=dir_fd)
        os.fsync(dir_fd)
    except FileExistsError:  # made meanwhile (fine), or a file or dangling link is there
        if _exists_as_dir(ctx, rel, path):
            return {"success": True, "created": False}
        raise _not_a_directory(path) from None
    except OSError as exc:
        raise from_os_error(exc, path, "write_failed") from None
    finally:
        os.close(dir_fd)
    return {"success": True, "created": True}


def _exists_as_dir(ctx: ToolContext, rel: str, shown: str) -> bool:
    """True for a directory (reached through symlinks inside, as mkdir -p would), False
    when nothing is there; not_a_directory for anything else."""
    try:
        os.close(ctx.ws.open(rel, os.O_PATH | os.O_DIRECTORY, shown=shown))
    except ToolError as err:
        if err.code == "file_not_found":
            return False
        if err.code == "not_a_directory":
            raise _not_a_directory(shown) from None
        raise
    return True


def _not_a_directory(shown: str) -> ToolError:
    return ToolError("not_a_directory", f"Not a directory: {shown} (it, or a parent of "
                     "it, exists and is a file). Choose another path.", path=shown)


def delete(ctx: ToolContext, path: str, recursive: bool = False) -> dict[str, Any]:
    """Remove the directory `path`: empty, or with `recursive` everything in it."""
    rel = ctx.ws.rel(path)
    if rel == ROOT:
        raise ToolError("invalid_params", f"'{path}' is the workspace root, which is never "
                        "deleted. Name a directory inside it.", param="path", path=path)
    parent, name = split_parent(rel)
    with locked_dir(ctx, parent, shown=path) as parent_fd:
        refuse_denied_entry(ctx, parent_fd, name, rel, path)
        top = _open_top(parent_fd, name, path)
        try:
            inside = denied_beneath(ctx, top, rel)
            if inside is not None:
                raise denied(f"{path} (it holds {inside})")
            kept = keep.snapshot_tree(ctx, top, rel, path) if recursive else []
            removed, nbytes = _empty(top, path) if recursive else (0, 0)
        finally:
            os.close(top)
        try:
            os.rmdir(name, dir_fd=parent_fd)
            os.fsync(parent_fd)
        except OSError as exc:
            raise _rmdir_error(exc, path, recursive) from None
    for snap, _ in kept:
        keep.commit(ctx, snap, None)
    charge(ctx, -nbytes, -removed - 1, path)
    note_hashes(ctx, nbytes=nbytes)
    return {"success": True, "removed": removed + 1}


def _open_top(parent_fd: int, name: str, shown: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            raise ToolError("not_a_directory", f"Not a directory: {shown}. dir.delete "
                            "removes directories; use file.delete for a file or a symlink.",
                            path=shown) from None
        raise from_os_error(exc, shown) from None


def _empty(top: int, shown: str) -> tuple[int, int]:
    """Remove everything inside the directory open as `top`, depth first; return how many
    entries and how many bytes of regular files went."""
    removed = nbytes = 0
    stack: list[tuple[int, Iterator[str], str]] = [(top, _names(top), "")]
    try:
        while stack:
            fd, names, own_name = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if stack:
                    os.close(fd)
                    os.rmdir(own_name, dir_fd=stack[-1][0])
                    removed += 1
                continue
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    continue  # gone meanwhile
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                nbytes += _unlink(fd, name)
                removed += 1
                continue
            stack.append((child, _names(child), name))
    except OSError as exc:
        raise _tree_changed(exc, shown) from None
    finally:
        for fd, _, _ in stack[1:]:
            os.close(fd)
    return removed, nbytes


def _names(fd: int) -> Iterator[str]:
    return iter(os.listdir(fd))


def _unlink(dir_fd: int, name: str) -> int:
    """Unlink a non-directory entry (a symlink itself, never its target); its size when
    it was a regular file."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    os.unlink(name, dir_fd=dir_fd)
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _tree_changed(exc: OSError, shown: str) -> ToolError:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return from_os_error(exc, shown)
    return ToolError("write_failed", f"The tree changed while deleting it: {shown} "
                     f"({exc.strerror}). Part of it may be gone; list it and retry.",
                     path=shown)


def _rmdir_error(exc: OSError, shown: str, recursive: bool) -> ToolError:
    if exc.errno in (errno.ENOTEMPTY, errno.EEXIST) and not recursive:
        return ToolError("invalid_params", f"Directory not empty: {shown}. Pass recursive: "
                         "true to delete it with everything in it.", param="recursive",
                         path=shown)
    return _tree_changed(exc, shown)
