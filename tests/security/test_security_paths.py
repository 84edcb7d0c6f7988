"""Hostile paths against every method that takes one, over the real server.

Each method gets the whole corpus: dot-dot in every spelling, absolute paths outside,
NUL bytes, names that only look special (`%2e%2e`, `~`, `$HOME`, backslashes, Unicode
look-alikes), and symlinks that leave the workspace (absolute, relative, chained, through
a parent directory, in a loop). For every path the exact error code is asserted, the
canary text never appears in a response, and the tree outside the workspace is unchanged
(names, contents, modes and mtimes).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from rpc_client import RpcServer, error_code, snapshot

CANARY = "SECRET-7f3a9c-OUTSIDE-CONTENT"
PATTERN = "S.CRET-7f3a9c"  # matches the canary without being it, in case it is echoed
OK = "ok"
OUT = "path_outside_workspace"
NF = "file_not_found"
INVALID = "invalid_params"
METHODS = ("file.read", "file.write", "file.patch", "file.delete", "file.list",
           "file.search", "file.info")


def params_for(method: str, path: str) -> dict:
    return {
        "file.read": {"path": path},
        "file.write": {"path": path, "content": "PWNED\n"},
        "file.patch": {"path": path, "patches": [{"find": "needle", "replace": "x"}]},
        "file.delete": {"path": path},
        "file.list": {"path": path},
        "file.search": {"pattern": PATTERN, "path": path},
        "file.info": {"path": path},
    }[method]


def build(tmp: Path) -> Path:
    """The workspace tmp/ws and the world around it; idempotent, so it repairs what a
    successful delete removed."""
    ws, out = tmp / "ws", tmp / "outside"
    for d in (ws / "dir" / "deeper", ws / "sub", out / "sub", tmp / "wsx"):
        d.mkdir(parents=True, exist_ok=True)
    for f in (out / "canary.txt", out / "sub" / "canary.txt", tmp / "x", tmp / "canary.txt",
              tmp / "wsx" / "canary.txt"):
        if not f.exists():
            f.write_text(CANARY + "\n")
    if not (ws / "file.txt").exists():
        (ws / "file.txt").write_text("inside\n")
    links = {
        "esc_abs": str(out / "canary.txt"),
        "esc_rel": "../outside/canary.txt",
        "esc_dir_abs": str(out),
        "esc_dir_rel": "../outside",
        "esc_deep": "dir/deeper/../../../outside/canary.txt",
        "chain1": "chain2",
        "chain2": "sub/chain3",
        "sub/chain3": "../../outside/canary.txt",
        "chain_dir": "sub/chain_dir2",
        "sub/chain_dir2": "../esc_dir_rel",
        "loop1": "loop2",
        "loop2": "loop1",
        "self_loop": "self_loop",
        "inside_abs": str(ws / "file.txt"),
        "esc_root_abs": "/",
        "dir/up": "..",
        "dir/upup": "../..",
    }
    for name, target in links.items():
        if not os.path.lexists(ws / name):
            os.symlink(target, ws / name)
    return ws


@dataclass(frozen=True)
class Case:
    label: str
    path: Callable[[Path], str]  # from tmp_path
    expect: dict[str, str]  # method -> "ok" or the error code


def every(code: str) -> dict[str, str]:
    return dict.fromkeys(METHODS, code)


def plain_name() -> dict[str, str]:
    """A name that only looks special: nothing there yet, and write creates it literally."""
    return {**every(NF), "file.write": OK}


def final_link_out() -> dict[str, str]:
    """The last component is a symlink leading outside: the link itself can be described
    and deleted (never its target); nothing may go through it."""
    return {**every(OUT), "file.delete": OK, "file.info": OK}


def final_link_loop() -> dict[str, str]:
    return {**every(NF), "file.delete": OK, "file.info": OK}


def rel(p: str) -> Callable[[Path], str]:
    return lambda tmp: p


CORPUS = [
    # dot-dot, lexically
    Case("../x", rel("../x"), every(OUT)),
    Case("..", rel(".."), every(OUT)),
    Case("../", rel("../"), every(OUT)),
    Case("a/../../x", rel("a/../../x"), every(OUT)),
    Case("./../x", rel("./../x"), every(OUT)),
    Case("..//x", rel("..//x"), every(OUT)),
    Case("a/./../..", rel("a/./../.."), every(OUT)),
    Case("dir/../../", rel("dir/../../"), every(OUT)),
    Case("a/b/../../../x", rel("a/b/../../../x"), every(OUT)),
    Case("../ws/file.txt", rel("../ws/file.txt"), every(OUT)),
    Case("../outside/canary.txt", rel("../outside/canary.txt"), every(OUT)),
    Case("dir/deeper/../../../canary.txt", rel("dir/deeper/../../../canary.txt"), every(OUT)),
    Case("./././../../..", rel("./././../../.."), every(OUT)),
    # absolute paths that are not inside
    Case("/etc/passwd", rel("/etc/passwd"), every(OUT)),
    Case("/", rel("/"), every(OUT)),
    Case("abs outside", lambda t: str(t / "outside" / "canary.txt"), every(OUT)),
    Case("abs ws/..", lambda t: f"{t / 'ws'}/../outside/canary.txt", every(OUT)),
    Case("abs ws/.. bare", lambda t: f"{t / 'ws'}/..", every(OUT)),
    Case("abs sibling prefix", lambda t: f"{t / 'ws'}x/canary.txt", every(OUT)),
    Case("abs ws/../x", lambda t: f"{t / 'ws'}/dir/../../x", every(OUT)),
    # not paths at all
    Case("NUL", rel("file.txt\x00../../x"), every(INVALID)),
    Case("NUL only", rel("\x00"), every(INVALID)),
    # an optional path (list, search) left empty means the root, as when it is omitted
    Case("empty", rel(""), {**every(INVALID), "file.list": OK, "file.search": OK}),
    # names that only look special: never decoded, expanded or normalised
    Case("%2e%2e/x", rel("%2e%2e/x"), plain_name()),
    Case("%2e%2e%2fx", rel("%2e%2e%2fx"), plain_name()),
    Case("~", rel("~"), plain_name()),
    Case("~root/x", rel("~root/x"), plain_name()),
    Case("$HOME", rel("$HOME"), plain_name()),
    Case("${HOME}/x", rel("${HOME}/x"), plain_name()),
    Case("..\\x", rel("..\\x"), plain_name()),
    Case("a\\..\\..\\x", rel("a\\..\\..\\x"), plain_name()),
    Case("...", rel("..."), plain_name()),
    Case("one-dot leaders", rel("\u2024\u2024/x"), plain_name()),
    Case("two-dot leader", rel("\u2025/x"), plain_name()),
    Case("fullwidth dots", rel("\uff0e\uff0e/x"), plain_name()),
    Case("dots + zero width space", rel("..\u200b/x"), plain_name()),
    Case("fullwidth solidus", rel("..\uff0fx"), plain_name()),
    # symlinks that leave
    Case("absolute symlink", rel("esc_abs"), final_link_out()),
    Case("relative symlink", rel("esc_rel"), final_link_out()),
    Case("symlink through ../..", rel("esc_deep"), final_link_out()),
    Case("symlink chain", rel("chain1"), final_link_out()),
    Case("absolute symlink to inside", rel("inside_abs"), final_link_out()),
    Case("symlink to /", rel("esc_root_abs"), final_link_out()),
    Case("parent abs symlink", rel("esc_dir_abs/canary.txt"), every(OUT)),
    Case("parent rel symlink", rel("esc_dir_rel/canary.txt"), every(OUT)),
    Case("parent rel symlink, deeper", rel("esc_dir_rel/sub/canary.txt"), every(OUT)),
    Case("parent chain", rel("chain_dir/canary.txt"), every(OUT)),
    Case("parent symlink, new file", rel("esc_dir_rel/new.txt"), every(OUT)),
    Case("dir/up/..", rel("dir/upup/canary.txt"), every(OUT)),
    Case("symlinked dir, listed", rel("esc_dir_rel"), final_link_out()),
    # a trailing '/' names a directory: mutations refuse it before touching the disk;
    # info, normalised to the link itself, describes only the link
    Case("symlinked dir, trailing /", rel("esc_dir_rel/"),
         {**every(OUT), "file.write": "is_directory", "file.patch": "is_directory",
          "file.delete": "is_directory", "file.info": OK}),
    Case("symlink loop", rel("loop1"), final_link_loop()),
    Case("self loop", rel("self_loop"), final_link_loop()),
    Case("through a loop", rel("loop1/x"), every(NF)),
]


# The dialect tools that take a path (`--tools` in docs/protocol.md: the same confinement as
# the core): each meets the corpus as the core method it is built on; `--tools` selects its
# set.
DIALECT_TOOLS = {
    "claude": {
        "Read": ("file.read", lambda p: {"file_path": p}),
        "Write": ("file.write", lambda p: {"file_path": p, "content": "PWNED\n"}),
        "Edit": ("file.patch", lambda p: {"file_path": p, "old_string": "needle",
                                          "new_string": "x"}),
        "MultiEdit": ("file.patch", lambda p: {"file_path": p, "edits": [
            {"old_string": "needle", "new_string": "x"}]}),
        "Delete": ("file.delete", lambda p: {"file_path": p}),
        "LS": ("file.list", lambda p: {"path": p}),
        "Glob": ("file.list", lambda p: {"pattern": "*", "path": p}),
        "Grep": ("file.search", lambda p: {"pattern": PATTERN, "path": p}),
    },
    "scope": {
        "read_file": ("file.read", lambda p: {"path": p}),
        "write_file": ("file.write", lambda p: {"path": p, "content": "PWNED\n",
                                                "createDirs": True}),
        "list_directory": ("file.list", lambda p: {"path": p}),
        "search_files": ("file.search", lambda p: {"pattern": "SECRET", "path": p}),
        "get_file_info": ("file.info", lambda p: {"path": p}),
    },
    "shadow": {
        "Read": ("file.read", lambda p: {"filePath": p}),
        "Write": ("file.write", lambda p: {"file_path": p, "content": "PWNED\n",
                                           "overwrite": True}),
        "Edit": ("file.patch", lambda p: {"file_path": p, "old": "needle", "new": "x"}),
        "ListDir": ("file.list", lambda p: {"path": p}),
        "Glob": ("file.list", lambda p: {"pattern": "*", "root": p}),
        "Grep": ("file.search", lambda p: {"query": PATTERN, "path": p}),
    },
}


def run_corpus(tmp: Path, method: str, *server_args: str,
               params: Callable[[str], dict] | None = None,
               expect_as: str | None = None) -> list[str]:
    """The corpus through `method`: `params` builds its params from a path (default:
    the native method's), `expect_as` names the method whose expectations it meets."""
    params = params or (lambda path: params_for(method, path))
    expect_as = expect_as or method
    ws = build(tmp)
    world = snapshot(tmp, skip=(str(ws),))
    failures = []
    with RpcServer(ws, "--workers", "2", *server_args) as server:
        for case in CORPUS:
            build(tmp)
            path = case.path(tmp)
            reply = server.call(method, params(path))
            got = error_code(reply) or OK
            want = case.expect[expect_as]
            where = f"{method} {case.label!r} ({path!r})"
            if got != want:
                failures.append(f"{where}: got {got}, want {want}: {reply}")
            if CANARY in json.dumps(reply):
                failures.append(f"{where}: the canary leaked: {reply}")
            if got not in (OK, INVALID) and reply["error"]["data"].get("path") != path:
                failures.append(f"{where}: data.path is not the path as given: {reply}")
            if snapshot(tmp, skip=(str(ws),)) != world:
                failures.append(f"{where}: the world outside the workspace changed")
                world = snapshot(tmp, skip=(str(ws),))
            if method == "file.write" and got == OK and not (ws / path).is_file():
                failures.append(f"{where}: not written literally inside the workspace")
    return failures


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30
    assert len({c.label for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("method", METHODS)
def test_hostile_paths(tmp_path: Path, method: str) -> None:
    failures = run_corpus(tmp_path, method)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("toolset, method", [
    (toolset, method) for toolset, tools in DIALECT_TOOLS.items() for method in tools])
def test_hostile_paths_through_dialect_tools(tmp_path: Path, toolset: str, method: str) -> None:
    core, params = DIALECT_TOOLS[toolset][method]
    failures = run_corpus(tmp_path, method, "--tools", toolset, params=params,
                          expect_as=core)
    assert not failures, "\n".join(failures)


def test_hostile_search_paths_python_engine(tmp_path: Path) -> None:
    failures = run_corpus(tmp_path, "file.search", "--search-engine", "python")
    assert not failures, "\n".join(failures)


def test_delete_of_escaping_link_keeps_its_target(tmp_path: Path) -> None:
    ws = build(tmp_path)
    with RpcServer(ws, "--workers", "1") as server:
        for name in ("esc_abs", "esc_rel", "esc_dir_abs", "esc_dir_rel", "chain1"):
            assert server.result("file.delete", {"path": name}) == {"success": True}
            assert not os.path.lexists(ws / name)
    assert (tmp_path / "outside" / "canary.txt").read_text() == CANARY + "\n"
    assert (tmp_path / "outside" / "sub" / "canary.txt").exists()


def test_info_on_escaping_link_describes_only_the_link(tmp_path: Path) -> None:
    ws = build(tmp_path)
    with RpcServer(ws, "--workers", "1") as server:
        for name in ("esc_abs", "esc_rel", "chain1", "esc_dir_rel"):
            got = server.result("file.info", {"path": name})
            assert got["type"] == "symlink" and got["is_symlink"] is True
            assert got["symlink_target"] == os.readlink(ws / name)
            assert all(got[k] is None for k in ("size", "modified", "mode", "mime_type",
                                                "is_binary", "encoding", "lines", "version"))


def test_literal_names_are_created_inside(tmp_path: Path) -> None:
    ws = build(tmp_path)
    names = ["%2e%2e/x", "~", "$HOME/y", "..\\x", "\uff0e\uff0e/x"]
    with RpcServer(ws, "--workers", "1") as server:
        for name in names:
            server.result("file.write", {"path": name, "content": name})
            assert server.result("file.read", {"path": name, "raw": True})["content"] == name
    for name in names:
        assert (ws / name).read_text() == name
    assert not (tmp_path / "x").read_text().startswith("%")


def test_absolute_paths_inside_are_accepted_in_given_and_resolved_form(tmp_path: Path) -> None:
    ws = build(tmp_path)
    link = tmp_path / "ws-link"
    link.symlink_to(ws)
    with RpcServer(link, "--workers", "1") as server:
        for base in (ws, link):
            got = server.result("file.read", {"path": f"{base}/file.txt", "raw": True})
            assert got["content"] == "inside\n"
            assert server.result("file.write", {"path": f"{base}/dir/new.txt",
                                                "content": str(base)})["success"]
            assert (ws / "dir" / "new.txt").read_text() == str(base)
            assert server.result("file.info", {"path": f"{base}/dir/new.txt"})["path"] \
                == "dir/new.txt"
            listed = server.result("file.list", {"path": f"{base}/dir"})["files"]
            assert {f["path"] for f in listed} == {"dir/deeper", "dir/new.txt", "dir/up",
                                                    "dir/upup"}
            found = server.result("file.search", {"pattern": "ws", "path": f"{base}/dir"})
            assert [m["path"] for m in found["matches"]] == ["dir/new.txt"]
            assert server.result("file.patch", {"path": f"{base}/dir/new.txt", "patches": [
                {"find": str(base), "replace": "patched"}]})["success"]
            assert server.result("file.delete", {"path": f"{base}/dir/new.txt"})["success"]
        assert error_code(server.call("file.read", {"path": f"{link}/../outside/canary.txt"})) \
            == OUT


def test_renamed_workspace_does_not_move_the_server(tmp_path: Path) -> None:
    """The root is pinned at start: putting the outside in the workspace's place later
    changes nothing for the running server."""
    ws = build(tmp_path)
    with RpcServer(ws, "--workers", "1") as server:
        assert server.result("file.read", {"path": "file.txt", "raw": True})["content"] \
            == "inside\n"
        ws.rename(tmp_path / "ws-moved")
        (tmp_path / "ws").symlink_to(tmp_path / "outside")
        reply = server.call("file.read", {"path": "canary.txt"})
        assert error_code(reply) == NF and CANARY not in json.dumps(reply)
        assert server.result("file.read", {"path": "file.txt", "raw": True})["content"] \
            == "inside\n"
        server.result("file.write", {"path": "canary.txt", "content": "inside now"})
    assert (tmp_path / "outside" / "canary.txt").read_text() == CANARY + "\n"
    assert (tmp_path / "ws-moved" / "canary.txt").read_text() == "inside now"


def test_search_empty_path_is_the_root_as_in_list(tmp_path: Path) -> None:
    """Regression: file.search refused path "" as invalid_params while file.list took it
    as the root; both paths are optional, so "" means what omitting it means."""
    ws = build(tmp_path)
    with RpcServer(ws, "--workers", "1") as server:
        assert server.result("file.search", {"pattern": "inside", "path": ""})["matches"] \
            == server.result("file.search", {"pattern": "inside"})["matches"]
        assert server.result("file.list", {"path": ""}) == server.result("file.list", {})
