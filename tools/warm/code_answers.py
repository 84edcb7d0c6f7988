"""The code questions the warm process answers from its symbol index (tools/warm/
symbol_index.py), right after a barrier, as the other answers are:

- `code_symbols`: the files of a selection that define a matching name, and every unknown
  one (narrowed by the content index to those that may hold the name);
- `code_references`: the files of a selection that mention the name (the content index's
  candidates, cut to the parsed ones whose words hold it, and the unknown ones);
- `code_map`: the map itself (tools/code/codemap.py), every code file of a selection
  ranked in walk order from the summaries the index holds, the few unknown ones parsed on
  the spot.

The worker parses the files it is given exactly as without the index, so the answers are
the same; None (walk and search as without it) when too much is unknown.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from chorus_tools.tools.code.codemap import read_summary, render
from chorus_tools.tools.code.rank import SHORTEST, WORD, Corpus, rank
from chorus_tools.tools.warm.grams import query_grams
from chorus_tools.tools.warm.symbol_index import Entry

if TYPE_CHECKING:
    from chorus_tools.tools.warm.answers import Warm
    from chorus_tools.tools.warm.content import Content

UNKNOWN_LIMIT = 4096  # unknown candidates handed to a worker; more: it searches instead
MAP_UNKNOWN_LIMIT = 64  # unknown files a map parses here; more: the worker maps cold


def code_symbols(warm: Warm, rel: str, globs: list[str], include_hidden: bool,
                 include_ignored: bool, needle: str, wanted: str, match: str,
                 case_sensitive: bool) -> dict[str, Any] | None:
    index = warm.symbols
    if not index.on:
        return None
    chosen = warm.selected(rel, include_hidden, include_ignored, globs)
    names = _names(index.by_name, wanted, match, case_sensitive)
    defining = {path for name in names for path in index.by_name[name]}
    return _answer(warm, chosen, defining, needle, case_sensitive)


def code_references(warm: Warm, rel: str, globs: list[str],
                    name: str) -> dict[str, Any] | None:
    index = warm.symbols
    if not index.on:
        return None
    chosen = warm.selected(rel, False, False, globs)
    may = _candidates(warm.content, chosen, query_grams(
        name, literal=True, case_sensitive=True, multiline=False, needs_pcre2=False) or [])
    paths = warm.content.paths
    wordlike = WORD.fullmatch(name.encode("utf-8", "surrogateescape")) and len(name) >= SHORTEST
    mentioning = {p for p in _paths(paths, chosen if may is None else may)
                  if p in index.files and (not wordlike or index.mentions(p, name))}
    return _answer(warm, chosen, mentioning, name, True)


def code_map(warm: Warm, rel: str, globs: list[str], focus: list[str],
             max_bytes: int) -> dict[str, Any] | None:
    return warm.kept(("code_map", rel, tuple(globs), tuple(focus), max_bytes),
                     lambda: _map(warm, rel, globs, focus, max_bytes))


def _map(warm: Warm, rel: str, globs: list[str], focus: list[str],
         max_bytes: int) -> dict[str, Any] | None:
    index = warm.symbols
    if not index.on:
        return None
    paths = list(_paths(warm.content.paths, warm.selected(rel, False, False, globs)))
    unknown = index.unknown()
    late = [p for p in paths if p in unknown]
    if len(late) > MAP_UNKNOWN_LIMIT:
        return None
    parsed_now = {p: read_summary(warm.ctx, p) for p in late}
    files: list[str] = []
    names: list[tuple[str, ...]] = []
    words: list[np.ndarray] = []
    for path in paths:
        if path in parsed_now:
            found = parsed_now[path]
            if found is None or found[1] == "markdown":
                continue
            entry = Entry(found[0].names, array("I", map(index.word_id, found[0].words)))
        elif path in index.markdown or path not in index.files:
            continue
        else:
            entry = index.files[path]
        files.append(path)
        names.append(entry.names)
        words.append(np.frombuffer(entry.words, dtype=np.uint32).astype(np.int64))
    ranked = rank(files, Corpus(names, words, index.word_list), focus or None)
    return render(warm.ctx, files, ranked, max_bytes)


def _answer(warm: Warm, chosen: np.ndarray, known: set[str], needle: str,
            case_sensitive: bool) -> dict[str, Any] | None:
    """The files to parse: `known` ones of the selection, and its unknown ones that may
    hold `needle`; how many text files of no language of ours may hold it (skipped: the
    content index reads no binary file)."""
    index, content = warm.symbols, warm.content
    grams = query_grams(needle, literal=True, case_sensitive=case_sensitive,
                        multiline=False, needs_pcre2=False) or []
    may = _candidates(content, chosen, grams)
    ids = content.ids
    unknown = index.unknown()
    late = np.fromiter((ids[p] for p in unknown if p in ids), dtype=np.int64)
    late = late[np.isin(late, chosen if may is None else may)]
    if len(late) > UNKNOWN_LIMIT:
        return None
    in_selection = np.fromiter((ids[p] for p in known if p in ids), dtype=np.int64)
    files = set(_paths(content.paths, in_selection[np.isin(in_selection, chosen)]))
    files.update(_paths(content.paths, late))
    skipped = 0 if may is None or not grams else sum(
        1 for p in _paths(content.paths, content.indexed(may)) if p in index.not_code)
    return {"files": sorted(files), "skipped": skipped}


def _names(by_name: dict[str, list[str]], wanted: str, match: str,
           case_sensitive: bool) -> list[str]:
    """The defined names matching the last part of a code.symbols query."""
    if match == "exact" and case_sensitive:
        return [wanted] if wanted in by_name else []
    test = {"exact": str.__eq__, "prefix": str.startswith,
            "substring": lambda name, part: part in name}[match]
    return [name for name in by_name
            if test(name if case_sensitive else name.lower(), wanted)]


def _paths(paths: list[str | None], fids: Iterable[int]) -> Iterable[str]:
    for fid in fids:
        path = paths[int(fid)]
        if path is not None:
            yield path


def _candidates(content: Content, chosen: np.ndarray, grams: list[int]) -> np.ndarray | None:
    """The ids of `chosen` that may hold the grams, or None when the index is off."""
    places = content.narrow(chosen, grams)
    return None if places is None else chosen[places]
