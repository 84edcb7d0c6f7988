"""The symbols of a file read again are remembered, not parsed again (issue 45), and
never stale: another text under the same path, or the same text under another name's
language, gets its own symbols; the remembered list is the caller's own."""

from __future__ import annotations

import pytest

from chorus_tools.tools.code import symbols as kept
from chorus_tools.tools.code.symbols import Symbol, symbols
from chorus_tools.tools.code.symbols.extract import extract


def test_a_file_read_again_gets_the_same_symbols_without_a_parse(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"def a():\n    pass\n\nclass B:\n    def c(self): ...\n"
    first = symbols("kept/m.py", data)
    calls: list[str] = []

    def counted(grammar: str, path: str, text: bytes) -> list[Symbol]:
        calls.append(path)
        return extract(grammar, path, text)
    monkeypatch.setattr("chorus_tools.tools.code.symbols.extract.extract", counted)
    again = symbols("kept/m.py", data)
    assert again == first and again is not first and calls == []
    again.clear()
    assert symbols("kept/m.py", data) == first


def test_another_text_under_the_same_path_is_parsed_afresh() -> None:
    symbols("kept/n.py", b"def old():\n    pass\n")
    assert [s.name for s in symbols("kept/n.py", b"def new():\n    pass\n")] == ["new"]


def test_what_is_kept_stays_within_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "_KEPT_SYMBOLS", 3)
    for i in range(5):
        symbols(f"kept/b{i}.py", b"def a(): ...\ndef b(): ...\n")
    assert kept._kept_count <= 3 and "kept/b4.py" in kept._kept
