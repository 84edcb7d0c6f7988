"""The table's rows for code by structure (issue 33): accuracy against `ast` and
universal-ctags (benchmarks/code_accuracy.py), then speed and cost
(benchmarks/code_speed.py). Their scale series are in benchmarks/scale.py's PLANS."""

from __future__ import annotations

from benchmarks import code_accuracy as accuracy
from benchmarks import code_speed as speed
from benchmarks.report import Target
from benchmarks.scenarios import Scenario

SCENARIOS = [
    Scenario("code_recall_ast", "symbols: ast's classes, functions and methods found "
             "(standard library)", "—", Target("≥", 0.995, absolute=True, unit="%"),
             accuracy.ast_recall, None),
    *(Scenario(f"code_recall_{language}", f"symbols: ctags' definitions found, {title}",
               "—", Target("≥", 0.97, absolute=True, unit="%"), accuracy.recall_of(language),
               None)
      for language, (title, _) in accuracy.CORPORA.items()),
    Scenario("code_outline", "code.outline of a standard library file (median)",
             "ctags -f - FILE", Target("≤", 1.0), speed.outline_ours, speed.outline_ctags),
    Scenario("code_outline_cost", "code_outline's reply (MCP content, depth 2) per byte of "
             "the file (median, standard library)", "—",
             Target("≤", 0.10, absolute=True, unit="%"), speed.outline_cost, None),
    Scenario("code_map", "code.map of the standard library within 4 KiB, warm, repeated",
             "—", Target("≤", 1.0, absolute=True, unit="s"), speed.map_stdlib, None),
    Scenario("code_index_build", "symbol index build, standard library",
             "tree-sitter's read and parse of the same files alone, a process a CPU",
             Target("≥", 1000, absolute=True, unit="files/s"), speed.index_build,
             speed.parse_floor),
    Scenario("code_question", "where is HTTPConnection.request defined, who calls it: "
             "bytes a model reads (code_symbols, code_references)",
             "file_search, file_read, file_search", None, speed.question_code_tools,
             speed.question_search_read),
]
