"""tools.pipes: pipes grown to 1 MiB where the kernel allows, left alone where it does not."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

from chorus_tools.tools import pipes


def _max_pipe_bytes() -> int:
    return int(Path("/proc/sys/fs/pipe-max-size").read_text())


def test_a_wide_pipe_holds_a_megabyte_without_a_reader() -> None:
    read_end, write_end = pipes.wide_pipe()
    try:
        size = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
        assert size == min(pipes.PIPE_BYTES, max(_max_pipe_bytes(), 1 << 16))
        os.set_blocking(write_end, False)
        written = sum(os.write(write_end, b"x" * 4096) for _ in range(size // 4096))
        assert written == size > 1 << 16  # a 64 KiB pipe would have refused the rest
        assert os.get_inheritable(read_end) is os.get_inheritable(write_end) is False
    finally:
        os.close(read_end)
        os.close(write_end)


def test_the_server_widens_its_stdout_pipe(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "chorus_tools", "--workspace",
                             str(tmp_path), "--allow-root"],
                            stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.DEVNULL)
    os.close(write_end)
    try:
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}\n')
        proc.stdin.flush()
        assert os.read(read_end, 1)  # it has answered: the pipe was widened before that
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == min(pipes.PIPE_BYTES,
                                                                 _max_pipe_bytes())
    finally:
        proc.stdin.close()
        proc.wait(10)
        os.close(read_end)
