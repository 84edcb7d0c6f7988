"""What a model pays to know the tools (measured in docs/benchmarks.md, "The latest full
run"), for every tool set the registry has, so a set added later is held to it too:
`tools/list`'s names, descriptions and input schemas together smaller than the reference
filesystem server's, short `instructions`, and one `type` per schema (a type array draws
the Inspector's --strict warning and some model APIs refuse it)."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from chorus_tools.rpc.mcp.face import INSTRUCTIONS, _tools, instructions
from chorus_tools.rpc.mcp.revision import SUPPORTED
from chorus_tools.tools.registry import TOOLSETS

# @modelcontextprotocol/server-filesystem's 14 tools: names, descriptions and input
# schemas as compact JSON (benchmarks/ measures it beside ours: `context` rows)
REFERENCE_BYTES = 7987
# the native set lists the code tools too (docs/protocol.md, "Code by structure"): under
# 10,000 bytes with them
NATIVE_BYTES = 10_000
INSTRUCTIONS_MAX = 400


def core_bytes(tools: list[dict[str, Any]]) -> int:
    core = [{"name": t["name"], "description": t["description"],
             "inputSchema": t["inputSchema"]} for t in tools]
    return len(json.dumps(core, separators=(",", ":"), ensure_ascii=False).encode())


def type_arrays(schema: Any, where: str = "") -> Iterator[str]:
    """Every place below `schema` whose `type` is a list."""
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            yield where or "(root)"
        for key, value in schema.items():
            yield from type_arrays(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from type_arrays(value, f"{where}[{i}]")


@pytest.mark.parametrize("toolset", TOOLSETS)
def test_tools_list_costs_less_than_the_reference_server(toolset: str) -> None:
    tools = _tools((toolset,), False, SUPPORTED[0])
    assert tools, f"the {toolset} set lists no tool"
    budget = NATIVE_BYTES if toolset == "native" else REFERENCE_BYTES
    assert core_bytes(tools) < budget, (toolset, core_bytes(tools))


def test_instructions_are_short() -> None:
    assert len(INSTRUCTIONS.encode()) <= INSTRUCTIONS_MAX
    assert len(instructions(("native",)).encode()) <= INSTRUCTIONS_MAX  # the code sentence


def test_code_tools_join_any_set_only_when_asked() -> None:
    """--code-tools (the pseudo set "code") lists the five code tools beside a set's own,
    under the native set's budget; without it a set lists what it always did."""
    code = {"code_outline", "code_symbols", "code_references", "code_map", "code_edit"}
    for toolset in TOOLSETS:
        plain = {t["name"] for t in _tools((toolset,), False, SUPPORTED[0])}
        both = _tools((toolset, "code"), False, SUPPORTED[0])
        assert {t["name"] for t in both} == plain | code
        assert (plain >= code) == (toolset == "native")
        assert core_bytes(both) < NATIVE_BYTES, (toolset, core_bytes(both))
        said = instructions((toolset, "code"))
        assert said.endswith("before reading whole files.")
        assert instructions((toolset,)).endswith("before reading whole files.") == \
            (toolset == "native")


@pytest.mark.parametrize("toolset", TOOLSETS)
def test_no_schema_has_a_type_array(toolset: str) -> None:
    found = [f"{t['name']}.{part}{at}" for t in _tools((toolset,), False, SUPPORTED[0])
             for part in ("inputSchema", "outputSchema")
             for at in type_arrays(t.get(part, {}))]
    assert not found
