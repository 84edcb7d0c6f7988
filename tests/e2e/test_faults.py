"""File-system faults met by a running server: a disk that fills up in the middle of a
write or a patch, and a workspace directory deleted or renamed under it. Each is answered
with a structured error (or served on the pinned root), never a crash or a half-written
file. (EACCES on a file and a directory: tests/security/test_privileges.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from rpc_client import RpcServer, error_code

SIZE = 1 << 20
OLD = "old line\n" * 1000  # 9 kB
BIG = "new line\n" * 50_000  # 450 kB: more than the space left


def _mount(target: Path, tmp_path: Path) -> str | None:
    """Mount a small file system at `target`: a tmpfs, else an ext2 image on a loop
    device. None when it was made, else why not."""
    tries = [["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(target)]]
    if shutil.which("mkfs.ext2"):
        image = tmp_path / "fs.img"
        with open(image, "wb") as f:
            f.truncate(2 * SIZE)
        tries.append(["sh", "-c", f"mkfs.ext2 -q -F {image} && mount -o loop {image} {target}"])
    reasons = []
    for argv in tries:
        run = subprocess.run(argv, capture_output=True, timeout=30)
        if run.returncode == 0:
            return None
        reasons.append(f"{argv[0]}: {run.stderr.decode().strip()}")
    return "; ".join(reasons)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A workspace on a file system of about 1 MiB (made by the test: needs root)."""
    target = tmp_path / "small"
    target.mkdir()
    why = "not root" if os.geteuid() != 0 else _mount(target, tmp_path)
    if why is not None:
        pytest.skip(f"cannot make a small file system to fill (no tmpfs, no loop device): "
                    f"{why}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True, timeout=30)


def _fill(directory: Path, leave: int) -> Path:
    """Take all the free space but about `leave` bytes."""
    st = os.statvfs(directory)
    filler = directory / "filler.bin"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(st.f_bavail * st.f_frsize - leave, 0))
    return filler


def _temp_files(root: Path) -> list[str]:
    return [n for _, _, names in os.walk(root) for n in names if n.startswith(".chorus-tmp-")]


@pytest.mark.parametrize("method", ["file.write", "file.patch"])
def test_disk_full_mid_write_keeps_the_old_file(small_fs: Path, method: str) -> None:
    params: dict[str, Any] = (
        {"path": "f.txt", "content": BIG} if method == "file.write" else
        {"path": "f.txt", "patches": [{"find": "old line\n" * 1000, "replace": BIG}]})
    with RpcServer(small_fs, "--workers", "1", "--allow-root") as server:
        server.result("file.write", {"path": "f.txt", "content": OLD})
        filler = _fill(small_fs, leave=64 << 10)
        failed = server.call(method, params)
        assert error_code(failed) == "write_failed", failed
        assert failed["error"]["data"]["errno"] == "ENOSPC"
        assert (small_fs / "f.txt").read_text() == OLD
        assert _temp_files(small_fs) == []
        filler.unlink()
        assert server.result(method, params)["success"] is True
        assert (small_fs / "f.txt").read_text() == BIG
        assert _temp_files(small_fs) == []


def _answers_structured(reply: dict[str, Any]) -> bool:
    return "result" in reply or error_code(reply) not in (None, "internal_error")


CALLS = [
    ("file.read", {"path": "a.txt"}),
    ("file.info", {"path": "."}),
    ("file.list", {}),
    ("file.list", {"pattern": "**/*.txt"}),
    ("file.search", {"pattern": "alpha"}),
    ("file.write", {"path": "new.txt", "content": "n\n"}),
    ("file.write", {"path": "d/e/new.txt", "content": "n\n"}),
    ("file.patch", {"path": "a.txt", "patches": [{"find": "alpha", "replace": "omega"}]}),
    ("file.delete", {"path": "b.txt"}),
]


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_workspace_deleted_while_serving(root: Path, engine: str) -> None:
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    with RpcServer(root, "--workers", "2", "--allow-root", "--search-engine", engine) as server:
        server.result("file.read", {"path": "a.txt"})
        shutil.rmtree(root)
        replies = server.call_many(CALLS)
        assert all(_answers_structured(r) for r in replies), replies
        assert error_code(replies[0]) == "file_not_found"
        assert "error" in replies[5] and "error" in replies[6]  # nothing made in limbo
        assert server.result("rpc.discover", {})["openrpc"]
        assert server.proc.poll() is None
    assert not root.exists() and server.proc.returncode == 0


def test_workspace_renamed_while_serving_stays_pinned(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    moved = tmp_path / "moved"
    with RpcServer(root, "--workers", "2", "--allow-root") as server:
        server.result("file.read", {"path": "a.txt"})
        root.rename(moved)
        root.mkdir()  # a new directory at the old name is not the workspace
        (root / "a.txt").write_text("IMPOSTOR\n")
        replies = server.call_many(CALLS)
    assert all("result" in r for r in replies), replies
    assert replies[0]["result"]["content"] == "     1\talpha"
    assert (moved / "new.txt").read_text() == "n\n"
    assert (moved / "d/e/new.txt").read_text() == "n\n"
    assert (moved / "a.txt").read_text() == "omega\n"
    assert not (moved / "b.txt").exists()
    assert sorted(os.listdir(root)) == ["a.txt"] and (root / "a.txt").read_text() == "IMPOSTOR\n"
