"""The history's command-line face (docs/protocol.md, History: from the command line): a
person lists a file's versions and the checkpoints, restores a version and rewinds to a
checkpoint without writing JSON-RPC.

    chorus-tools history     --workspace DIR PATH [--limit N]
    chorus-tools restore     --workspace DIR PATH [VERSION]
    chorus-tools checkpoints --workspace DIR
    chorus-tools rewind      --workspace DIR CHECKPOINT [--dry-run] [--force]

No second implementation: each command is the method of that name, run through the
server's own dispatcher in this process (the path judged first, a worker in the workers'
Landlock domain opening it beneath the workspace with openat2, the atomic write, the
history keeping what a restore or rewind replaces so it can be undone, the audit record
under --records), on the history the server itself would use (`--history`, or the default
place and its fallbacks). `checkpoints` reads the store's log, which no method lists.
Exit status: 0 done, 1 the call was refused (its error printed), 2 a bad command line or
a history that cannot be opened.

The server's own history options beyond `--history` and `--history-bytes` are added to
its parser here too (`add_options`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shlex
import sys
from collections.abc import Callable
from typing import Any

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.dispatch.history import History, checkpoint_id
from chorus_tools.rpc.dispatch.history_calls import HistoryCalls
from chorus_tools.rpc.dispatch.history_home import open_history
from chorus_tools.rpc.dispatch.records import Records, inside
from chorus_tools.rpc.dispatch.state_places import StartError
from chorus_tools.rpc.options import size
from chorus_tools.rpc.process.pool import Pool
from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.timefmt import iso_utc
from chorus_tools.tools.walk.globs import GlobError

COMMANDS = ("history", "restore", "checkpoints", "rewind")
EPILOG = ("The history from the command line: chorus-tools history|restore|checkpoints|"
          "rewind --workspace DIR ... (each with --help).")
TOTAL_BYTES = 1 << 30
_BUDGET = 256 << 20
_TIMEOUT = 600.0


def wants(argv: list[str] | None) -> bool:
    """Whether the command line names one of these commands rather than the server."""
    given = sys.argv[1:] if argv is None else argv
    return bool(given) and given[0] in COMMANDS


def add_options(p: argparse.ArgumentParser, size: Callable[[str], int]) -> None:
    """The server's options for where histories go and what a full one does."""
    p.add_argument("--history-total-bytes", type=size, default=TOTAL_BYTES, metavar="N",
                   help="all histories in the default place together, across workspaces: "
                        "at start, those of workspaces that no longer exist or that hold "
                        f"nothing are dropped, then the least recently used (default: "
                        f"{TOTAL_BYTES}, 1 GiB)")
    p.add_argument("--history-full", choices=("refuse", "write"), default="refuse",
                   help="when the history cannot keep what a change replaces (its disk "
                        "full, its directory unwritable): refuse the change, write_failed "
                        "with data.where 'history' (default), or make it and say so in the "
                        "result's 'history' member")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="chorus-tools", description="The history from the command line: list a "
        "file's versions and the checkpoints, restore a version, rewind to a checkpoint. "
        "Run `chorus-tools --workspace DIR` (no command) for the server.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", required=True, metavar="DIR",
                        help="the workspace the server serves")
    common.add_argument("--history", metavar="DIR",
                        help="the server's --history, if it was given one (default: where "
                             "the server keeps this workspace's history)")
    common.add_argument("--history-bytes", type=size(1), default=_BUDGET, metavar="N",
                        help=f"the server's --history-bytes (default: {_BUDGET})")
    common.add_argument("--records", metavar="DIR",
                        help="append an audit record of a restore or rewind to "
                             "DIR/records.jsonl, as the server does")
    common.add_argument("--deny", action="append", default=[], metavar="GLOB",
                        help="repeatable: paths refused, as the server's --deny")
    common.add_argument("--json", action="store_true",
                        help="print the method's result as JSON instead of text")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    h = sub.add_parser("history", parents=[common],
                       help="list what a file held before each change, newest first")
    h.add_argument("path")
    h.add_argument("--limit", type=int, default=20, metavar="N")
    r = sub.add_parser("restore", parents=[common],
                       help="put a version of a file back (default: the newest, what the "
                            "last change replaced)")
    r.add_argument("path")
    r.add_argument("version", nargs="?")
    sub.add_parser("checkpoints", parents=[common], help="list the checkpoints, newest first")
    w = sub.add_parser("rewind", parents=[common],
                       help="undo every change made since a checkpoint")
    w.add_argument("checkpoint")
    w.add_argument("--dry-run", action="store_true", help="say what would change, change "
                   "nothing")
    w.add_argument("--force", action="store_true", help="also rewind files someone else "
                   "changed since")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level="WARNING",
                        format="chorus-tools %(levelname)s %(name)s: %(message)s")
    if not os.path.isdir(args.workspace):
        return _fail(f"--workspace {args.workspace!r} does not exist or is not a directory")
    if args.records and inside(args.records, args.workspace):
        return _fail(f"--records {args.records!r} lies inside the workspace")
    try:
        deny = DenyRules(args.deny)
        history = open_history(args.history, args.workspace, args.history_bytes,
                               TOTAL_BYTES)
    except (StartError, GlobError) as exc:
        return _fail(str(exc))
    if history is None:
        return _fail("the history is off (--history 0): there is nothing to list, restore "
                     "or rewind")
    try:
        if args.command == "checkpoints":
            return _checkpoints(history, args.json)
        return asyncio.run(_serve(args, history, deny))
    finally:
        history.close()


def _checkpoints(history: History, as_json: bool) -> int:
    history.load()
    found = [{"checkpoint": checkpoint_id(offset), "label": label,
              "time": iso_utc(history.checkpoint_times[offset])}
             for offset, label in sorted(history.checkpoints.items(), reverse=True)]
    if as_json:
        print(json.dumps({"checkpoints": found}))
        return 0
    if not found:
        print("no checkpoints")
    for cp in found:
        print(f"{cp['checkpoint']:<10}  {cp['time']}  {cp['label']}")
    return 0


async def _serve(args: argparse.Namespace, history: History, deny: DenyRules) -> int:
    ctx = ToolContext(ws=Workspace(args.workspace, deny=deny), workers=1)
    ctx.history_spools, ctx.history_budget = history.spools(2), args.history_bytes
    records = Records(args.records) if args.records else None
    pool = Pool(ctx, 1, 16)
    pool.start()
    dispatcher = Dispatcher(pool, request_timeout=_TIMEOUT, records=records,
                            roots=ctx.ws.roots,
                            history=HistoryCalls(history, ctx.ws.roots, False))

    async def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        answered: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        dispatcher.submit(orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                        "params": params}), answered.set_result)
        return await answered

    try:
        return await _COMMANDS[args.command](args, call)
    finally:
        await pool.close()
        if records is not None:
            records.close()


Call = Callable[[str, dict[str, Any]], Any]


async def _history(args: argparse.Namespace, call: Call) -> int:
    reply = await call("file.history", {"path": args.path, "limit": args.limit})
    if "error" in reply or args.json:
        return _show(reply, args.json)
    versions = reply["result"]["versions"]
    if not versions:
        print(f"{args.path}: no changes kept")
    for v in versions:
        print(f"{v['version']:<10}  {v['time']}  {v['method']:<14}  {_held(v)}")
    return 0


def _held(version: dict[str, Any]) -> str:
    if not version["exists"]:
        return "(no file)"
    text = f"{version['bytes']} bytes"
    if version.get("moved_to"):
        text += f", then moved to {version['moved_to']}"
    return text + (" (evicted: no longer kept)" if version["evicted"] else "")


async def _restore(args: argparse.Namespace, call: Call) -> int:
    version = args.version
    if version is None:
        listed = await call("file.history", {"path": args.path, "limit": 1})
        if "error" in listed:
            return _show(listed, args.json)
        if not listed["result"]["versions"]:
            return _fail(f"{args.path}: the history holds no version of it", 1)
        version = listed["result"]["versions"][0]["version"]
    reply = await call("file.restore", {"path": args.path, "version": version})
    if "error" in reply or args.json:
        return _show(reply, args.json)
    undo = (await call("file.history", {"path": args.path, "limit": 1}))["result"]
    given = [*(["--history", args.history] if args.history else []),  # else the default
             *(["--records", args.records] if args.records else [])]  # recorded as this one
    print(f"restored {args.path} to {version}; undo with: " + shlex.join([
        "chorus-tools", "restore", "--workspace", args.workspace, *given, args.path,
        undo["versions"][0]["version"]]))
    return 0


async def _rewind(args: argparse.Namespace, call: Call) -> int:
    reply = await call("workspace.rewind", {"checkpoint": args.checkpoint,
                                            "dry_run": args.dry_run, "force": args.force})
    if "error" in reply or args.json:
        return _show(reply, args.json)
    done = reply["result"]
    verb = "would be " if args.dry_run else ""
    for key in ("restored", "deleted"):
        for path in done[key]:
            print(f"{verb}{key}: {path}")
    for path in done.get("conflicts", []):
        print(f"left alone (changed by someone else; --force rewinds it): {path}")
    if args.dry_run and done["diff"]:
        print(done["diff"], end="")
    return 0


_COMMANDS = {"history": _history, "restore": _restore, "rewind": _rewind}


def _show(reply: dict[str, Any], as_json: bool) -> int:
    """A reply as JSON, or its error on stderr; the exit status it means."""
    if as_json:
        print(json.dumps(reply.get("result", reply.get("error"))))
    if "error" in reply:
        data = reply["error"].get("data", {})
        if not as_json:
            print(f"chorus-tools: {data.get('error', 'error')}: {reply['error']['message']}",
                  file=sys.stderr)
        return 1
    return 0


def _fail(message: str, status: int = 2) -> int:
    print(f"chorus-tools: {message}", file=sys.stderr)
    return status
