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
from typing import Any

import pytest

from http_server import HttpServer
from npm_cache import node_major, npm_install
from test_mcp_sdk import LATEST, VALID, every_tool_workspace

SDK = ("@modelcontextprotocol/sdk", "1.32.2")
CONFORMANCE = ("@modelcontextprotocol/conformance", "0.2.0-alpha.12")
NODE22 = ("node", "22.23.3")
HANDSHAKE = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
# Every server scenario of the suite that applies to a server of file tools, at every
# version it applies to (`conformance list --server`). Left out, as they need what such a
# server does not have: the reference fixture's diagnostic tools (tools-call-*,
# json-schema-2020-12, input-required-result-*, http-custom-header-server-validation: an
# x-mcp-header tool), resources, prompts, logging, completions, sampling, elicitation,
# and the tasks and skills extensions.
SCENARIOS = {
    "server-initialize": ("2025-06-18", "2025-11-25"),
    "server-session-lifecycle": HANDSHAKE,
    "ping": ("2025-06-18", "2025-11-25"),
    "tools-list": ("2025-06-18", "2025-11-25", MODERN),
    "dns-rebinding-protection": ("2025-11-25", MODERN),
    "server-sse-multiple-streams": ("2025-11-25", MODERN),
    "server-sse-polling": ("2025-11-25",),
    "server-stateless": (MODERN,),
    "http-header-validation": (MODERN,),
    "caching": (MODERN,),
}
# Checks of those scenarios that probe what this server does not have, each with the
# words of the suite's own verdict on it: the diagnostic tools of the reference fixture
# ("Not testable"), and prompts and resources (caching's hints on them: method not found).
ABSENT = {
    "sep-2575-server-rejects-undeclared-capability": "Not testable: ",
    "sep-2575-missing-capability-http-400": "Not testable: ",
    "sep-2575-http-server-no-independent-requests-on-stream": "Not testable: ",
    "sep-2575-server-no-log-without-loglevel": "Not testable: ",
    "sep-2549-prompts-list-caching-hints": "returned JSON-RPC error -32601",
    "sep-2549-resources-list-caching-hints": "returned JSON-RPC error -32601",
    "sep-2549-resources-templates-list-caching-hints": "returned JSON-RPC error -32601",
}


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


def _checks(node: Path, suite: Path, url: str, scenario: str, version: str,
            out: Path) -> list[dict[str, Any]]:
    """One scenario run at one protocol version: the checks it wrote."""
    done = subprocess.run([str(node), str(suite), "server", "--url", url, "--scenario",
                           scenario, "--spec-version", version, "-o", str(out)],
                          capture_output=True, text=True, timeout=180)
    written = list(out.glob("*/checks.json"))
    assert len(written) == 1, (scenario, version, done.stdout[-3000:], done.stderr[-3000:])
    return json.loads(written[0].read_text())


@pytest.mark.long
def test_conformance_server_scenarios_pass_over_http(ws: Path, tmp_path: Path) -> None:
    """Every applicable check of every applicable scenario passes, at every version: the
    2026-07-28 ones (server-stateless, http-header-validation) as much as the others.
    A check counted as absent must fail for exactly the reason named, so nothing else
    hides behind it."""
    node = _node22()
    prefix = npm_install("conformance", CONFORMANCE, NODE22)
    suite = prefix / "node_modules" / CONFORMANCE[0] / "dist" / "index.js"
    failed, absent = [], set()
    with HttpServer(ws, "--workers", "2") as server:
        for scenario, versions in SCENARIOS.items():
            for version in versions:
                out = tmp_path / f"{scenario}-{version}"
                for check in _checks(node, suite, server.mcp, scenario, version, out):
                    if check["id"] in ABSENT:
                        assert ABSENT[check["id"]] in check.get("errorMessage", ""), check
                        absent.add(check["id"])
                    elif check["status"] not in ("SUCCESS", "INFO", "SKIPPED"):
                        failed.append((scenario, version, check["id"], check["status"],
                                       check.get("errorMessage")))
    assert failed == []
    assert absent == set(ABSENT)
