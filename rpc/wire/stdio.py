"""The stdio wiring: private copies of stdin/stdout, the framing codec, the dispatcher, and
an orderly shutdown on end of input, SIGTERM or SIGINT. Nothing else here knows the protocol.

With --http the same server also listens for HTTP (rpc/wire/http.py, imported only then),
its sessions on the same pool, watcher and path order. stdio is served beside it when stdin
is a pipe or a socket (a client may be there, and its end stops the server as without
--http); from a terminal, /dev/null or a file the server is HTTP-only and runs until
SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import signal
import socket
import stat
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from chorus_tools.rpc.process import heap
from chorus_tools.rpc.process.channel import write_all
from chorus_tools.rpc.dispatch.landed import Landed
from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.dispatch.ordering import PathOrder
from chorus_tools.rpc.dispatch.quota import MEASURE, UsageAccount
from chorus_tools.rpc.dispatch.upload_expiry import sweep_on_time
from chorus_tools.rpc.wire.envelope import dumps, error_response
from chorus_tools.rpc.wire.errors import INVALID_REQUEST, PARSE_ERROR, protocol_error
from chorus_tools.rpc.wire.framing import BadFrame, Decoder, Framing, Message, TooLarge, encode
from chorus_tools.rpc.wire.http_options import HttpOptions
from chorus_tools.rpc.ops.drain import Drain
from chorus_tools.rpc.ops.metrics import Metrics
from chorus_tools.rpc.ops.logs import serving
from chorus_tools.rpc.process.pool import Pool
from chorus_tools.rpc.dispatch.history import History
from chorus_tools.rpc.dispatch.history_calls import HistoryCalls
from chorus_tools.rpc.dispatch.read_store import ReadStore
from chorus_tools.rpc.dispatch.records import Records
from chorus_tools.rpc.process.warm_process import WarmProcess
from chorus_tools.rpc.process.watch_service import Watches
from chorus_tools.tools import pipes
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.task import Task
from chorus_tools.tools.warm.client import KEPT_SHARE

if TYPE_CHECKING:
    from chorus_tools.rpc.wire.http import HttpFront

log = logging.getLogger("chorus.server")
_CHUNK = 1 << 16


@dataclass(frozen=True)
class ServerOptions:
    workers: int
    max_message_bytes: int
    request_timeout: float
    shutdown_timeout: float
    max_pending: int
    records_dir: str | None
    toolsets: tuple[str, ...] = ("native",)
    read_only: bool = False
    history: History | None = None  # docs/protocol.md, History; None: --history 0
    history_full: str = "refuse"  # what a change does when its history cannot be kept
    reads: ReadStore | None = None  # the claude set's reads on disk (opened by the cli)
    http: HttpOptions | None = None
    index_memory: int = 0  # the warm tree's budget (rpc/process/warm_process.py); 0: off
    metrics: bool = True  # count requests (docs/protocol.md, Running many); off: benchmarks
    quota_bytes: int | None = None  # --quota-bytes, --quota-files: None is unlimited
    quota_files: int | None = None


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on `fd`: pipes, sockets and terminals. Regular files
    and devices like /dev/null cannot be registered with epoll."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _widen_pipe(fd: int) -> None:
    """Grow a stdout pipe from 64 KiB to 1 MiB where the kernel allows: pipelined replies
    overflowed it (64 MCP reads carry 700 KB: the text as content and structuredContent),
    and each overflow was copied into asyncio's write buffer and written again later.
    A stdin pipe too: an 8 MiB file.upload_part (11 MB of JSON) then arrives in 1 MiB
    reads, not 170 wake-ups of the loop for 64 KiB each."""
    if stat.S_ISFIFO(os.fstat(fd).st_mode):
        pipes.widen(fd)


class Output:
    """Writes framed replies to the private stdout: the replies of one turn of the event
    loop go out in one write, without blocking the loop (a pipe, socket or terminal), or
    with plain writes when stdout is a regular file or a device."""

    def __init__(self, fd: int, lost: Callable[[], None]) -> None:
        self._fd = fd
        self._lost = lost
        self._transport: asyncio.WriteTransport | None = None
        self._pending: list[bytes] = []
        self._failed = False  # a plain write to stdout failed: nothing more is written

    async def open(self) -> None:
        if pollable(self._fd):
            _widen_pipe(self._fd)
            loop = asyncio.get_running_loop()
            self._transport, _ = await loop.connect_write_pipe(
                lambda: _OutputProtocol(self._lost),
                os.fdopen(self._fd, "wb", buffering=0, closefd=False))

    def write(self, data: bytes) -> None:
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._write_pending)
        self._pending.append(data)

    def _write_pending(self) -> None:
        data, self._pending = b"".join(self._pending), []
        if self._transport is None:
            if self._failed:
                return
            try:
                write_all(self._fd, data)
            except OSError as exc:  # a full disk, /dev/full, EIO: as a closed pipe's EPIPE
                log.warning("stdout cannot be written (%s): shutting down", exc.strerror)
                self._failed = True
                self._lost()
        elif not self._transport.is_closing():
            self._transport.write(data)

    async def flush(self) -> None:
        if self._pending:
            self._write_pending()
        while self._transport is not None and not self._transport.is_closing() \
                and self._transport.get_write_buffer_size():
            await asyncio.sleep(0.005)


class _OutputProtocol(asyncio.Protocol):
    """Tells the server when the client closed its end of our stdout (EPIPE)."""

    def __init__(self, lost: Callable[[], None]) -> None:
        self._lost = lost

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost()


class _InputProtocol(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self._server = server

    def data_received(self, data: bytes) -> None:
        self._server.feed(data)

    def eof_received(self) -> bool:
        self._server.end_of_input()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._server.end_of_input()


class Server:
    def __init__(self, ctx: ToolContext, options: ServerOptions, wire_in: int,
                 wire_out: int, listening: socket.socket | None = None) -> None:
        self._options = options
        self._upload_timeout = ctx.limits.upload_timeout
        self._wire_in = wire_in
        self._decoder = Decoder(options.max_message_bytes)
        self._output = Output(wire_out, self._output_lost)
        self._records = Records(options.records_dir) if options.records_dir else None
        self._drain = Drain(retry_after=options.shutdown_timeout)
        self._metrics = Metrics() if options.metrics else None
        self._history = options.history  # opened by the cli (rpc/dispatch/history_home.py)
        if self._history is not None:  # the workers inherit them at fork: tools/mutate/keep.py
            ctx.history_spools = self._history.spools(2 * options.workers + 2)
            ctx.history_budget, ctx.history_full = self._history.budget, options.history_full
        self._pool = Pool(ctx, options.workers, options.max_pending,
                          close_fds=(wire_in, wire_out,
                                     *([options.reads.fd] if options.reads else []),
                                     *([listening.fileno()] if listening is not None else [])),
                          # the server's copy of the warm's kept replies gets their room
                          replies_room=options.index_memory // KEPT_SHARE)
        self._watches = Watches(ctx, self._pool.inherited, lambda: self._pool.ruleset)
        self._warm = (WarmProcess(ctx, options.index_memory, self._pool.inherited,
                                  lambda: self._pool.ruleset, self._pool.idle)
                      if options.index_memory else None)
        # one client's dispatcher: stdio's, and one per HTTP session; all on one path order,
        # one history and one memory of the claude set's reads (the workspace's, on disk or
        # else for this process: an HTTP session keeps only its initialize state and its
        # watches, so a client that opens a session per call can Read then Edit)
        # the workspace's one usage account (rpc/dispatch/quota.py); the metrics read
        # its figures()
        self.quota = UsageAccount(options.quota_bytes, options.quota_files,
                                  warm=self._warm is not None)
        self._new_dispatcher = functools.partial(
            Dispatcher, self._pool, request_timeout=options.request_timeout,
            records=self._records, toolsets=options.toolsets, read_only=options.read_only,
            roots=ctx.ws.roots, order=PathOrder(),
            document_bytes=min(ctx.limits.max_image_bytes, ctx.limits.max_chunk_bytes),
            history=HistoryCalls(self._history, ctx.ws.roots, options.read_only,
                                 options.history_full),
            reads=options.reads if options.reads is not None else {},
            metrics=self._metrics, drain=self._drain, quota=self.quota, landed=Landed())
        self._dispatcher = self._new_dispatcher(watches=self._watches)
        self._ended = False  # stdin ended: nothing more is read from it
        self._http: HttpFront | None = None
        self._listening = listening  # --http's socket, bound before --user dropped root
        self._stop = asyncio.Event()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        # before the first fork: from the moment a worker exists, SIGTERM means shut down,
        # and so does SIGINT (Ctrl-C), which would otherwise raise out of the loop
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._stop.set)
        heap.keep_freed_memory()  # before the workers fork: they inherit it
        if self._warm is not None:  # after any --user drop, before the workers fork
            self._pool.close_in_children(self._warm.bind())
        self._pool.start()
        self._pool.background("chorus_tools.tools.mutate.temp_names:sweep_temp_files")
        self._pool.background("chorus_tools.tools.bytes.spool:recover",  # killed imports
                              before=time.time())
        self._feed_metrics()
        # the quota's walk at start: its usage figures are known from the first scrape
        priming = asyncio.get_running_loop().create_task(self.quota.prime(self._measure))
        if self._metrics is not None:  # a read of the metrics counts the usage anew
            self._metrics.recount = functools.partial(self._recount, priming)
        expiry = None if self._options.read_only else asyncio.ensure_future(
            sweep_on_time(self._dispatcher, self._upload_timeout))
        await self._output.open()
        if self._listening is not None:
            await self._serve_http(self._listening)
        reader = await self._start_reading() if self._serves_stdio() else None
        self._drain.ready()
        # what start-up made lives as long as the server: out of the collector's sight, a
        # full collection scans only what came since (it took 5-14 ms of CPU, a probe's
        # p99 under load, docs/benchmarks.md), and a respawned worker shares those pages
        gc.freeze()
        await self._stop.wait()
        if expiry is not None:
            expiry.cancel()
        # the drain (docs/protocol.md, Running many): stdin is still read, and every new
        # request, there or over HTTP, is answered shutting_down while in-flight ones finish
        self._drain.begin()
        log.info("draining: %d requests in flight", len(self._tasks()))
        await self._finish()
        priming.cancel()  # a walk the drain came before has nothing left to feed
        if reader is not None:
            reader.close()
        return 0

    def _feed_metrics(self) -> None:
        """The gauges read from the parts that own them, at scrape time."""
        if self._metrics is None:
            return
        providers = self._metrics.providers
        providers["chorus_worker_restarts_total"] = lambda: self._pool.restarts
        if self._history is not None:
            providers["chorus_history_bytes"] = self._history.stored
        providers["chorus_http_connections"] = lambda: (
            self._http.open_connections if self._http is not None else 0)
        if self._warm is not None:
            self._metrics.warm_state = self._warm.state
        for name in ("workspace_bytes", "workspace_files", "quota_bytes", "quota_files"):
            # the usage account's figures (0: not counted yet, or never: no quota, no warm tree)
            providers["chorus_" + name] = lambda name=name: getattr(self.quota.figures(), name)

    async def _recount(self, priming: asyncio.Task) -> None:
        """The usage's figures brought up to date for a read of the metrics: after the
        count at start, from the warm tree (rpc/dispatch/quota.py `recount`)."""
        await asyncio.wait({priming})
        await self.quota.recount(self._measure)

    async def _measure(self, walk: bool) -> dict[str, int] | None:
        """The workspace's usage counted by a worker for no request (the count at start,
        a read of the metrics): never refused as a request past --max-pending would be;
        None if the pool could not (it is closing)."""
        ok, payload, _ = await self._pool.submit(Task(MEASURE, {"walk": walk}),
                                                 part=True).future
        return payload if ok else None

    async def _serve_http(self, sock: socket.socket) -> None:
        from chorus_tools.rpc.wire.http import HttpFront  # h11 only when asked for
        assert self._options.http is not None
        self._http = HttpFront(self._options.http, self._new_dispatcher, self._watches,
                               self._drain, self._metrics)
        address = self._http.start(sock)
        self._pool.more_fds = self._http.connection_fds
        serving(address)

    def _serves_stdio(self) -> bool:
        """Without --http, always; with it, when stdin is a pipe or socket."""
        mode = os.fstat(self._wire_in).st_mode
        return self._options.http is None or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)

    async def _start_reading(self) -> asyncio.BaseTransport | None:
        if not pollable(self._wire_in):
            asyncio.get_running_loop().create_task(self._read_file())
            return None
        _widen_pipe(self._wire_in)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: _InputProtocol(self), os.fdopen(self._wire_in, "rb", closefd=False))
        if hasattr(transport, "max_size"):  # asyncio's pipe transport reads 256 KiB a turn:
            # the widened pipe's 1 MiB at once is a quarter of the wake-ups for an upload's
            # 11 MB lines (docs/benchmarks.md, upload_parts)
            setattr(transport, "max_size", pipes.PIPE_BYTES)  # noqa: B010 (not typed)
        return transport

    async def _read_file(self) -> None:
        """stdin from a file or a device like /dev/null cannot be polled: read it in
        chunks, yielding."""
        while not self._stop.is_set() and (data := os.read(self._wire_in, _CHUNK)):
            self.feed(data)
            await asyncio.sleep(0)
        self.end_of_input()

    def feed(self, data: bytes) -> None:
        if self._ended:
            return
        for event in self._decoder.feed(data):
            self._handle(event)

    def end_of_input(self) -> None:
        if not self._ended:
            self._ended = True
            for event in self._decoder.eof():
                self._handle(event)
            self._stop.set()

    def _output_lost(self) -> None:
        """Nobody can read our answers any more: shut down as at the end of input."""
        if not self._stop.is_set():
            log.warning("the client closed stdout: shutting down")
            self._stop.set()

    def _handle(self, event: Message | TooLarge | BadFrame) -> None:
        framing = event.framing
        if isinstance(event, Message):
            self._dispatcher.submit(event.body, lambda reply: self._send(reply, framing))
        elif isinstance(event, TooLarge):  # counted and logged as any refused message
            self._send(self._dispatcher.refused(error_response(None, protocol_error(
                INVALID_REQUEST, f"Invalid Request: the message is larger than "
                f"{self._options.max_message_bytes} bytes and was skipped."))), framing)
        else:
            self._send(self._dispatcher.refused(error_response(None, protocol_error(
                PARSE_ERROR, f"Parse error: {event.reason}."))), framing)

    def _send(self, reply: Any, framing: Framing) -> None:
        self._output.write(encode(dumps(reply), framing))

    async def _finish(self) -> None:
        """Finish what is in flight (bounded), stop the workers, flush, close."""
        self._watches.close()
        if self._http is not None:
            self._http.end_streams()
        tasks = self._tasks()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=self._options.shutdown_timeout)
            if pending and self._drain.changes:  # never cut a change: it finishes
                pending = await self._settle(pending)
            if pending:
                log.warning("%d requests still running at shutdown: stopping them",
                            len(pending))
        if self._http is not None:
            self._http.stop_listening()
        await self._pool.close()
        if self._warm is not None:
            self._warm.close()
        if tasks := self._tasks():  # stopped jobs now resolve; let their answers out
            await asyncio.wait(tasks, timeout=1.0)
        await self._output.flush()
        if self._records is not None:
            self._records.close()
        if self._history is not None:
            self._history.close()

    async def _settle(self, pending: set[asyncio.Task]) -> set[asyncio.Task]:
        """Past --shutdown-timeout, wait on for the changes running (a rewind or an
        upload's commit is one worker job: killed, it would leave its journal to the next
        start's recovery), up to --request-timeout, the bound their callers already
        accept; the rest are stopped."""
        end = asyncio.get_running_loop().time() + self._options.request_timeout
        while pending and self._drain.changes and asyncio.get_running_loop().time() < end:
            _, pending = await asyncio.wait(pending, timeout=0.05)
        return pending

    def _tasks(self) -> set[asyncio.Task]:
        http = self._http.tasks if self._http is not None else set()
        return set(self._dispatcher.tasks) | http
