"""The project's own reference: docs/protocol.md is what docs/generate.py prints (so it
cannot drift from the registry, the error table and the CLI), the generator walks the
registry generically (a method of a new tool set lands in its own group with no change to
the generator), and no link in the project's documents points outside the project."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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
    written for docs/protocol.md, where they are checked, and so are hidden folders (.git,
    a .venv made in the checkout: other projects' files)."""
    skip = {"node_modules", "target", "build"}
    return [p for p in REPO.rglob("*.md")
            if not skip & set(p.relative_to(REPO).parts)
            and not any(part.startswith(".") for part in p.relative_to(REPO).parts[:-1])
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


def _layout_modules() -> set[str]:
    """The modules of rpc/ and tools/ that CONTRIBUTING's layout names, as paths: each line
    of its first code block is a name (a folder ends in `/`; `a, b` names two modules)
    indented two spaces beneath its folder, then a few words."""
    text = (REPO / "CONTRIBUTING.md").read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    named: set[str] = set()
    folders: list[tuple[int, str]] = []
    for line in block.splitlines():
        names = re.match(r"( *)([\w./]+(?:, [\w.]+)*)(?: |$)", line)
        if not names or "->" in line.split("  ")[0]:
            continue
        indent = len(names.group(1))
        folders = [(i, f) for i, f in folders if i < indent]
        for name in names.group(2).split(", "):
            if name.endswith("/"):
                folders.append((indent, name))
            elif folders and folders[0][1] in ("rpc/", "tools/"):
                named.add("".join(f for _, f in folders) + name + ".py")
    return named


def test_contributing_layout_names_every_module_where_it_lives() -> None:
    modules = {str(p.relative_to(REPO)) for top in ("rpc", "tools")
               for p in (REPO / top).rglob("*.py") if p.name != "__init__.py"}
    named = _layout_modules()
    assert sorted(modules - named) == [], "modules CONTRIBUTING's layout leaves out"
    assert sorted(named - modules) == [], "modules CONTRIBUTING's layout names that do not exist"


def test_readme_is_a_tour_whose_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert ci[-2:] == ["python -m pytest -n auto", "python -m pytest -n auto -m long"]
    assert any("-e '.[test]'" in line for line in ci[:-2]), "CI installs the test extra first"
    assert "python -m pytest -n auto -m long" in readme
    commands = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    assert "pip install -e '.[test]' && python -m pytest -n auto\n" in commands


def test_readme_commands_install_in_a_virtual_environment() -> None:
    """Issue 35: a Debian-style system refuses `pip install` outside a virtual
    environment, so the README's first two commands make one and use it, each on its own
    (a newcomer may run the tests' command first)."""
    readme = (REPO / "README.md").read_text()
    commands = [line for line in readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
                if line and not line.startswith("#")]
    assert commands[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip ")
    assert commands[1].startswith("python3 -m venv .venv && . .venv/bin/activate && pip "
                                  "install -e '.[test]'")


def _readme_mcp_section() -> str:
    readme = (REPO / "README.md").read_text()
    return readme.split("## Use it from an MCP host", 1)[1].split("\n## ", 1)[0]


def test_readme_names_every_method_tools_list_leaves_out() -> None:
    """Issue 35: the README's list of what tools/list leaves out missed workspace_status
    and rpc_discover."""
    hidden = [m.name for m in METHODS.values() if not m.mcp_tool] + ["rpc.discover"]
    assert "workspace.status" in hidden and len(hidden) >= 4
    section = _readme_mcp_section()
    assert [name for name in hidden if f"`{name}`" not in section] == []


NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def test_toolsets_page_counts_and_names_every_set() -> None:
    """Issue 35: docs/toolsets.md spoke of "three seed dialects" while seven sets exist."""
    text = (REPO / "docs" / "toolsets.md").read_text()
    intro = text.split("\n## ", 1)[0]
    beside = [s for s in registry.TOOLSETS if s != "native"]
    assert re.search(rf"\b{NUMBERS[len(beside)]} tool sets run beside `native`", intro, re.I)
    assert [s for s in beside if f"`{s}`" not in intro] == []


def _table(section: str) -> list[list[str]]:
    """The cells of the first Markdown table in section, header and rule left out."""
    lines = section.split("\n|", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    return [[cell.strip().replace("\\|", "|") for cell in
             re.split(r"(?<!\\)\|", line.strip().strip("|"))] for line in lines]  # \| is text


def test_benchmarks_page_shows_the_committed_run() -> None:
    """docs/benchmarks.md's latest table and scale series are docs/bench/latest.json's,
    row by row, so the page cannot show one run beside another run's pictures."""
    run = json.loads((REPO / "docs" / "bench" / "latest.json").read_text())
    latest = _page_section("## The latest full run")
    assert "(bench/table.svg)" in latest and "(bench/scale.svg)" in latest
    _assert_rows(latest, run)
    scale = _table(latest.split("### Scale", 1)[1])
    assert len(scale) == len(run["series"])
    for cells, series in zip(scale, run["series"]):
        assert cells[0].startswith(series["title"] + " vs "), series["key"]
        assert cells[1] == ", ".join(f"{label} " + ("—" if row["ratio"] is None else
                                                     f"{row['ratio']:.2f}×") for label, row in
                                     zip(series["labels"], series["rows"])), series["key"]


def test_benchmarks_page_shows_the_rows_run_since() -> None:
    """The rows run again after the full run (`--only`, one command) are docs/bench/
    since.json's, row by row, under their own commit."""
    run = json.loads((REPO / "docs" / "bench" / "since.json").read_text())
    _assert_rows(_page_section("## Rows run again since the full run"), run)


def _page_section(title: str) -> str:
    page = (REPO / "docs" / "benchmarks.md").read_text()
    return page.split(title, 1)[1].split("\n## ", 1)[0]


def _assert_rows(section: str, run: dict[str, Any]) -> None:
    assert f"at commit {run['versions']['chorus_tools_commit']}" in section
    table = _table(section)
    assert [cells[0] for cells in table] == [row["scenario"] for row in run["rows"]]
    for cells, row in zip(table, run["rows"]):
        ratio = "—" if row["ratio"] is None else f"{row['ratio']:.2f}×"
        assert cells[3].split(" (")[0] == ratio, row["key"]  # "(results differ: …)" may follow
        assert cells[4].endswith({"ok": "✓", "missed": "✗ missed"}.get(row["status"], "")), row


def test_readme_figures_are_the_committed_runs() -> None:
    """The README's speed figures are generated from docs/bench/latest.json (issue 35:
    they had drifted from the table): `python -m benchmarks.readme` writes them."""
    sys.path.insert(0, str(REPO))
    from benchmarks.readme import block, committed

    assert block(committed()) in (REPO / "README.md").read_text()
