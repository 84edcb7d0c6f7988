"""The project's own reference: docs/protocol.md is what docs/generate.py prints (so it
cannot drift from the registry, the error table and the CLI), the generator walks the
registry generically (a method of a new tool set lands in its own group with no change to
the generator), and no link in the project's documents points outside the project."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from chorus_tools.rpc.cli import parser
from chorus_tools.rpc.wire.errors import CODES
from chorus_tools.tools import registry
from chorus_tools.tools.registry import METHODS, Method
from rpc_client import REPO

GENERATOR = REPO / "docs" / "generate.py"
REFERENCE = REPO / "docs" / "protocol.md"


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_reference_is_what_the_generator_prints() -> None:
    printed = subprocess.run([sys.executable, str(GENERATOR)], capture_output=True,
                             check=True, cwd=REPO, timeout=60).stdout.decode()
    assert printed == REFERENCE.read_text(), (
        "docs/protocol.md is stale: run `python docs/generate.py --write`")


def test_reference_holds_every_method_error_and_option() -> None:
    text = REFERENCE.read_text()
    for name in [*METHODS, "rpc.discover"]:
        assert f"#### `{name}`" in text, name
    for name, code in CODES.items():
        assert re.search(rf"^\| {code} \| `{name}` \| \S", text, re.M), name
    for action in parser()._actions:
        for option in action.option_strings:
            assert f"`{option}`" in text, option
    assert "{{" not in text
    assert "\\\\|" not in text  # a table cell's '|' escaped once, not twice


def test_every_parameter_and_result_field_is_listed() -> None:
    text = REFERENCE.read_text()
    for method in METHODS.values():
        section = text.split(f"#### `{method.name}`", 1)[1].split("\n#### ", 1)[0]
        for schema in (method.params, method.result):
            variants = schema.get("oneOf", [schema])
            for variant in variants:
                for prop in variant.get("properties", {}):
                    assert f"| `{prop}` |" in section, (method.name, prop)


def test_a_new_tool_set_is_grouped_without_touching_the_generator(
        generate: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = Method("Frobnicate", "chorus_tools.tools.read.info:info", "Frobnicate a file.",
                   {"type": "object", "required": ["file_path"], "additionalProperties": False,
                    "properties": {"file_path": {"type": "string"},
                                   "depth": {"type": "integer", "minimum": 0}}},
                   {"type": "object", "required": ["ok"],
                    "properties": {"ok": {"type": "boolean"}}},
                   toolset="newset", title="Frobnicate", destructive=True)
    monkeypatch.setitem(registry.METHODS, extra.name, extra)
    monkeypatch.setattr(generate, "openrpc_document", lambda *_: {"methods": [
        {"name": extra.name, "summary": extra.summary, "result": {"schema": extra.result},
         "params": [{"name": "file_path", "schema": {"type": "string"}},
                    {"name": "depth", "schema": {"type": "integer", "default": 2}}]}]})
    section = generate.methods_section()
    assert "### Tool set `newset`" in section
    assert "only when the server runs with `--tools` naming `newset`" in section
    assert "#### `Frobnicate`" in section and 'title "Frobnicate"' in section
    assert "| `file_path` | string | yes |  |" in section
    assert "| `depth` | integer ≥ 0 | no | `2` |" in section
    assert "| `ok` | boolean | yes |" in section
    assert '"destructiveHint": true' in section


def test_error_prose_for_an_unknown_error_is_refused(generate: ModuleType) -> None:
    with pytest.raises(SystemExit):
        generate.errors_table("| `no_such_error` | when | data | fix |\n")


def _documents() -> list[Path]:
    """Every Markdown file of the project; docs/template/ is left out, its links are
    written for docs/protocol.md, where they are checked."""
    skip = {".git", "node_modules", "target", ".pytest_cache", "build"}
    return [p for p in REPO.rglob("*.md")
            if not skip & set(p.relative_to(REPO).parts)
            and not p.relative_to(REPO).parts[0].endswith(".egg-info")
            and not p.is_relative_to(REPO / "docs" / "template")]


def test_no_link_points_outside_the_project() -> None:
    documents = _documents()
    assert REPO / "README.md" in documents and REFERENCE in documents
    bad = []
    for doc in documents:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
            path, _, anchor = target.partition("#")
            resolved = (doc.parent / path).resolve() if path else doc
            if re.match(r"[a-z]+:", target):
                bad.append(f"{doc.name}: {target} (outside the project)")
            elif not resolved.is_relative_to(REPO) or not resolved.exists():
                bad.append(f"{doc.name}: {target}")
            elif anchor and anchor not in _anchors(resolved):
                bad.append(f"{doc.name}: {target} (no such heading)")
    assert bad == []


def _anchors(document: Path) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    if document.is_dir() or document.suffix != ".md":
        return set()
    headings = re.findall(r"^#+ (.+)$", document.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
