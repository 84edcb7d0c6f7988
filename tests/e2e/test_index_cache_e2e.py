"""--index-cache through real servers (docs/protocol.md, "Code by structure"): a server on
a copy of a tree whose records earlier servers filed (two at once) reads every record
(each one's time refreshed, none written again) and answers code.symbols,
code.references, code.outline, code.map and workspace.status exactly as the first server
and as a server without the cache; a file changed in a copy is parsed (a new record),
never answered from the record of its old bytes; a DIR the agent could reach ends the
start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rpc_client import REPO, RpcServer
from warm_support import canonical

SAMPLES = Path(__file__).parent.parent / "samples" / "code"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("code.symbols", {"query": "area"}), ("code.symbols", {"query": "aera"}),
    ("code.symbols", {"query": "Shape"}),
    ("code.symbols", {"query": "Store/load"}), ("code.references", {"name": "area"}),
    ("code.references", {"name": "read"}), ("code.references", {"name": "os"}),
    ("code.outline", {"path": "shapes.py"}), ("code.outline", {"path": "pkg/m07.py"}),
    ("code.map", {"max_bytes": 2048})]
STATUS = ("symbols", "symbol_files", "symbols_indexed", "files")
HOURS_AGO = time.time() - 7200  # older than a hit's refresh (record_cache.TOUCH_EVERY)


def _tree(root: Path) -> Path:
    root.mkdir(parents=True)
    for sample in SAMPLES.iterdir():
        shutil.copy(sample, root / sample.name)
    (root / "pkg").mkdir()
    for i in range(48):  # enough files that the warm process hands batches to a helper
        (root / "pkg" / f"m{i:02d}.py").write_text(
            f"import os\n\n\nclass Store{i}:\n    def load(self):\n        return read(os.sep)\n"
            f"\n\ndef read(x):\n    return x * {i}\n\n\nVALUE_{i} = read({i})\n")
    (root / "notes.txt").write_text("not code\n")
    return root


def _ready(server: RpcServer) -> dict[str, Any]:
    """workspace.status once the tree and the symbol index are ready (a hang guard)."""
    end = time.monotonic() + 120
    while True:
        status = server.call("workspace.status", timeout=60)["result"]
        if status["tree"] == "ready" and status.get("symbols") in ("ready", "off"):
            return {key: status.get(key) for key in STATUS}
        assert time.monotonic() < end, status
        time.sleep(0.05)


def _answers(server: RpcServer) -> list[str]:
    return [canonical(server.call(method, params, timeout=60), method)
            for method, params in CALLS]


def _serve(ws: Path, *extra: str) -> tuple[dict[str, Any], list[str]]:
    with RpcServer(ws, "--allow-root", "--workers", "2", *extra) as server:
        status = _ready(server)
        answers = _answers(server)
        assert server.call("workspace.status")["result"]["symbols"] == "ready"
    return status, answers


def _records(cache: Path) -> dict[str, os.stat_result]:
    return {str(p.relative_to(cache)): p.stat() for p in cache.glob("*/*")}


@pytest.mark.long  # six servers, four at once: ~12 s
def test_a_copy_is_answered_from_the_records_as_a_parse_answers(tmp_path: Path) -> None:
    first, copy, changed = _tree(tmp_path / "first"), tmp_path / "copy", tmp_path / "changed"
    twin = tmp_path / "twin"
    for other in (copy, changed, twin):
        shutil.copytree(first, other)
    text = (changed / "shapes.py").read_text()
    (changed / "shapes.py").write_text(text.replace("def area", "def aera"))  # same size
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(3) as pool:  # the servers without the cache, meanwhile, and
        # a twin filing the same records into the same directory at the same time
        plain_copy, plain_changed = pool.submit(_serve, copy), pool.submit(_serve, changed)
        filing = pool.submit(_serve, twin, "--index-cache", str(cache))
        status, answers = _serve(first, "--index-cache", str(cache))
        plain_copy, plain_changed = plain_copy.result(), plain_changed.result()
        assert filing.result() == (status, answers)
    assert status["symbols"] == "ready" and status["symbol_files"] == 58
    assert all('"result"' in answer for answer in answers), answers
    filed = _records(cache)
    assert len(filed) == 58  # one record a code file, none for notes.txt
    for name in filed:
        os.utime(cache / name, (HOURS_AGO, HOURS_AGO))

    assert _serve(copy, "--index-cache", str(cache)) == (status, answers) == plain_copy
    read = _records(cache)
    assert read.keys() == filed.keys()
    assert all(read[n].st_ino == filed[n].st_ino for n in read)  # none written again
    assert all(read[n].st_mtime > HOURS_AGO + 3600 for n in read)  # every one was a hit

    status, answers = _serve(changed, "--index-cache", str(cache))
    assert (status, answers) == plain_changed
    assert '"name": "aera"' in answers[1] and '"name": "aera"' not in plain_copy[1][1]
    assert len(_records(cache)) == 59  # the changed file's record, beside the old one


@pytest.mark.parametrize("where", ["inside", "holds", "index_off"])
def test_a_directory_the_agent_could_reach_ends_the_start(tmp_path: Path, where: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    cache = {"inside": ws / ".cache", "holds": tmp_path, "index_off": tmp_path / "c"}[where]
    extra = ["--index-memory", "0"] if where == "index_off" else []
    done = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                           "--index-cache", str(cache), "--allow-root", *extra],
                          cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=60)
    assert done.returncode == 2
    assert b"--index-cache" in done.stderr
    assert not (ws / ".cache").exists()
