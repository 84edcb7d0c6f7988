"""Node clients over --http (docs/protocol.md, HTTP): the TypeScript SDK's Streamable HTTP
client lists and calls every native tool (it checks structuredContent against outputSchema,
isError results too), and MCP's conformance suite (@modelcontextprotocol/conformance) runs
the server scenarios that apply to a server of file tools. Both are npm-installed into the
test cache (tests/npm_cache.py); the suite needs node >= 22, which the npm package node@22
provides where the system's node is older. Each skips, saying why, only where node or npm
is absent or the install fails."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from http_server import HttpServer
from npm_cache import node_major, npm_install
from test_mcp_sdk import LATEST, VALID, every_tool_workspace

SDK = ("@modelcontextprotocol/sdk", "1.32.2")
CONFORMANCE = ("@modelcontextprotocol/conformance", "0.1.16")
NODE22 = ("node", "22.23.3")
# the server scenarios of the suite that apply to a server of tools only (no resources,
# prompts, sampling, elicitation, logging or completions); the suite has no stateless
# (2026-07-28) server scenario in this version
SCENARIOS = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection",
             "server-sse-multiple-streams")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return every_tool_workspace(tmp_path / "ws")


def test_typescript_sdk_lists_and_calls_every_native_tool_over_http(
        ws: Path, tmp_path: Path) -> None:
    prefix = npm_install("ts-sdk", SDK)
    script = prefix / "mcp_http_client.mjs"  # beside its node_modules, so imports resolve
    shutil.copyfile(Path(__file__).with_name("mcp_http_client.mjs"), script)
    with HttpServer(ws, "--workers", "2", token="ts-token", tmp=tmp_path) as server:
        plan = {"headers": {"authorization": "Bearer ts-token"}, "latest": LATEST,
                "calls": {name: arguments for name, (arguments, _) in VALID.items()}}
        done = subprocess.run([str(shutil.which("node")), str(script), server.mcp,
                               json.dumps(plan)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["session"] is None  # terminated by DELETE
        assert sorted(report["tools"]) == sorted(VALID)
        for name, (_, holds) in VALID.items():
            result = report["results"][name]
            assert result["isError"] is False, (name, result)
            assert holds(result["structured"]), (name, result)
        refused = subprocess.run([str(shutil.which("node")), str(script), server.mcp,
                                  json.dumps({"headers": {}, "calls": {}})],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0 and "401" in refused.stderr
    assert (ws / "moved" / "here.txt").read_text() == "moving\n"


def _node22() -> Path:
    system = shutil.which("node")
    if system is not None and node_major(system) >= 22:
        return Path(system)
    prefix = npm_install("conformance", CONFORMANCE, NODE22)
    node = prefix / "node_modules" / ".bin" / "node"
    if node_major(node) < 22:
        pytest.skip(f"npm's node@22 package gave node {node_major(node)} on this machine")
    return node


def test_conformance_server_scenarios_pass_over_http(ws: Path) -> None:
    node = _node22()
    prefix = npm_install("conformance", CONFORMANCE, NODE22)
    suite = prefix / "node_modules" / CONFORMANCE[0] / "dist" / "index.js"
    with HttpServer(ws, "--workers", "2") as server:
        for scenario in SCENARIOS:
            done = subprocess.run([str(node), str(suite), "server", "--url", server.mcp,
                                   "--scenario", scenario], capture_output=True, text=True,
                                  timeout=180)
            out = done.stdout + done.stderr
            assert done.returncode == 0 and " 0 failed" in out, (scenario, out[-3000:])
