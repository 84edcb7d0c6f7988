"""How much the rest of the code refers to each definition: a PageRank over files, where a
file that mentions a name passes its rank to the other files that define that name
(docs/protocol.md, code.map). The graph is kept bipartite (file -> name -> file), so its
size is the mentions plus the definitions, never mentions times definers.

A file's mentions are its identifiers of three ASCII characters or more (what the
parser calls identifiers: its comments and strings hold none); only words some other file
defines carry rank. A definition's score is the rank that flows into its file through its name,
shared among the file's definitions of that name.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np


WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SHORTEST = 3  # a shorter name (`x`, `s`, `id`) is everyone's: it carries no rank
DAMPING = 0.85
ROUNDS = 40
CLOSE_ENOUGH = 1e-9


class Summary(NamedTuple):
    """What the ranking needs of a file: its definitions' names in file order and the
    words it mentions, sorted (the same order in every process: the sums of floating
    point numbers below are taken in it, so any two processes rank alike)."""

    names: tuple[str, ...]
    words: tuple[str, ...]


def summarize(names: tuple[str, ...], identifiers: list[str]) -> Summary:
    """A file's summary from its symbols' names and the distinct identifiers of its code
    (tools/code/identifiers.py: strings and comments hold none)."""
    return Summary(names, tuple(sorted(w for w in identifiers
                                       if len(w) >= SHORTEST and WORD.fullmatch(w))))


class Corpus(NamedTuple):
    """Every file's summary in the form the ranking reads: its names, and its words as
    ids into `vocabulary`, in the words' sorted order (the warm index keeps them so)."""

    names: list[tuple[str, ...]]
    words: list[np.ndarray]
    vocabulary: list[str]


def corpus(summaries: list[Summary]) -> Corpus:
    """The corpus of summaries read now (the cold path)."""
    ids: dict[str, int] = {}
    words = [np.fromiter((ids.setdefault(w, len(ids)) for w in found.words), dtype=np.int64,
                         count=len(found.words)) for found in summaries]
    return Corpus([found.names for found in summaries], words, list(ids))


def rank(files: list[str], summaries: list[Summary] | Corpus,
         focus: list[str] | None = None) -> list[tuple[float, int, int]]:
    """Every definition as (score, file index, position among its file's names), highest
    score first, then file order, then position. `focus` (paths, directories or names)
    seeds the walk: their files, and the files defining them, are where it restarts."""
    found = summaries if isinstance(summaries, Corpus) else corpus(summaries)
    n = len(files)
    ids: dict[str, int] = {}
    def_file, def_name = [], []
    for f, names in enumerate(found.names):
        for name in dict.fromkeys(names):
            if len(name) >= SHORTEST:
                def_file.append(f)
                def_name.append(ids.setdefault(name, len(ids)))
    if not def_file:  # every name too short to rank: the files' order, the focused first
        seed = _seed(files, found.names, focus, n) if n else np.zeros(0)
        return sorted(((float(seed[f]) * 1e-6, f, p) for f, names in enumerate(found.names)
                       for p in range(len(names))), key=lambda t: (-t[0], t[1], t[2]))
    m = len(ids)
    name_of_word = np.fromiter((ids.get(w, -1) for w in found.vocabulary), dtype=np.int64,
                               count=len(found.vocabulary))
    sizes = np.fromiter((len(w) for w in found.words), dtype=np.int64, count=n)
    mf = np.repeat(np.arange(n), sizes)
    mt = name_of_word[np.concatenate(found.words)] if n and sizes.sum() else \
        np.zeros(0, dtype=np.int64)
    mf, mt = mf[mt >= 0], mt[mt >= 0]
    df, dt = np.array(def_file), np.array(def_name)
    flow, r = _walk(n, m, mf, mt, df, dt, _seed(files, found.names, focus, n))
    return _order(found.names, ids, df, dt, flow, r)


def _walk(n: int, m: int, mf: np.ndarray, mt: np.ndarray, df: np.ndarray, dt: np.ndarray,
          seed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The walk's ranks of files, and what flows into each (file, name) definition. A
    mention weighs by how rare its name is among the files (log(1 + files / files saying
    it): a name every file says weighs a tenth of one a few say), and a tenth when more
    than five files define it (Aider's rule: a name everyone defines, `run`, `get`, says
    little of which one is meant)."""
    definers = np.bincount(dt, minlength=m).astype(float)
    mentioning = np.bincount(mt, minlength=m).astype(float)
    weight = np.log((n + 1) / np.maximum(mentioning, 1)) ** 2 * np.where(definers > 5, 0.1, 1.0)
    own = _within(mf * m + mt, df * m + dt)  # a mention of its own definition
    own_def = _within(df * m + dt, mf * m + mt)
    out = np.bincount(mf, weight[mt] * (definers[mt] - own) / definers[mt], minlength=n)
    r = seed.copy()
    for _ in range(ROUNDS):
        flow = _flow(r, out, m, mf, mt, df, dt, weight, definers, own_def)
        inflow = np.bincount(df, flow, minlength=n)
        new = (1 - DAMPING) * seed + DAMPING * (inflow + max(0.0, 1 - inflow.sum()) * seed)
        done = np.abs(new - r).sum() < CLOSE_ENOUGH
        r = new
        if done:
            break
    return _flow(r, out, m, mf, mt, df, dt, weight, definers, own_def), r


def _flow(r: np.ndarray, out: np.ndarray, m: int, mf: np.ndarray, mt: np.ndarray,
          df: np.ndarray, dt: np.ndarray, weight: np.ndarray, definers: np.ndarray,
          own_def: np.ndarray) -> np.ndarray:
    """What flows into each definition (df, dt) from the files mentioning its name."""
    share = np.divide(r, out, out=np.zeros_like(r), where=out > 0)
    by_name = np.bincount(mt, share[mf], minlength=m) * weight
    return (by_name[dt] - share[df] * weight[dt] * own_def) / definers[dt]


def _within(keys: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Whether each key is one of `among` (sorted search: np.isin hashes, slower here)."""
    ordered = np.sort(among)
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    return ordered[at] == keys


def _order(names: list[tuple[str, ...]], ids: dict[str, int], df: np.ndarray,
           dt: np.ndarray, flow: np.ndarray, r: np.ndarray) -> list[tuple[float, int, int]]:
    """Every definition scored by its (file, name)'s flow, shared among the file's
    definitions of that name, its file's rank added faintly (what breaks a tie, and all
    that a name too short to rank has), and sorted."""
    m = max(len(ids), 1)
    pairs = df * m + dt
    order = np.argsort(pairs)
    keys, flows = pairs[order], flow[order]
    every_f, every_pos, every_t = [], [], []
    for f, found in enumerate(names):
        for position, name in enumerate(found):
            every_f.append(f)
            every_pos.append(position)
            every_t.append(ids.get(name, -1))
    fs, ts = np.array(every_f), np.array(every_t)
    key = fs * m + ts
    at = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
    known = (ts >= 0) & (keys[at] == key)
    _, inverse, counts = np.unique(np.where(known, key, -1 - np.arange(len(key))),
                                   return_inverse=True, return_counts=True)
    score = (np.where(known, flows[at], 0.0) + r[fs] * 1e-6) / counts[inverse]
    sorted_at = np.lexsort((np.array(every_pos), fs, -score))
    return [(float(score[i]), int(fs[i]), every_pos[i]) for i in sorted_at]


def _seed(files: list[str], names: list[tuple[str, ...]], focus: list[str] | None,
          n: int) -> np.ndarray:
    """Where the walk restarts: the focused files and the definers of focused names, or
    every file alike."""
    seed = np.zeros(n)
    for wanted in focus or ():
        prefix = wanted.rstrip("/") + "/"
        for f, path in enumerate(files):
            if path == wanted or path.startswith(prefix) or wanted in names[f]:
                seed[f] = 1.0
    return seed / seed.sum() if seed.sum() else np.full(n, 1.0 / n)
