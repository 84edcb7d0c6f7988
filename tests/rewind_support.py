"""A workspace whose every file changed since a checkpoint, and a server killed while it
rewinds them: the set-up the rewind's crash, record and timeout tests share."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Callable

from rpc_client import RpcServer


def changed_since_checkpoint(root: Path, hist: Path, before: dict[str, bytes],
                             content: Callable[[str], str], *options: str) -> str:
    """`before`'s files written under `root`, a checkpoint taken by a server keeping its
    history in `hist`, then each file written again as `content(name)`: the checkpoint."""
    for name, data in before.items():
        (root / name).write_bytes(data)
    with RpcServer(root, "--history", str(hist), *options) as server:
        checkpoint = server.result("workspace.checkpoint", {})["checkpoint"]
        for name in before:
            server.result("file.write", {"path": name, "content": content(name)})
    return checkpoint


def kill_mid_rewind(root: Path, hist: Path, checkpoint: str, before: dict[str, bytes],
                    *options: str) -> None:
    """A rewind to `checkpoint` on a new server, killed (SIGKILL) as soon as one of
    `before`'s files is back: the rest is left to the journal."""
    server = RpcServer(root, "--history", str(hist), *options)
    server.result("file.info", {"path": next(iter(before))})  # started, workers warm
    server.request("workspace.rewind", {"checkpoint": checkpoint})
    deadline = time.monotonic() + 30
    while not any((root / n).read_bytes() == before[n] for n in before):
        assert time.monotonic() < deadline, "the rewind never started"
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait()
    time.sleep(0.2)  # the workers die with it (PDEATHSIG)
