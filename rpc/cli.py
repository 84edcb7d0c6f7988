"""`chorus-tools --workspace DIR [options]`: parse the options, check the workspace, take
the wire for ourselves, and run the server until end of input or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import pwd
import signal
import socket
import stat
import sys
from typing import TYPE_CHECKING, NoReturn

from chorus_tools.rpc.dispatch.discover import server_version
from chorus_tools.rpc.process.privileges import drop_to, preload
from chorus_tools.rpc import history_cli
from chorus_tools.rpc.dispatch.history import History
from chorus_tools.rpc.dispatch.history_home import give_history, open_history
from chorus_tools.rpc.dispatch.read_store import ReadStore, open_store
from chorus_tools.rpc.dispatch.state_places import StartError
from chorus_tools.rpc.dispatch.records import inside
from chorus_tools.rpc.ops import logs
from chorus_tools.rpc.options import SIZES, Parser, count, seconds, size
from chorus_tools.rpc.wire.http_options import HttpOptions, is_loopback, listen
from chorus_tools.rpc.wire.stdio import Server, ServerOptions
from chorus_tools.tools.context import KIB, MIB, Limits, ToolContext
from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.walk.globs import GlobError
from chorus_tools.tools.registry import TOOLSETS, clashes
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.search.locate import find_ripgrep
from chorus_tools.tools.patch.oxlint import Oxlint, find_oxlint, give as give_oxlint, \
    start as start_oxlint, usable as oxlint_usable

if TYPE_CHECKING:
    from chorus_tools.tools.warm.record_cache import RecordCache


def parser() -> argparse.ArgumentParser:
    """The command line, also read by docs/generate.py for the options reference."""
    p = Parser(
        prog="chorus-tools",
        description="Sandboxed file tools for agents, confined to one workspace: an MCP "
                    "(Model Context Protocol) server and a plain JSON-RPC 2.0 server at "
                    "once, over stdin/stdout (newline-delimited, or Content-Length "
                    "framed) and, with --http, over HTTP. An MCP host starts it as a "
                    "stdio server: chorus-tools --workspace DIR (docs/hosts.md).",
        epilog=f"Options ending in -bytes, and --index-memory, take {SIZES}. "
               f"{history_cli.EPILOG}")
    p.add_argument("--version", action=_Version)
    p.add_argument("--workspace", required=True, metavar="DIR",
                   help="the directory every path is confined to")
    p.add_argument("--workers", type=count(1), default=os.cpu_count() or 1, metavar="N",
                   help="worker processes (default: the number of CPUs)")
    p.add_argument("--search-engine", choices=("auto", "ripgrep", "python"), default="auto",
                   help="auto (default): ripgrep when found, else the python engine")
    p.add_argument("--rg", metavar="PATH", help="the ripgrep binary to use")
    p.add_argument("--oxlint", metavar="PATH",
                   help="the oxlint binary that finds JavaScript and TypeScript problems "
                        "(default: the one installed with the package, else on PATH); "
                        "none: check none (problems_checked false)")
    p.add_argument("--tools", type=_toolsets, default=("native",), metavar="SET[,SET...]",
                   help=f"tool sets MCP's tools/list shows and plain JSON-RPC accepts "
                        f"besides file.*: {', '.join(TOOLSETS)} (default: native)")
    p.add_argument("--code-tools", action="store_true",
                   help="list the code.* tools (code_outline, code_symbols, code_references, "
                        "code_map, code_edit) in MCP's tools/list with any tool set; the "
                        "native set always lists them, and plain JSON-RPC always accepts them")
    p.add_argument("--read-only", action="store_true",
                   help="refuse every mutating method (permission_denied) and leave them "
                        "out of MCP's tools/list")
    p.add_argument("--deny", action="append", default=[], metavar="GLOB",
                   help="repeatable: paths matching GLOB (e.g. '**/.env', '*.pem', "
                        "'.git/**'; matched after symlinks resolve) are permission_denied "
                        "for every method and never listed, searched or watched")
    p.add_argument("--syntax-gate", choices=("loose", "all", "off"), default="loose",
                   help="loose: refuse a looser-tier edit that breaks syntax; all: refuse "
                        "any write or edit that does; off: only report (default: loose)")
    p.add_argument("--problems-gate", choices=("off", "introduced"), default="off",
                   help="introduced: refuse a write or edit that brings a problem (F821, "
                        "I001, ...) the file did not have; off: only report (default: off)")
    p.add_argument("--problems", choices=("on", "off"), default="on",
                   help="off: diagnostics check syntax only, never problems (each says "
                        "problems_checked false), to drop the check's cost (default: on)")
    p.add_argument("--records", metavar="DIR",
                   help="append an audit record of every mutating call to DIR/records.jsonl "
                        "(DIR must lie outside the workspace)")
    p.add_argument("--history", metavar="DIR",
                   help="keep what every mutation replaces in DIR (outside the workspace) "
                        "for file.history, file.restore and workspace.rewind (default: the "
                        "user's state directory, one per workspace, else a private one "
                        "beside the temporary files, else memory; 0 turns it off)")
    p.add_argument("--history-bytes", type=size(1), default=256 * 1024 * 1024, metavar="N",
                   help="the history's size budget; the oldest content goes first "
                        "(default: 268435456, 256 MiB)")
    history_cli.add_options(p, size(1))
    p.add_argument("--index-memory", type=size(0), default=256 * 1024 * 1024,
                   metavar="BYTES",
                   help="memory the warm tree and content index that speed up repeated "
                        "listing and searching may add to their process, over its baseline "
                        "of about 40 MB (default: 268435456, 256 MiB); 0 turns them off: "
                        "every call walks the tree")
    p.add_argument("--index-cache", metavar="DIR",
                   help="keep the symbol index's records of parsed files in DIR (outside "
                        "the workspace; made, mode 0700, if missing), filed by a hash of "
                        "each file's bytes and of our parsing code, so a server started "
                        "again on the same code, or on a copy of it, reads them instead of "
                        "parsing; many servers may share one DIR (default: none)")
    p.add_argument("--index-cache-bytes", type=size(1), default=1024 * MIB, metavar="SIZE",
                   help="disk --index-cache may take: a server that added records removes "
                        "the least recently used past it (default: 1073741824, 1 GiB)")
    p.add_argument("--state", metavar="DIR",
                   help="where the claude set remembers, per workspace, the files read, so "
                        "an Edit in a later server process knows them (DIR must lie outside "
                        "the workspace; default: $XDG_STATE_HOME/chorus-tools, else "
                        "~/.local/state/chorus-tools)")
    p.add_argument("--user", metavar="NAME",
                   help="when started as root: open the workspace and records, then drop "
                        "to this user (its groups, gid and uid) before serving")
    p.add_argument("--allow-root", action="store_true",
                   help="run as root without --user, silencing the warning")
    p.add_argument("--log-level", default="warning",
                   choices=("debug", "info", "warning", "error", "critical"),
                   help="what goes to stderr (default: warning); stdout is protocol only")
    p.add_argument("--log-format", default="text", choices=("text", "json"),
                   help="json: one object per line on stderr (time, level, event; a "
                        "request's id, method, path, outcome, ms) (default: text)")
    p.add_argument("--log-requests", action="store_true",
                   help="log every request at info level (never its content)")
    p.add_argument("--no-metrics", dest="metrics", action="store_false",
                   help="count nothing (rpc.metrics and /metrics read empty): for measuring "
                        "what counting costs (benchmarks/ops_rows.py)")
    http = p.add_argument_group("HTTP (MCP Streamable HTTP at /mcp, JSON-RPC at /rpc)")
    http.add_argument("--http", type=_http_address, metavar="[HOST:]PORT",
                      help="also serve HTTP on HOST (default 127.0.0.1) and PORT (0: any "
                           "free port; the bound address is printed on stderr); stdio "
                           "is served beside it only when stdin is a pipe or socket")
    http.add_argument("--http-token-file", metavar="FILE",
                      help="every HTTP request must carry 'Authorization: Bearer TOKEN', "
                           "TOKEN being FILE's content (required off loopback)")
    http.add_argument("--http-max-head-bytes", type=size(1024), default=64 * KIB,
                      metavar="N", help="largest request line and headers; larger: 431 "
                                        "(default: 65536)")
    http.add_argument("--http-head-timeout", type=seconds, default=10.0, metavar="SECONDS",
                      help="time a new connection, or a request whose head has begun, has "
                           "to send the whole head; then 408 and closed (default: 10)")
    http.add_argument("--http-idle-timeout", type=seconds, default=60.0, metavar="SECONDS",
                      help="a kept-alive connection idle this long between requests, or a "
                           "body stalled this long, is closed (default: 60)")
    http.add_argument("--http-max-connections", type=count(1), default=256, metavar="N",
                      help="HTTP connections open at once, lowered to keep a quarter of the "
                           "descriptor limit (RLIMIT_NOFILE) for the workspace's own work; "
                           "past it the connection idle longest is closed, or the new one "
                           "is refused 503 (default: 256)")
    http.add_argument("--metrics-public", action="store_true",
                      help="serve GET /metrics without the token (/healthz and /readyz "
                           "never need it)")
    limits = p.add_argument_group("limits (each answered with a structured error when hit)")
    for flag, default, what in [
        ("--max-message-bytes", 64 * MIB, "largest JSON-RPC message read; larger: -32600"),
        ("--max-read-bytes", 256 * KIB, "content bytes one file.read returns"),
        ("--max-image-bytes", 10 * MIB, "largest image file.read returns as base64"),
        ("--max-write-bytes", 64 * MIB, "largest content file.write or file.patch writes"),
        ("--max-line-chars", 2000, "characters of one line shown before it is cut"),
        ("--max-diff-bytes", 64 * KIB, "size of file.patch's diff before it is cut"),
        ("--max-pending", 1024, "requests waiting for a worker before server_busy"),
        ("--syntax-max-bytes", 4 * MIB, "largest file the syntax guard and diagnostics parse"),
        ("--max-chunk-bytes", 16 * MIB, "largest file.read_bytes range or upload part"),
        ("--max-archive-entries", 1_000_000, "entries an archive put in may hold"),
        ("--max-archive-bytes", 4 * 1024 * MIB, "bytes an archive put in may expand to"),
    ]:
        in_bytes = flag.endswith("-bytes")
        limits.add_argument(flag, type=size(1) if in_bytes else count(1), default=default,
                            metavar="SIZE" if in_bytes else "N",
                            help=f"{what} (default: {default})")
    for flag, default, what in [
        ("--request-timeout", 60.0, "a request running longer is stopped: timeout"),
        ("--shutdown-timeout", 10.0, "time to finish in-flight requests at exit"),
        ("--search-file-timeout", 1.0, "per-file budget of the python search engine"),
        ("--syntax-timeout", 5.0, "parsing budget of one call's syntax guard and diagnostics"),
        ("--upload-timeout", 600.0, "an upload untouched this long is removed"),
    ]:
        limits.add_argument(flag, type=seconds, default=default, metavar="SECONDS",
                            help=f"{what} (default: {default:g})")
    limits.add_argument("--quota-bytes", type=size(0), default=None, metavar="SIZE",
                        help="bytes the workspace's regular files may take; a change past "
                             "it is quota_exceeded, a shrinking one always passes "
                             "(default: unlimited)")
    limits.add_argument("--quota-files", type=count(0), default=None, metavar="N",
                        help="files and directories the workspace may hold (default: "
                             "unlimited)")
    return p


class _Version(argparse.Action):
    """--version, looked up only when asked for (reading package metadata is slow)."""

    def __init__(self, option_strings: list[str], dest: str, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"chorus-tools {server_version()}")
        parser.exit()


def _toolsets(text: str) -> tuple[str, ...]:
    sets = tuple(dict.fromkeys(s.strip() for s in text.split(",")))
    unknown = [s for s in sets if s not in TOOLSETS]
    if unknown or not sets:
        raise argparse.ArgumentTypeError(
            f"unknown tool set {unknown[0] if unknown else text!r}; "
            f"choose from {', '.join(TOOLSETS)}")
    return sets


def _http_address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError("expected [HOST:]PORT, PORT from 0 to 65535")
    return host.strip("[]") or "127.0.0.1", int(port)


def _http_options(args: argparse.Namespace) -> HttpOptions | None:
    """--http's settings: off loopback only with a token, read once at start."""
    if args.http is None:
        if args.http_token_file:
            _fail("--http-token-file needs --http")
        return None
    host, port = args.http
    token = None
    if args.http_token_file:
        try:
            with open(args.http_token_file, "rb") as f:
                token = f.read().strip()
        except OSError as exc:
            _fail(f"--http-token-file {args.http_token_file!r}: {exc.strerror}")
        if not token:
            _fail(f"--http-token-file {args.http_token_file!r} is empty")
    elif not is_loopback(host):
        _fail(f"--http {host}:{port} listens beyond this machine: give --http-token-file "
              "FILE so every request must carry its token")
    return HttpOptions(host, port, token, args.max_message_bytes,
                       max_head_bytes=args.http_max_head_bytes,
                       head_timeout=args.http_head_timeout,
                       idle_timeout=args.http_idle_timeout,
                       max_connections=args.http_max_connections,
                       metrics_public=args.metrics_public)


def _listen(http: HttpOptions) -> socket.socket:
    try:
        return listen(http)
    except OSError as exc:  # the port is taken, or the address is not this machine's
        _fail(f"--http {http.host}:{http.port}: {exc.strerror or exc}")


def _fail(message: str) -> NoReturn:
    logs.refusal(message)
    sys.exit(2)


def _check_workspace(path: str) -> None:
    """The workspace must be a directory: each way it is not, said as what it is."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        _fail(f"--workspace {path!r} does not exist; create it, or give the directory the "
              "agent may work in")
    except NotADirectoryError:
        _fail(f"--workspace {path!r}: a parent of it is a file, not a directory")
    except OSError as exc:
        _fail(f"--workspace {path!r} cannot be reached: {exc.strerror}")
    if not stat.S_ISDIR(st.st_mode):
        _fail(f"--workspace {path!r} is a file, not a directory; give the directory that "
              "holds it (e.g. its parent)")


def _ripgrep(args: argparse.Namespace) -> tuple[str | None, bool]:
    """(path, has_pcre2) of the ripgrep to search with: none for the python engine, which
    never runs one (a --rg beside it is no contradiction), and a refusal when one was asked
    for but none is usable."""
    if args.search_engine == "python":
        return None, False
    found = find_ripgrep(args.rg)
    if found[0] is None and (args.rg or args.search_engine == "ripgrep"):
        _fail(f"no usable ripgrep binary ({args.rg or 'rg not on PATH'}); "
              "use --search-engine python or --rg PATH")
    return found


def _tool_context(args: argparse.Namespace) -> ToolContext:
    rg_path, pcre2 = _ripgrep(args)
    limits = Limits(max_read_bytes=args.max_read_bytes, max_image_bytes=args.max_image_bytes,
                    max_write_bytes=args.max_write_bytes, max_line_chars=args.max_line_chars,
                    max_diff_bytes=args.max_diff_bytes,
                    search_file_timeout=args.search_file_timeout,
                    syntax_max_bytes=args.syntax_max_bytes, syntax_timeout=args.syntax_timeout,
                    max_chunk_bytes=args.max_chunk_bytes, upload_timeout=args.upload_timeout,
                    max_archive_entries=args.max_archive_entries,
                    max_archive_bytes=args.max_archive_bytes)
    try:
        deny = DenyRules(args.deny)
    except GlobError as exc:
        _fail(f"--deny: {exc}")
    return ToolContext(ws=Workspace(args.workspace, deny=deny), limits=limits,
                       search_engine=args.search_engine, rg_path=rg_path,
                       workers=args.workers, rg_has_pcre2=pcre2, read_only=args.read_only,
                       syntax_gate=args.syntax_gate, problems_gate=args.problems_gate,
                       problems=args.problems == "on",
                       oxlint=None if args.problems == "off" else _oxlint(args.oxlint))


def _oxlint(explicit: str | None) -> Oxlint | None:
    """The JS/TS checker (tools/patch/oxlint.py); an --oxlint that cannot run ends the
    start, none found otherwise only says problems_checked false."""
    if explicit == "none":
        return None
    binary = find_oxlint(explicit)
    if binary is None and explicit:
        _fail(f"--oxlint {explicit!r} is not an executable ELF binary; give oxlint's path, "
              "or none")
    return None if binary is None else start_oxlint(binary)


def _index_cache(args: argparse.Namespace,
                 user: pwd.struct_passwd | None) -> RecordCache | None:
    """--index-cache's directory, opened before any drop (tools/warm/record_cache.py);
    one the agent could reach, or that could reach the workspace, ends the start."""
    if args.index_cache is None:
        return None
    from chorus_tools.tools.warm.record_cache import CacheError, open_cache  # numpy: only then
    if not args.index_memory:
        _fail("--index-cache needs the symbol index: drop --index-memory 0")
    if inside(args.index_cache, args.workspace) or inside(args.workspace, args.index_cache):
        _fail(f"--index-cache {args.index_cache!r} and the workspace overlap; the records "
              "must lie outside it (and it outside them)")
    try:
        return open_cache(args.index_cache, args.index_cache_bytes,
                          os.geteuid() if user is None else user.pw_uid,
                          os.getegid() if user is None else user.pw_gid)
    except CacheError as exc:
        _fail(str(exc))


def _user(args: argparse.Namespace) -> pwd.struct_passwd | None:
    """The --user to become, checked before anything is opened."""
    if not args.user:
        return None
    if os.geteuid() != 0:
        _fail(f"--user {args.user!r} needs the server to be started as root "
              "(it already runs as an unprivileged user: drop --user)")
    try:
        return pwd.getpwnam(args.user)
    except KeyError:
        _fail(f"--user {args.user!r}: no such user")


def _read_store(args: argparse.Namespace, user: pwd.struct_passwd | None) -> ReadStore | None:
    """The claude set's reads on disk, opened (and handed to --user) before any drop
    (rpc/dispatch/read_store.py: an unusable --state ends the start, the default place
    falls back)."""
    if "claude" not in args.tools:
        return None
    return open_store(args.state, args.workspace,
                      (user.pw_uid, user.pw_gid) if user else None)


def _readable(ctx: ToolContext) -> None:
    """The workspace can be listed by the user the server serves as: otherwise every
    call would fail, so the start does (exit 2)."""
    try:
        os.close(os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=ctx.ws.root_fd))
    except OSError as exc:
        _fail(f"--workspace {ctx.ws.roots[0]!r}: {exc.strerror} (the server runs as uid "
              f"{os.geteuid()}, which must be able to read and enter it)")


def _drop_privileges(args: argparse.Namespace, user: pwd.struct_passwd,
                     ctx: ToolContext) -> None:
    """Become `user` (the workspace and records are already open). A ripgrep the user
    cannot run is dropped for the python engine, unless it was asked for."""
    preload()
    if ctx.oxlint is not None:
        give_oxlint(ctx.oxlint, user.pw_uid, user.pw_gid)
    drop_to(user)
    if ctx.rg_path is not None and not os.access(ctx.rg_path, os.X_OK):
        if args.rg or args.search_engine == "ripgrep":
            _fail(f"user {args.user!r} cannot run ripgrep at {ctx.rg_path}; install it where "
                  "that user can, or use --search-engine python")
        logging.getLogger("chorus.cli").warning(
            "user %r cannot run ripgrep at %s: searching with the python engine",
            args.user, ctx.rg_path)
        ctx.rg_path, ctx.rg_has_pcre2 = None, False
    if ctx.oxlint is not None and not oxlint_usable(ctx.oxlint):
        logging.getLogger("chorus.cli").warning(
            "user %r cannot run oxlint at %s: JavaScript and TypeScript problems are not "
            "checked", args.user, ctx.oxlint.binary)
        ctx.oxlint = None


def _take_the_wire() -> tuple[int, int]:
    """Keep private copies of stdin/stdout and point fds 0 and 1 at /dev/null and stderr,
    so no stray print, worker or child process can write into the protocol stream."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


_PATH_OPTIONS = ("records", "history", "state", "index_cache", "rg", "oxlint",
                 "http_token_file")


def _refuse_empty_paths(args: argparse.Namespace) -> None:
    """A path option given as '' (a template's unset variable) was read as left out:
    `--records ''` kept no audit records and said nothing."""
    for name in _PATH_OPTIONS:
        if getattr(args, name) == "":
            _fail(f"--{name.replace('_', '-')} '': an empty path; give one, or leave the "
                  "option out")


def _hold_standard_fds() -> None:
    """A stdin, stdout or stderr the launcher left closed becomes /dev/null: otherwise the
    workspace's directory took the free number 0 or 1, and _take_the_wire then pointed it
    at /dev/null or stderr (a start refused as 'Not a directory'). No stdin reads as its
    end; answers to no stdout go nowhere. Python made a closed stderr's sys.stderr None,
    and print(file=None) writes to stdout: a refusal's line went out as protocol."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # lives as long as the process


def main(argv: list[str] | None = None) -> None:
    _hold_standard_fds()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # until the server takes over
    if history_cli.wants(argv):  # chorus-tools history|restore|checkpoints|rewind
        sys.exit(history_cli.main(argv))
    args = parser().parse_args(argv)
    logs.configure(args.log_level, args.log_format, args.log_requests)
    _refuse_empty_paths(args)
    user = _user(args)
    _check_workspace(args.workspace)
    if args.records and inside(args.records, args.workspace):
        _fail(f"--records {args.records!r} lies inside the workspace; audit records must be "
              "out of the agent's reach")
    if args.code_tools:
        args.tools = (*args.tools, "code")  # the pseudo set their also_in names
    clash = clashes(args.tools)
    if clash:
        sets = next(iter(clash.values()))
        _fail(f"--tools {','.join(args.tools)}: the sets {' and '.join(sets)} both define "
              f"{', '.join(n for n, s in clash.items() if s == sets)}; choose one of them")
    http = _http_options(args)
    ctx = _tool_context(args)
    ctx.index_cache = _index_cache(args, user)
    try:  # docs/protocol.md, History: where it lives
        history = open_history(args.history, args.workspace, args.history_bytes,
                               args.history_total_bytes)
        reads = _read_store(args, user)
    except StartError as exc:
        _fail(str(exc))
    options = ServerOptions(workers=args.workers, max_message_bytes=args.max_message_bytes,
                            request_timeout=args.request_timeout,
                            shutdown_timeout=args.shutdown_timeout,
                            max_pending=args.max_pending, records_dir=args.records,
                            toolsets=args.tools, read_only=args.read_only,
                            history=history, history_full=args.history_full,
                            index_memory=args.index_memory, reads=reads, http=http,
                            metrics=args.metrics, quota_bytes=args.quota_bytes,
                            quota_files=args.quota_files)
    wire_in, wire_out = _take_the_wire()
    listening = _listen(http) if http is not None else None  # before --user drops root
    try:  # opens the records as root
        server = Server(ctx, options, wire_in, wire_out, listening)
    except OSError as exc:  # named as the other path options name theirs
        _fail(f"--records {args.records!r}: {exc.strerror} ({exc.filename or args.records}); "
              "choose a directory this user can write")
    if user is not None:
        _give(history, user)
        _drop_privileges(args, user, ctx)
    elif os.geteuid() == 0 and not args.allow_root:
        logging.getLogger("chorus.cli").warning(
            "running as root: a tool call can reach whatever root can beneath the "
            "workspace; start with --user NAME to drop privileges (--allow-root silences "
            "this)")
    _readable(ctx)
    sys.exit(asyncio.run(server.run()))


def _give(history: History | None, user: pwd.struct_passwd) -> None:
    if history is not None and history.directory is not None:
        give_history(history.directory, user)
