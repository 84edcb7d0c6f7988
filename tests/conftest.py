"""Shared fixtures: a fresh workspace beside a sibling 'outside' directory for escapes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.context import ToolContext
from tools.sandbox import Workspace


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, holding a canary that must never leak."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "canary.txt").write_text("CANARY-OUTSIDE\n")
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture(params=["openat2", "walk"])
def ctx(request: pytest.FixtureRequest, root: Path) -> ToolContext:
    """A tool context on `root`, once with openat2 and once with the O_NOFOLLOW walk."""
    ws = Workspace(str(root), use_openat2=request.param == "openat2")
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)
