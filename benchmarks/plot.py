"""Pictures of a benchmark run: `python -m benchmarks.plot [JSON] [OUTDIR]` (or
`python -m benchmarks --plot`) draws, from the JSON a run wrote,

- table.svg: each row's ratio (ours / baseline) on a log axis, with its target;
- scale.svg: each scale series, the ratio against the input size (log-log), with its
  target and slope.

matplotlib is the optional `bench` extra (pip install -e '.[bench]'), never a runtime
dependency: only drawing needs it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("svg")  # no display: files only
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, searchable
import matplotlib.pyplot as plt  # noqa: E402 - the backend is chosen first
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

OK, MISSED, INFO = "#2a9d4b", "#d1495b", "#8d99ae"
MACHINE = "{cpus} CPUs, Python {python}, {platform}"


def _target(text: str | None) -> tuple[str, float] | None:
    """("≤", 1.3) from "≤ 1.3×"; None for no target or an absolute (memory) one."""
    if not text or not text.endswith("×"):
        return None
    op, _, bound = text.partition(" ")
    return op, float(bound.rstrip("×"))


def _colour(row: dict[str, Any]) -> str:
    return {"ok": OK, "missed": MISSED}.get(row["status"], INFO)


def _subtitle(document: dict[str, Any]) -> str:
    machine = MACHINE.format(**document["machine"])
    commit = document.get("versions", {}).get("chorus_tools_commit") or "?"
    return f"{document['finished']}, commit {commit}; {machine}"


def draw_table(document: dict[str, Any], out: Path) -> Path:
    rows = [r for r in document["rows"] if r["ratio"] is not None]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.6))
    labels = [f"{r['scenario']}\nvs {r['baseline_name']}" for r in rows]
    ys = range(len(rows))
    ax.barh(ys, [r["ratio"] for r in rows], color=[_colour(r) for r in rows])
    for y, row in zip(ys, rows):
        target = _target(row["target"])
        if target:
            ax.plot([target[1]] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
        ax.text(row["ratio"], y, f" {row['ratio']:.2f}×", va="center", fontsize=7)
    ax.set_xscale("log")
    ax.axvline(1, color="grey", linewidth=0.8, linestyle=":")
    ax.set_yticks(list(ys), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ratio ours / baseline (time: lower is better; req/s: higher is "
                  "better); black bar = target; green met, red missed, grey no target",
                  fontsize=7)
    ax.set_title(f"chorus-tools benchmarks\n{_subtitle(document)}", fontsize=8)
    return _save(fig, out / "table.svg")


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def draw_scale(document: dict[str, Any], out: Path) -> Path:
    series = document["series"]
    columns = min(2, len(series))
    rows = -(-len(series) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.4 * rows),
                             squeeze=False)
    for ax, one in zip(axes.flat, series):
        points = [(size, row["ratio"]) for size, row in zip(one["sizes"], one["rows"])
                  if row["ratio"] is not None]
        if points:
            ax.plot(*zip(*points), marker="o", color="#1d3557")
            for size, ratio in points:
                ax.annotate(f"{ratio:.2f}×", (size, ratio), textcoords="offset points",
                            xytext=(4, 4), fontsize=7)
        target = _target(one["rows"][0]["target"]) if one["rows"] else None
        if target:
            ax.axhline(target[1], color=MISSED, linestyle="--", linewidth=1,
                       label=f"target {target[0]} {target[1]:g}×")
            ax.legend(fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(one["sizes"], one["labels"])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        slope = "—" if one["slope"] is None else f"{one['slope']:+.2f}"
        ax.set_title(f"{one['title']}\nvs {one['rows'][0]['baseline_name']}; "
                     f"slope {slope}", fontsize=8)
        ax.set_ylabel("ours / baseline", fontsize=7)
        ax.tick_params(labelsize=7, which="both")
    for ax in list(axes.flat)[len(series):]:
        ax.set_visible(False)
    fig.suptitle(f"How cost grows with size\n{_subtitle(document)}", fontsize=8)
    return _save(fig, out / "scale.svg")


def draw(json_path: Path, out: Path) -> list[Path]:
    document = json.loads(json_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    drawn = [draw_table(document, out)]
    if document.get("series"):
        drawn.append(draw_scale(document, out))
    return drawn


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).resolve().parent / "results/latest.json"
    for drawn in draw(source, Path(sys.argv[2]) if len(sys.argv) > 2 else source.parent):
        print(drawn)
