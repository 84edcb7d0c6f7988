"""Regression (issue 22, fault 4): a glob whose {a,b} groups expand past 1,000
alternatives was internal_error ("a bug") in file.list's pattern and exclude and in
file.search's glob, and as --deny it crashed the server at start with a traceback. It is
invalid_pattern naming the parameter and the limit, and exit 2 with one line at start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from rpc_client import REPO, RpcServer

OVER = "{a,b}" * 10  # 1,024 alternatives
UNDER = "{a,b}" * 9  # 512: still fine


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ab.txt").write_text("needle\n")
    return root


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.parametrize("method,params,param", [
    ("file.list", {"pattern": OVER}, "pattern"),
    ("file.list", {"pattern": "**", "exclude": OVER}, "exclude"),
    ("file.list", {"pattern": "**", "exclude": ["x", OVER]}, "exclude"),
    ("file.search", {"pattern": "needle", "glob": OVER}, "glob"),
    ("file.search", {"pattern": "needle", "glob": ["*.txt", f"!{OVER}"]}, "glob"),
])
@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_regression_brace_glob_over_1000_expansions_is_invalid_pattern(
        ws: Path, engine: str, method: str, params: dict, param: str) -> None:
    with RpcServer(ws, "--search-engine", engine) as server:
        err = server.error(method, params)
        assert err["data"]["error"] == "invalid_pattern", err
        assert err["data"]["param"] == param
        assert "1,000" in err["data"]["reason"]
        # a glob under the limit still works, and the server goes on serving
        ok = {**params, param: UNDER if isinstance(params[param], str) else [UNDER]}
        assert "result" in server.call(method, ok)


def test_regression_brace_glob_deny_exits_2_with_one_line(ws: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                          "--deny", OVER], check=False, cwd=REPO, capture_output=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    lines = run.stderr.decode().splitlines()
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and "--deny" in lines[0] and "1,000" in lines[0], lines
    assert run.stdout == b""
