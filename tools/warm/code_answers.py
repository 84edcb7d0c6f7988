"""The code questions the warm process answers from its symbol index (tools/warm/
symbol_index.py), right after a barrier, as the other answers are:

- `code_symbols`: the matching symbols of the known files of a selection that define a
  matching name (their symbols kept within the budget: SymbolIndex.symbols_of), cut at
  max_results, and every unknown file (narrowed by the content index to those that may
  hold the name), which the worker parses and merges in;
- `code_references`: the reply's first rows and its total from the uses the index keeps
  of the name (their files read for the lines shown only), and the unknown files that
  may hold it, which the worker parses and merges in (tools/code/across.py);
- `code_mentions`: the files of a selection whose uses hold a name, and the unknown ones
  (broken imports read and judge them);
- `code_map`: the map itself (tools/code/codemap.py), every code file of a selection
  ranked in walk order from the summaries the index holds, the few unknown ones parsed on
  the spot.

The worker parses the files it is given exactly as without the index, and the uses come
from the same identifier table (tools/code/identifiers.py), so the answers are the same;
None (walk and search as without it) when too much is unknown. When nothing is left to
parse, the symbols' and uses' answer is the whole reply, made here in its wire shape
(tools/warm/code_replies.py).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from chorus_tools.tools.code.across import Reply
from chorus_tools.tools.code.codemap import read_summary, render
from chorus_tools.tools.code.identifiers import DEFINITION
from chorus_tools.tools.code.query import NameQuery
from chorus_tools.tools.code.rank import Corpus, rank
from chorus_tools.tools.warm import code_replies
from chorus_tools.tools.warm.grams import query_grams
from chorus_tools.tools.warm.refs import Uses
from chorus_tools.tools.warm.symbol_index import Entry

if TYPE_CHECKING:
    from chorus_tools.tools.warm.answers import Warm
    from chorus_tools.tools.warm.content import Content

UNKNOWN_LIMIT = 4096  # unknown candidates handed to a worker; more: it searches instead
MAP_UNKNOWN_LIMIT = 64  # unknown files a map parses here; more: the worker maps cold


def code_symbols(warm: Warm, rel: str, globs: list[str], include_hidden: bool,
                 include_ignored: bool, needle: str, wanted: str, match: str,
                 case_sensitive: bool, asked: NameQuery,
                 max_results: int) -> dict[str, Any] | None:
    """_symbols' answer, a whole one kept until the tree changes (Warm.kept)."""
    return warm.kept(("code_symbols", rel, tuple(globs), include_hidden, include_ignored,
                      needle, wanted, match, case_sensitive, asked, max_results),
                     lambda: _symbols(warm, rel, globs, include_hidden, include_ignored,
                                      needle, wanted, match, case_sensitive, asked,
                                      max_results), code_replies.whole)


def _symbols(warm: Warm, rel: str, globs: list[str], include_hidden: bool,
             include_ignored: bool, needle: str, wanted: str, match: str,
             case_sensitive: bool, asked: NameQuery, max_results: int) -> dict[str, Any] | None:
    """The matching symbols of the known files of a selection that define a matching
    name (their symbols kept in the index, or parsed here once), cut at `max_results`
    with the total; and the unknown files that may hold the name, for the worker."""
    index = warm.symbols
    if not index.on:
        return None
    chosen = warm.selected(rel, include_hidden, include_ignored, globs)
    names = _names(index.by_name, wanted, match, case_sensitive)
    defining = {path for name in names for path in index.by_name[name]}
    answer = _answer(warm, chosen, defining, needle, case_sensitive)
    if answer is None:
        return None
    rows: list[Any] = []
    late = set(answer["late"])
    for path in answer["files"]:
        if path in late:
            continue
        found = index.symbols_of(path)
        if found is None:  # changed since it was parsed, or gone: the worker parses it
            late.add(path)
            continue
        rows += warm.by_name.rows(path, found, asked)
    rows.sort(key=lambda row: row[0])
    return code_replies.answer(late, answer["skipped"], rows, len(rows),
                               Reply("symbols", max_results, "files_parsed"), warm.stamp())


def code_references(warm: Warm, rel: str, globs: list[str], name: str, max_results: int,
                    context_lines: int, include_definitions: bool) -> dict[str, Any] | None:
    """_references' answer, a whole one kept until the tree changes (Warm.kept)."""
    return warm.kept(("code_references", rel, tuple(globs), name, max_results,
                      context_lines, include_definitions),
                     lambda: _references(warm, rel, globs, name, max_results, context_lines,
                                         include_definitions), code_replies.whole)


def _references(warm: Warm, rel: str, globs: list[str], name: str, max_results: int,
                context_lines: int, include_definitions: bool) -> dict[str, Any] | None:
    """The uses of `name` in the parsed files of a selection, from the index: the first
    `max_results` as the reply's rows (their files read now, for the lines only), how
    many in all; and the unknown files that may hold it, for the worker to parse."""
    index = warm.symbols
    if not index.on:
        return None
    chosen = warm.selected(rel, False, False, globs)
    grams = query_grams(name, literal=True, case_sensitive=True, multiline=False,
                        needs_pcre2=False) or []
    may = _candidates(warm.content, chosen, grams)
    late = _late(warm, chosen if may is None else may)
    if late is None:
        return None
    word = index.word_ids.get(name)
    found: list[tuple[str, Uses]] = []
    for path in _paths(warm.content.paths, [] if word is None else
                       chosen if may is None else may):
        entry = index.files.get(path)
        uses = None if word is None or entry is None or entry.refs is None \
            or not entry.refs.holds(word) else entry.refs.find(word)
        if uses is not None and not include_definitions:
            uses = Uses(*(column[uses.kind != DEFINITION] for column in uses))
        if uses is not None and len(uses.offset):
            found.append((path, uses))
    found.sort(key=lambda item: item[0])
    total = sum(len(uses.offset) for _, uses in found)
    rows: list[Any] = []
    for path, uses in found:
        if len(rows) >= max_results:
            break
        entry, most = index.files[path], max_results - len(rows)
        assert entry.refs is not None
        placed_rows = code_replies.reference_rows(
            warm.ctx, warm.lines, path, entry.stamp, Uses(*(c[:most] for c in uses)),
            entry.refs.holders, context_lines)
        if placed_rows is None:  # changed since it was parsed: the worker parses it
            late.add(path)
            total -= len(uses.offset)
            continue
        rows += placed_rows
    return code_replies.answer(late, _skipped(warm, may, grams), rows, total,
                               Reply("references", max_results, "files_searched"),
                               warm.stamp())


def code_mentions(warm: Warm, rel: str, globs: list[str], name: str) -> dict[str, Any] | None:
    """The files of a selection that may use `name` as an identifier: the known ones
    whose uses hold it, and the unknown ones (broken imports: tools/patch/broken.py)."""
    index = warm.symbols
    if not index.on:
        return None
    chosen = warm.selected(rel, False, False, globs)
    word = index.word_ids.get(name)
    known = set() if word is None else {
        path for path in _paths(warm.content.paths, chosen)
        if (entry := index.files.get(path)) is not None and entry.refs is not None
        and entry.refs.holds(word)}
    return _answer(warm, chosen, known, name, True)


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
    if len(late) > MAP_UNKNOWN_LIMIT or index.slow.intersection(late):
        return None  # a file too slow to parse is parsed by the worker, never here
    parsed_now = {p: read_summary(warm.ctx, p) for p in late}
    files: list[str] = []
    names: list[tuple[str, ...]] = []
    words: list[np.ndarray] = []
    for path in paths:
        if path in parsed_now:
            found = parsed_now[path]
            if found is None or found.grammar == "markdown":
                continue
            entry = Entry(found.summary.names,
                          array("I", map(index.word_id, found.summary.words)), None, 0)
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
    content = warm.content
    grams = query_grams(needle, literal=True, case_sensitive=case_sensitive,
                        multiline=False, needs_pcre2=False) or []
    may = _candidates(content, chosen, grams)
    late = _late(warm, chosen if may is None else may)
    if late is None:
        return None
    ids = content.ids
    in_selection = np.fromiter((ids[p] for p in known if p in ids), dtype=np.int64)
    files = set(_paths(content.paths, in_selection[np.isin(in_selection, chosen)]))
    return {"files": sorted(files | late), "skipped": _skipped(warm, may, grams),
            "late": sorted(late)}


def _late(warm: Warm, among: np.ndarray) -> set[str] | None:
    """The unknown files among the ids `among`; None when they are too many to parse."""
    ids = warm.content.ids
    late = np.fromiter((ids[p] for p in warm.symbols.unknown() if p in ids), dtype=np.int64)
    late = late[np.isin(late, among)]
    if len(late) > UNKNOWN_LIMIT:
        return None
    return set(_paths(warm.content.paths, late))


def _skipped(warm: Warm, may: np.ndarray | None, grams: list[int]) -> int:
    """How many text files of no language of ours may hold the name (the content index
    reads no binary file)."""
    content = warm.content
    return 0 if may is None or not grams else sum(
        1 for p in _paths(content.paths, content.indexed(may)) if p in warm.symbols.not_code)


def _names(by_name: dict[str, list[str]], wanted: str, match: str,
           case_sensitive: bool) -> list[str]:
    """The defined names matching the last part of a code.symbols query."""
    if match == "exact" and case_sensitive:
        return [wanted] if wanted in by_name else []
    test = {"exact": str.__eq__, "prefix": str.startswith,
            "substring": lambda name, part: part in name}[match]
    return [name for name in by_name
            if test(name if case_sensitive else name.lower(), wanted)]


def _paths(paths: list[str | None], fids: np.ndarray | Iterable[int]) -> Iterable[str]:
    for fid in fids.tolist() if isinstance(fids, np.ndarray) else fids:  # ints, not numpy's
        path = paths[fid]
        if path is not None:
            yield path


def _candidates(content: Content, chosen: np.ndarray, grams: list[int]) -> np.ndarray | None:
    """The ids of `chosen` that may hold the grams, or None when the index is off."""
    places = content.narrow(chosen, grams)
    return None if places is None else chosen[places]
