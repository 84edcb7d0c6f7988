"""Fuzzing every method's params (read from the registry, so a new method is fuzzed the
day it lands) with hostile paths and every JSON type in every field, on a workspace full
of traps: symlinks out (relative and absolute), a FIFO, a loop, a dangling link. The
property, in process (each confinement alone: openat2, and the O_NOFOLLOW walk) and
through the real server: never `internal_error`, nothing outside the workspace changes,
no `.chorus-tmp-*` file is left behind. Budget: tests/fuzz_support.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.tools.bytes.uploads import upload_abort
from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.registry import ALL_METHODS, METHODS, Method
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.search.locate import find_ripgrep
from chorus_tools.rpc.dispatch.validate import ParamsValidator
from fanout_runner import settle
from fuzz_support import JSON, TEXT, budget, check_response, no_hang, strict_loads
from e2e_support import E2EServer
from rpc_client import snapshot

COMPONENTS = ["..", ".", "", "a.txt", "sub", "sub/b.txt", "out", "etc", "abs_in", "fifo",
              "loop", "dangling", "outfile", "inner", "bin.png", "%2e%2e", "~", "$HOME",
              "..\\..", "\udcff", "\ud800", "x" * 300, "ünï.txt", "new.txt",
              ".chorus-tmp-1", " ", "\n", "\x00", "*", "**", "[", "passwd", "canary.txt"]
PATTERNS = st.one_of(TEXT, st.sampled_from(
    ["alpha", "(a+)+$", "[", "(?<=a)b", "\\", "a{99999}", "**/*.txt", "{a,b}", "!x", "\\p{L}",
     "(?P<n>a)(?P=n)", "(?i)ALPHA", "^", "$", ".*", "\x00"]))


def hostile_paths(ws: Path) -> st.SearchStrategy[str]:
    prefixes = st.sampled_from(["", "", "/", "//", f"{ws}/", f"{ws}/../outside/", "/etc/",
                                "./", "../"])
    suffixes = st.sampled_from(["", "", "/", "/.", "/..", "\x00"])
    return st.one_of(
        st.builds(lambda p, parts, s: p + "/".join(parts) + s, prefixes,
                  st.lists(st.sampled_from(COMPONENTS), max_size=4), suffixes),
        TEXT)


def value_for(schema: dict[str, Any], name: str, paths: st.SearchStrategy) -> st.SearchStrategy:
    """A plausible value for `schema`, often a hostile one, sometimes any JSON at all."""
    return st.one_of(_typed(schema, name, paths), _typed(schema, name, paths), JSON)


def _typed(schema: dict[str, Any], name: str, paths: st.SearchStrategy) -> st.SearchStrategy:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "oneOf" in schema:
        return st.one_of(*(_typed(s, name, paths) for s in schema["oneOf"]))
    kinds = schema.get("type", "string")
    if isinstance(kinds, list):
        return st.one_of(*(_typed({**schema, "type": k}, name, paths) for k in kinds))
    if kinds == "string":
        if "path" in name:
            return paths
        return PATTERNS if name in ("pattern", "glob", "find") else TEXT
    if kinds == "integer":
        return st.one_of(st.integers(-3, 8), st.sampled_from([0, 2**31, 2**63, -(2**63)]))
    if kinds == "boolean":
        return st.booleans()
    if kinds == "array":
        return st.lists(_typed(schema.get("items", {}), name, paths), max_size=3)
    if kinds == "object":
        return params_for(schema, paths)
    return st.none()


def params_for(schema: dict[str, Any], paths: st.SearchStrategy) -> st.SearchStrategy:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.builds(
        lambda known, extra: {**extra, **known},
        st.fixed_dictionaries(
            {k: value_for(v, k, paths) for k, v in props.items() if k in required},
            optional={k: value_for(v, k, paths) for k, v in props.items() if k not in required}),
        st.dictionaries(st.sampled_from(["bogus", "Path", "path "]), JSON, max_size=1))


@pytest.fixture
def traps(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A workspace of traps beside an `outside` directory holding canaries."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "canary.txt").write_text("CANARY-OUTSIDE\n")
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "sub/b.txt").write_text("  alpha\r\n")
    (ws / "bin.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    (ws / "out").symlink_to("../outside")
    (ws / "outfile").symlink_to("../outside/canary.txt")
    (ws / "etc").symlink_to("/etc")
    (ws / "abs_in").symlink_to(ws / "a.txt")
    (ws / "inner").symlink_to("sub")
    (ws / "loop").symlink_to("loop")
    (ws / "dangling").symlink_to("nowhere/at/all")
    os.mkfifo(ws / "fifo")
    yield ws, outside


def _temp_files(ws: Path) -> list[str]:
    return [os.path.join(d, n) for d, dirs, names in os.walk(ws) for n in names + dirs
            if n.startswith(".chorus-tmp-")]


def _method_ids() -> list[str]:
    return sorted(METHODS)


_TOOLS = {f"{m.toolset}:{m.name}": m for m in ALL_METHODS if m.target is not None}


@pytest.mark.parametrize("key", sorted(_TOOLS))
def test_tools_in_process_never_fail_inside_or_reach_outside(
        traps: tuple[Path, Path], key: str) -> None:
    """Every tool of every set, called as its worker would: each example runs on openat2
    or on the O_NOFOLLOW walk, and each must hold alone."""
    ws, outside = traps
    method: Method = _TOOLS[key]
    validator = ParamsValidator({method.name: method})
    rg_path, pcre2 = find_ripgrep(None)
    contexts = [ToolContext(ws=Workspace(str(ws), use_openat2=use), rg_path=rg_path,
                            limits=Limits(search_file_timeout=0.2), rg_has_pcre2=pcre2)
                for use in (True, False)]
    before = snapshot(outside)

    @budget(0.5)
    @given(params_for(method.params, hostile_paths(ws)), st.sampled_from(contexts))
    def call(params: dict[str, Any], ctx: ToolContext) -> None:
        try:
            with no_hang():
                kwargs = validator.check(method, params)
                result = settle(ctx, method.func(ctx, **kwargs))
                if "upload_id" in result:  # a begun upload keeps its spool until it ends
                    upload_abort(ctx, result["upload_id"])
        except ToolError as err:
            assert err.code != "internal_error", (params, err.to_data())
        assert snapshot(outside) == before, params
        assert _temp_files(ws) == [], params

    try:
        call()
    finally:
        for ctx in contexts:
            os.close(ctx.ws.root_fd)


def test_tools_through_the_server_never_fail_inside_or_reach_outside(
        traps: tuple[Path, Path]) -> None:
    ws, outside = traps
    before = snapshot(outside)
    calls = st.sampled_from(_method_ids()).flatmap(
        lambda n: st.tuples(st.just(n), params_for(METHODS[n].params, hostile_paths(ws))))
    with E2EServer(ws, "--workers", "2", "--allow-root", "--search-file-timeout", "0.2",
                   "--request-timeout", "20") as server:

        outstanding: set[int] = set()  # sent, not answered (an example that failed early
        # leaves its replies to come in a later one)

        def answers(requests: list[tuple[str, dict[str, Any]]]) -> dict[int, Any]:
            ids = [server.request(n, p) for n, p in requests]
            outstanding.update(ids)
            replies = {}
            while len(replies) < len(ids):
                reply = strict_loads(server.recv_raw(timeout=30))
                if reply.get("method") == "workspace/didChange":  # a fuzzed watch at work
                    assert "id" not in reply and reply["params"]["watch_id"], reply
                    continue
                check_response(reply)
                assert reply["id"] in outstanding, reply  # each id answered once
                outstanding.discard(reply["id"])
                if reply["id"] in ids:
                    replies[reply["id"]] = reply
            return replies

        @budget(1)
        @given(st.lists(calls, min_size=1, max_size=4))
        def batch(requests: list[tuple[str, dict[str, Any]]]) -> None:
            replies = answers(requests)
            begun = [r["result"]["upload_id"] for r in replies.values()
                     if "upload_id" in r.get("result", {})]
            answers([("file.upload_abort", {"upload_id": u}) for u in begun])  # their spools
            assert snapshot(outside) == before, requests
            assert _temp_files(ws) == [], requests

        batch()
        assert server.proc.poll() is None
    assert server.proc.returncode == 0
