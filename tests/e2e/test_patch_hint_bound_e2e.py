"""The fault, through the real server: a file.patch whose 131k-line find matches nowhere
in a 1 MiB file answered nothing for over 10 minutes (its hint ran difflib unbounded)."""

from __future__ import annotations

from pathlib import Path

from e2e_support import E2EServer, error_of


def test_131k_line_find_in_a_1mib_file_answers_find_not_found_promptly(
        tmp_path: Path) -> None:
    text = "".join(f"v{i:06d}\n" for i in range(131072))
    (tmp_path / "big.txt").write_text(text)
    finds = [text.replace("v065536", "w065536"), "x = 1;\n" * 150_000]
    with E2EServer(tmp_path) as server:
        for find in finds:
            reply = server.call("file.patch", {"path": "big.txt", "patches": [
                {"find": find, "replace": "gone"}]}, timeout=10.0)
            assert error_of(reply) == (-32011, "find_not_found")
    assert (tmp_path / "big.txt").read_text() == text
