"""Descriptors a worker hands the server process (tools/handing.py), beside the worker's
pipe: each worker has a Unix datagram socket pair, and a reply that hands descriptors has
them sent there (SCM_RIGHTS, tagged with the job's id) before the reply itself is
written to the pipe, so they are waiting when the reply is read. A worker that dies in
between leaves them in its socket, which is closed with it (the kernel closes them).

In the server process they are owned by a Handed until closed: one whose call was
already answered (stopped, timed out) closes when dropped, and while open they are
closed in every child forked (a worker or the watcher must not keep a file open)."""

from __future__ import annotations

import logging
import os
import socket
import struct
from typing import Any

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.handing import Handing

log = logging.getLogger("chorus.pool")
_TAG = struct.Struct("!Q")
_MAX_FDS = 8
_live: set[int] = set()  # every descriptor a Handed holds open


def pair() -> tuple[socket.socket, socket.socket]:
    """(the server's end, non-blocking; the worker's end)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    ours.setblocking(False)
    return ours, theirs


def live() -> tuple[int, ...]:
    return tuple(_live)


def hand(sock: socket.socket, job_id: int, outcome: tuple[bool, Any, Any]
         ) -> tuple[bool, Any, Any]:
    """In the worker: send a Handing's descriptors and close them here; the outcome to
    write to the pipe (an internal error if they could not be sent)."""
    ok, handing, record = outcome
    try:
        socket.send_fds(sock, [_TAG.pack(job_id)], list(handing.fds))
    except OSError as exc:
        log.exception("cannot hand descriptors over")
        return False, ToolError("internal_error", f"Internal error in chorus-tools: the "
                                f"worker could not hand its descriptors over ({exc})."), record
    finally:
        for fd in handing.fds:
            os.close(fd)
    return ok, handing, record


class Handed:
    """A worker's Handing as the server process holds it: `result` and the descriptors,
    open until `close` (or the end of a `with` block, or being dropped)."""

    def __init__(self, result: dict[str, Any], fds: list[int]) -> None:
        self.result = result
        self.fds = fds
        _live.update(fds)

    def close(self) -> None:
        fds, self.fds = self.fds, []
        for fd in fds:
            _live.discard(fd)
            os.close(fd)

    def __enter__(self) -> Handed:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def receive(sock: socket.socket, job_id: int, handing: Handing) -> Handed | ToolError:
    """In the server process: the descriptors job `job_id` sent, owned by a Handed (any
    left over from a reply that never arrived whole are closed on the way)."""
    while True:
        try:
            tag, fds, _, _ = socket.recv_fds(sock, _TAG.size, _MAX_FDS,
                                             socket.MSG_CMSG_CLOEXEC)
        except OSError as exc:
            log.error("no descriptors came with the reply of job %s: %s", job_id, exc)
            return ToolError("internal_error", "Internal error in chorus-tools: the worker's "
                             "descriptors did not arrive.")
        if tag == _TAG.pack(job_id) and len(fds) == len(handing.fds):
            return Handed(handing.result, fds)
        for fd in fds:
            os.close(fd)
