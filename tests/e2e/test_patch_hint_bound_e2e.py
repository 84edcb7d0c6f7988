"""The fault, through the real server: a file.patch whose 131k-line find matches nowhere
in a 1 MiB file answered nothing for over 10 minutes (its hint ran difflib unbounded)."""

from __future__ import annotations

from pathlib import Path

from e2e_support import E2EServer, error_of


def test_131k_line_find_in_a_1mib_file_answers_find_not_found_promptly(
        tmp_path: Path) -> None:
    text = "x = 11;\n" * 131072  # 1 MiB of equal lines: difflib's quadratic case
    (tmp_path / "big.txt").write_text(text)
    finds = [text[:524288] + "x = 12;\n" + text[524296:], text + "y = 2;\n"]
    with E2EServer(tmp_path) as server:
        for find in finds:
            reply = server.call("file.patch", {"path": "big.txt", "patches": [
                {"find": find, "replace": "gone"}]}, timeout=10.0)
            assert error_of(reply) == (-32011, "find_not_found")
    assert (tmp_path / "big.txt").read_text() == text
