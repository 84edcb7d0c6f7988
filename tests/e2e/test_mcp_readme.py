"""The host configurations in docs/hosts.md (and the one README's "Use it from an MCP
host" shows) work when pasted: each JSON block, Codex's TOML table and every `claude mcp
add` / `codex mcp add` line is parsed from the page, its placeholders replaced (the
installed script's path, a workspace for the folder), and the exact command it holds is
started by the official SDK's stdio client, which initializes and calls a tool.
"""

from __future__ import annotations

import json
import re
import shlex
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from rpc_client import REPO

SCRIPT_PLACEHOLDER = "/home/me/.venv/bin/chorus-tools"
FOLDER_PLACEHOLDERS = ("/home/me/project", "${workspaceFolder}", "$PWD")


def _section() -> str:
    """README's section on MCP hosts, then docs/hosts.md."""
    text = (REPO / "README.md").read_text()
    start = text.index("## Use it from an MCP host")
    return text[start:text.index("\n## ", start + 1)] + (REPO / "docs" / "hosts.md").read_text()


def _configs() -> list[tuple[str, str, list[str]]]:
    """(host, command, args) of every stdio configuration the pages show."""
    found = []
    for block in re.findall(r"```json\n(.*?)```", _section(), re.S):
        servers = json.loads(block)
        if "type" in servers and servers["type"] == "http":
            continue  # an HTTP host's shape: tests/project/test_deploy_recipe.py serves it
        key = "servers" if "servers" in servers else "mcpServers"
        entry = servers[key]["chorus-tools"]
        found.append((key, entry["command"], entry["args"]))
    for block in re.findall(r"```toml\n(.*?)```", _section(), re.S):
        entry = tomllib.loads(block)["mcp_servers"]["chorus-tools"]
        found.append(("codex config.toml", entry["command"], entry["args"]))
    for line in re.findall(r"^(?:claude|codex) mcp add .*$", _section(), re.M):
        words = shlex.split(line)
        command = words.index("--") + 1
        found.append((f"{words[0]} mcp add", words[command], words[command + 1:]))
    return found


def test_the_pages_show_every_host() -> None:
    hosts = [host for host, _, _ in _configs()]
    assert hosts.count("mcpServers") == 3 and hosts.count("servers") == 1
    assert "claude mcp add" in hosts and "codex mcp add" in hosts
    assert "codex config.toml" in hosts


@pytest.mark.parametrize("host, command, args", _configs())
def test_a_pasted_configuration_starts_a_working_server(
        tmp_path: Path, host: str, command: str, args: list[str]) -> None:
    script = Path(sysconfig.get_paths()["scripts"]) / "chorus-tools"
    assert script.is_file(), "the chorus-tools script is not installed beside this Python"
    (tmp_path / "hello.txt").write_text("hello\n")
    assert command == SCRIPT_PLACEHOLDER, host
    real_args = [str(tmp_path) if a in FOLDER_PLACEHOLDERS else a for a in args]
    assert real_args == ["--workspace", str(tmp_path)], (host, args)
    seen: dict[str, Any] = {}

    async def main() -> None:
        params = StdioServerParameters(command=str(script), args=real_args)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                seen["init"] = await session.initialize()
                seen["read"] = await session.call_tool("file_read", {"path": "hello.txt"})
    anyio.run(main)
    assert seen["init"].serverInfo.name == "chorus-tools"
    assert seen["read"].content[0].text == "     1\thello"
