"""A tool result that hands the server process open descriptors (docs/protocol.md, Bytes
in and out: how `/files` streams). The worker opens what they name under every rule the
methods obey (confinement, --deny, a regular file only, an upload's spool); the server
process then moves bytes through them (sendfile out, a body in) and never opens a
workspace path itself. Only the methods the server calls of itself return one
(tools/bytes/handoff.py): a JSON reply could not carry a descriptor.

The worker sends the descriptors beside its reply (rpc/process/descriptors.py) and closes
its own copies; the server process receives them in place of `fds`."""

from __future__ import annotations

from typing import Any, NamedTuple


class Handing(NamedTuple):
    result: dict[str, Any]  # what the call answers besides the descriptors
    fds: tuple[int, ...]  # open in the worker: sent, then closed there
