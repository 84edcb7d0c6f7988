"""How much the rest of the code refers to each definition: a PageRank over files, where a
file that mentions a name passes its rank to the other files that define that name
(docs/protocol.md, code.map). The graph is kept bipartite (file -> name -> file), so its
size is the mentions plus the definitions, never mentions times definers.

A file's mentions are the identifier-like words of its text (a word in a comment counts
too: this ranks, it does not answer references); only words some other file defines
carry rank. A definition's score is the rank that flows into its file through its name,
shared among the file's definitions of that name.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from chorus_tools.tools.code.symbols import Symbol

WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
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


def summarize(data: bytes, found: list[Symbol]) -> Summary:
    words = {w for w in WORD.findall(data) if len(w) >= SHORTEST}
    return Summary(tuple(s.name for s in found),
                   tuple(sorted(w.decode("ascii") for w in words)))


def rank(files: list[str], summaries: list[Summary],
         focus: list[str] | None = None) -> list[tuple[float, int, int]]:
    """Every definition as (score, file index, position among its file's names), highest
    score first, then file order, then position. `focus` (paths, directories or names)
    seeds the walk: their files, and the files defining them, are where it restarts."""
    ids: dict[str, int] = {}
    def_file, def_name = [], []
    for f, found in enumerate(summaries):
        for name in dict.fromkeys(found.names):
            if len(name) < SHORTEST:
                continue
            def_file.append(f)
            def_name.append(ids.setdefault(name, len(ids)))
    if not def_file:
        return []
    mention_file, mention_name = [], []
    for f, found in enumerate(summaries):
        for word in found.words:
            t = ids.get(word)
            if t is not None:
                mention_file.append(f)
                mention_name.append(t)
    n, m = len(files), len(ids)
    df, dt = np.array(def_file), np.array(def_name)
    mf, mt = np.array(mention_file, dtype=np.int64), np.array(mention_name, dtype=np.int64)
    definers = np.bincount(dt, minlength=m).astype(float)
    own = np.isin(mf * m + mt, df * m + dt)  # a mention of its own definition
    own_def = np.isin(df * m + dt, mf * m + mt)
    out = np.bincount(mf, (definers[mt] - own) / definers[mt], minlength=n)
    seed = _seed(files, summaries, focus, n)
    r = seed.copy()
    for _ in range(ROUNDS):
        share = np.divide(r, out, out=np.zeros(n), where=out > 0)
        by_name = np.bincount(mt, share[mf], minlength=m)
        flow = (by_name[dt] - share[df] * own_def) / definers[dt]
        inflow = np.bincount(df, flow, minlength=n)
        new = (1 - DAMPING) * seed + DAMPING * (inflow + max(0.0, 1 - inflow.sum()) * seed)
        done = np.abs(new - r).sum() < CLOSE_ENOUGH
        r = new
        if done:
            break
    share = np.divide(r, out, out=np.zeros(n), where=out > 0)
    by_name = np.bincount(mt, share[mf], minlength=m)
    per_name = dict(zip(zip(def_file, def_name),
                        (by_name[dt] - share[df] * own_def) / definers[dt] + r[df] * 1e-6))
    scored = []
    for f, found in enumerate(summaries):
        counts: dict[str, int] = {}
        for name in found.names:
            counts[name] = counts.get(name, 0) + 1
        for position, name in enumerate(found.names):
            score = per_name.get((f, ids.get(name, -1)), r[f] * 1e-6)
            scored.append((float(score) / counts[name], f, position))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    return scored


def _seed(files: list[str], summaries: list[Summary], focus: list[str] | None,
          n: int) -> np.ndarray:
    """Where the walk restarts: the focused files and the definers of focused names, or
    every file alike."""
    seed = np.zeros(n)
    for wanted in focus or ():
        prefix = wanted.rstrip("/") + "/"
        for f, path in enumerate(files):
            if path == wanted or path.startswith(prefix) or wanted in summaries[f].names:
                seed[f] = 1.0
    return seed / seed.sum() if seed.sum() else np.full(n, 1.0 / n)
