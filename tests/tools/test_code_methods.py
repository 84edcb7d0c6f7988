"""code.outline, code.symbols and code.references called as the runtime calls them (a
FanOut's parts run in order), on both search engines: their replies, orders, limits and
errors (docs/protocol.md, "Code by structure")."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.code import across
from chorus_tools.tools.code.find import find_symbols
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.code.references import references
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from fanout_runner import ENGINES, RG_PATH, RG_PCRE2, settle

SAMPLES = Path(__file__).parent.parent / "samples" / "code"

SERVER = '''\
import json
from .wire import parse as parse_wire


class Server:
    """Serves; parse is mentioned here only in text."""

    def parse(self, raw: bytes) -> "Request":
        # parse the head, then call parse_wire
        return parse_wire(raw)

    def handle(self, raw):
        request: Request = self.parse(raw)
        return request


def parse(text):
    return json.loads(text)


PARSE_LIMIT = 3
label = "parse"
'''
WIRE = "def parse(raw):\n    return raw\n\n\ndef parser():\n    return parse\n"
CLIENT = "// Parse on the client.\nexport function Parse(x: string) { return x; }\n" \
         "const ré = 1; const parse = () => ré;\n"


@pytest.fixture
def tree(root: Path) -> Path:
    (root / "app").mkdir()
    (root / "app" / "server.py").write_text(SERVER)
    (root / "app" / "wire.py").write_text(WIRE)
    (root / "web").mkdir()
    (root / "web" / "client.ts").write_text(CLIENT)
    (root / "notes.txt").write_text("parse is also in notes\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.py").write_text("def parse(): pass\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("def parse(): pass\n")
    return root


def engine(ctx: ToolContext, name: str) -> ToolContext:
    ctx.search_engine = name
    ctx.rg_path, ctx.rg_has_pcre2 = (RG_PATH, RG_PCRE2) if name == "ripgrep" else (None, False)
    return ctx


def run(ctx: ToolContext, method: Any, **params: Any) -> dict[str, Any]:
    return settle(ctx, method(ctx, **params))


def where(found: dict[str, Any], listed: str = "symbols") -> list[tuple[str, int]]:
    return [(item["path"], item["line"]) for item in found[listed]]


def test_outline_nests_to_depth_and_counts_everything(ctx: ToolContext, tree: Path) -> None:
    found = outline(ctx, "app/server.py", depth=1)
    assert found["language"] == "python" and found["total"] == 6
    names = [s["name"] for s in found["symbols"]]
    assert names == ["Server", "parse", "PARSE_LIMIT", "label"]
    assert all("children" not in s for s in found["symbols"])
    deeper = outline(ctx, "app/server.py")
    assert [c["name_path"] for c in deeper["symbols"][0]["children"]] == \
        ["Server/parse", "Server/handle"]
    assert deeper["symbols"][0] == {
        "name": "Server", "kind": "class", "name_path": "Server", "line": 5, "end_line": 14,
        "signature": "class Server:", "children": deeper["symbols"][0]["children"]}
    assert not deeper["truncated"] and deeper["syntax_errors"] == 0


def test_outline_max_results_truncates(ctx: ToolContext, tree: Path) -> None:
    found = outline(ctx, "app/server.py", max_results=2)
    assert found["truncated"] and found["total"] == 6
    assert [s["name"] for s in found["symbols"]] == ["Server"]
    assert [c["name"] for c in found["symbols"][0]["children"]] == ["parse"]


def test_outline_counts_syntax_errors_and_goes_on(ctx: ToolContext, root: Path) -> None:
    (root / "b.py").write_text("def ok():\n    pass\n\ndef bad(:\n    pass\n\nclass After:\n"
                               "    pass\n")
    found = outline(ctx, "b.py")
    assert found["syntax_errors"] >= 1
    assert {"ok", "After"} <= {s["name"] for s in found["symbols"]}


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.iterdir()))
def test_outline_of_every_sample_language(ctx: ToolContext, root: Path, name: str) -> None:
    shutil.copy(SAMPLES / name, root / name)
    found = outline(ctx, name, depth=9)
    assert found["total"] > 0 and found["symbols"]
    assert found["language"] in {"python", "javascript", "typescript", "tsx", "go", "rust",
                                 "java", "c", "cpp", "markdown"}


@pytest.mark.parametrize(("make", "code"), [
    (lambda root: (root / "n.txt").write_text("x\n"), "unsupported_language"),
    (lambda root: (root / "d.json").write_text("{}\n"), "unsupported_language"),
    (lambda root: (root / "img.py").write_bytes(b"\x89PNG\r\n\x1a\n\0\0"), "binary_file"),
    (lambda root: None, "file_not_found"),
    (lambda root: (root / "dir.py").mkdir(), "is_directory"),
])
def test_outline_errors(ctx: ToolContext, root: Path, make: Any, code: str) -> None:
    make(root)
    path = next((p.name for p in root.iterdir()), "missing.py")
    with pytest.raises(ToolError) as caught:
        outline(ctx, path)
    assert caught.value.code == code
    if code == "unsupported_language":
        assert caught.value.details["path"] == path
        assert "python" in caught.value.details["supported"]


def test_outline_too_large(ctx: ToolContext, root: Path) -> None:
    (root / "big.py").write_text("x = 1\n" * 100)
    small = ToolContext(ws=ctx.ws, limits=type(ctx.limits)(max_write_bytes=100))
    with pytest.raises(ToolError) as caught:
        outline(small, "big.py")
    assert caught.value.code == "file_too_large"


@pytest.mark.parametrize("engine_name", ENGINES)
def test_symbols_exact_prefix_substring(ctx: ToolContext, tree: Path, engine_name: str) -> None:
    ctx = engine(ctx, engine_name)
    exact = run(ctx, find_symbols, query="parse")
    assert where(exact) == [("app/server.py", 8), ("app/server.py", 17), ("app/wire.py", 1),
                            ("web/client.ts", 3)]
    assert exact["total"] == 4 and not exact["truncated"]
    assert exact["files_parsed"] == 3 and exact["files_skipped"] == 1  # notes.txt
    prefix = run(ctx, find_symbols, query="parse", match="prefix")
    assert [s["name"] for s in prefix["symbols"]] == ["parse"] * 4 + ["parser"]  # not the
    # import alias parse_wire: an import defines nothing
    sub = run(ctx, find_symbols, query="ARSE", match="substring", case_sensitive=False)
    names = [s["name"] for s in sub["symbols"]]
    assert names[:1] == ["PARSE_LIMIT"] or "Parse" in names
    assert set(names) == {"parse", "Parse", "parser", "PARSE_LIMIT"}
    insensitive = run(ctx, find_symbols, query="PARSE", case_sensitive=False)
    assert {s["name"] for s in insensitive["symbols"]} == {"parse", "Parse"}


@pytest.mark.parametrize("engine_name", ENGINES)
def test_symbols_name_paths_kinds_and_limits(ctx: ToolContext, tree: Path,
                                             engine_name: str) -> None:
    ctx = engine(ctx, engine_name)
    assert where(run(ctx, find_symbols, query="Server/parse")) == [("app/server.py", 8)]
    assert where(run(ctx, find_symbols, query="/parse")) == [
        ("app/server.py", 17), ("app/wire.py", 1), ("web/client.ts", 3)]
    assert where(run(ctx, find_symbols, query="/Server/parse")) == [("app/server.py", 8)]
    assert where(run(ctx, find_symbols, query="Nope/parse")) == []
    methods = run(ctx, find_symbols, query="parse", kind="method")
    assert [s["name_path"] for s in methods["symbols"]] == ["Server/parse"]
    cut = run(ctx, find_symbols, query="parse", max_results=2)
    assert cut["truncated"] and cut["total"] == 4 and len(cut["symbols"]) == 2
    only = run(ctx, find_symbols, query="parse", glob="*.ts")
    assert where(only) == [("web/client.ts", 3)]
    inside = run(ctx, find_symbols, query="parse", path="app/wire.py")
    assert where(inside) == [("app/wire.py", 1)]
    hidden = run(ctx, find_symbols, query="parse", include_hidden=True, include_ignored=True)
    assert {p for p, _ in where(hidden)} >= {".hidden/h.py", "build/gen.py"}
    record = run(ctx, find_symbols, query="PARSE_LIMIT")["symbols"][0]
    assert record == {"path": "app/server.py", "name": "PARSE_LIMIT", "kind": "constant",
                      "name_path": "PARSE_LIMIT", "line": 21, "end_line": 21,
                      "signature": "PARSE_LIMIT = 3"}


@pytest.mark.parametrize(("params", "param"), [
    ({"query": ""}, "query"), ({"query": "a//b"}, "query"), ({"query": "/"}, "query"),
    ({"query": "x", "kind": "klass"}, "kind")])
def test_symbols_bad_query(ctx: ToolContext, tree: Path, params: dict[str, Any],
                           param: str) -> None:
    with pytest.raises(ToolError) as caught:
        find_symbols(ctx, **params)
    assert caught.value.code == "invalid_params" and caught.value.details["param"] == param


def test_many_files_split_across_the_pool_answer_the_same(ctx: ToolContext, root: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(30):
        (root / f"m{i:02d}.py").write_text(f"def handler():\n    return {i}\n\nhandler()\n")
    inline = run(ctx, find_symbols, query="handler")
    refs_inline = run(ctx, references, name="handler")
    monkeypatch.setattr(across, "INLINE_FILES", 2)
    assert not isinstance(find_symbols(ctx, query="handler"), dict)
    assert run(ctx, find_symbols, query="handler") == inline
    assert run(ctx, references, name="handler") == refs_inline
    assert inline["total"] == 30 and refs_inline["total"] == 30


@pytest.mark.parametrize("engine_name", ENGINES)
def test_references_kinds_and_enclosing(ctx: ToolContext, tree: Path, engine_name: str) -> None:
    ctx = engine(ctx, engine_name)
    found = run(ctx, references, name="parse", include_definitions=True)
    rows = [(r["path"], r["line"], r["column"], r["kind"], r["in"])
            for r in found["references"]]
    assert rows == [
        ("app/server.py", 2, 19, "import", ""),
        ("app/server.py", 8, 9, "definition", "Server"),
        ("app/server.py", 13, 33, "call", "Server/handle"),
        ("app/server.py", 17, 5, "definition", ""),
        ("app/wire.py", 1, 5, "definition", ""),
        ("app/wire.py", 6, 12, "reference", "parser"),
        ("web/client.ts", 3, 21, "definition", "")]
    assert found["files_searched"] == 3 and found["files_skipped"] == 1
    uses = run(ctx, references, name="parse")
    assert [r["kind"] for r in uses["references"]] == ["import", "call", "reference"]
    assert uses["references"][1]["text"] == "        request: Request = self.parse(raw)"
    types = run(ctx, references, name="Request")
    assert [(r["line"], r["kind"]) for r in types["references"]] == [(13, "type")]


def test_references_column_counts_characters(ctx: ToolContext, tree: Path) -> None:
    found = run(ctx, references, name="ré", include_definitions=True)
    assert [(r["line"], r["column"], r["kind"]) for r in found["references"]] == [
        (3, 7, "definition"), (3, 35, "reference")]


def test_references_context_and_limits(ctx: ToolContext, tree: Path) -> None:
    found = run(ctx, references, name="parse_wire", context_lines=1, max_results=1)
    assert found["total"] == 2 and found["truncated"]
    first = found["references"][0]
    assert first["kind"] == "import" and first["before"] == ["import json"]
    assert first["after"] == [""]


@pytest.mark.parametrize("name", ["", " parse", "two words", "a\tb"])
def test_references_bad_name(ctx: ToolContext, tree: Path, name: str) -> None:
    with pytest.raises(ToolError) as caught:
        references(ctx, name=name)
    assert caught.value.code == "invalid_params" and caught.value.details["param"] == "name"
