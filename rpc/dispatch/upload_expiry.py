"""Uploads untouched for `--upload-timeout` are removed on time (docs/protocol.md, Bytes in
and out): every upload call sweeps the expired ones first, but an upload its client
abandoned, with no other upload call after it, would keep its parts on the workspace's
disk and in its quota for as long as the server runs. So the server asks a worker to
sweep on a timer, through the invoker like any change (its quota turn, so the bytes freed
leave the account), at half the timeout (at most a minute apart): an upload goes at most
half a timeout late. Not under `--read-only`, where no upload can begin."""

from __future__ import annotations

import asyncio
import itertools
import logging

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.tools.bytes.table import EXPIRE_IDLE

log = logging.getLogger("chorus.uploads")

_LONGEST, _SHORTEST = 60.0, 0.05


def period(timeout: float) -> float:
    """Seconds between two sweeps for an upload timeout of `timeout` seconds."""
    return min(max(timeout / 2, _SHORTEST), _LONGEST)


async def sweep_on_time(dispatcher: Dispatcher, timeout: float) -> None:
    """Sweep every `period(timeout)` seconds until cancelled (the server's drain)."""
    ids = itertools.count(1)
    while True:
        await asyncio.sleep(period(timeout))
        try:
            # shielded: the drain cancels the timer, never a sweep midway through
            ok, payload = await asyncio.shield(dispatcher.internal(
                EXPIRE_IDLE, {}, f"upload-expiry-{next(ids)}"))
        except Exception:  # a busy pool, a worker lost: the next sweep comes anyway
            log.debug("upload expiry sweep failed", exc_info=True)
            continue
        if ok and payload["removed"]:
            log.info("removed %d upload(s) untouched for --upload-timeout",
                     payload["removed"])
