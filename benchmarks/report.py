"""Rows of the benchmark table: measurements, their ratio, the target, and how they print.

Every figure that is judged is a ratio of two measurements taken side by side in the same
run (or, for memory, an absolute bound): absolute times on a shared machine are noise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HIGHER_IS_BETTER = {"throughput": True, "time": False, "memory": False, "bytes": False,
                    "share": True, "cost": False, "rate": True}


@dataclass
class Measure:
    kind: str  # throughput (requests/s), time (s), memory (bytes), bytes (of context),
    # share (a fraction found: recall), cost (a fraction paid: reply bytes per file byte),
    # rate (files/s)
    value: float
    detail: dict[str, Any] = field(default_factory=dict)

    def better_than(self, other: "Measure") -> bool:
        return (self.value > other.value) == HIGHER_IS_BETTER[self.kind]

    def text(self) -> str:
        if self.kind == "throughput":
            main = f"{self.value:,.0f} req/s"
        elif self.kind == "memory":
            main = f"{self.value / 1e6:,.1f} MB"
        elif self.kind == "bytes":
            main = f"{self.value:,.0f} bytes"
        elif self.kind in ("share", "cost"):
            main = f"{self.value * 100:.2f} %"
        elif self.kind == "rate":
            main = f"{self.value:,.0f} files/s"
        else:
            main = _seconds(self.value)
        if "p99" in self.detail:
            main += f" (p99 {_seconds(self.detail['p99'])})"
        return main


def _seconds(value: float) -> str:
    if value < 1e-3:
        return f"{value * 1e6:,.0f} µs"
    if value < 1:
        return f"{value * 1e3:,.2f} ms"
    return f"{value:,.2f} s"


@dataclass(frozen=True)
class Target:
    """`op` (≥ or ≤) `bound`, applied to the ratio ours/baseline, or to our own value
    when `absolute` (then `bound` is in the measure's unit)."""
    op: str
    bound: float
    absolute: bool = False
    unit: str = "MB"  # of an absolute bound: MB, % (a share), s, files/s, bytes

    def met(self, value: float) -> bool:
        return value >= self.bound if self.op == "≥" else value <= self.bound

    def text(self) -> str:
        if not self.absolute:
            return f"{self.op} {self.bound:g}×"
        shown = {"MB": f"{self.bound / 1e6:g} MB", "%": f"{self.bound * 100:g} %",
                 "s": f"{self.bound:g} s", "files/s": f"{self.bound:,.0f} files/s",
                 "bytes": f"{self.bound:,.0f} bytes"}
        return f"{self.op} {shown[self.unit]}"


@dataclass
class Row:
    key: str
    scenario: str
    baseline_name: str
    target: Target | None
    ours: Measure | None = None
    baseline: Measure | None = None
    ours_problem: str | None = None  # "skipped: ..." or "failed: ..."
    baseline_problem: str | None = None

    @property
    def ratio(self) -> float | None:
        if self.ours is None or self.baseline is None or not self.baseline.value:
            return None
        return self.ours.value / self.baseline.value

    @property
    def results_agree(self) -> bool | None:
        """Whether both sides found as many results (files, matches), where both count."""
        if self.ours is None or self.baseline is None:
            return None
        counts = (self.ours.detail.get("results"), self.baseline.detail.get("results"))
        return None if None in counts else counts[0] == counts[1]

    @property
    def status(self) -> str:
        """ok / missed against the target; info when there is none; or why unknown."""
        if self.target is None:
            return "info"
        value = self.ours.value if self.target.absolute and self.ours else self.ratio
        if value is None:
            return "unknown"
        return "ok" if self.target.met(value) else "missed"

    def cells(self) -> list[str]:
        ours = self.ours_problem or (self.ours.text() if self.ours else "—")
        if self.baseline_name == "—":
            base = "—"
        else:
            base = self.baseline_problem or (self.baseline.text() if self.baseline else "—")
            base = f"{self.baseline_name}: {base}"
        ratio = f"{self.ratio:.2f}×" if self.ratio is not None else "—"
        if self.results_agree is False and self.ours and self.baseline:
            ratio += (f" (results differ: {self.ours.detail['results']} vs "
                      f"{self.baseline.detail['results']})")
        target = self.target.text() if self.target else "—"
        if self.status in ("ok", "missed"):
            target += " ✓" if self.status == "ok" else " ✗ missed"
        return [self.scenario, ours, base, ratio, target]

    def as_json(self) -> dict[str, Any]:
        def measure(m: Measure | None) -> dict[str, Any] | None:
            return None if m is None else {"kind": m.kind, "value": m.value, **m.detail}
        return {
            "key": self.key, "scenario": self.scenario, "baseline_name": self.baseline_name,
            "ours": measure(self.ours), "baseline": measure(self.baseline),
            "ours_problem": self.ours_problem, "baseline_problem": self.baseline_problem,
            "ratio": self.ratio, "results_agree": self.results_agree,
            "target": self.target.text() if self.target else None,
            "status": self.status}


HEADER = ["scenario", "ours", "baseline", "ratio", "target"]


def table(rows: list[Row]) -> str:
    """A Markdown table: readable in a terminal, pasteable into docs/benchmarks.md."""
    lines = [HEADER, *(row.cells() for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([fmt(HEADER), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *(fmt(cells) for cells in lines[1:])])


def write_json(path: Path, rows: list[Row], series: list[Any], meta: dict[str, Any]) -> None:
    """The run as JSON: `series` are scale.Series (anything with as_json())."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {**meta, "rows": [row.as_json() for row in rows],
                "series": [one.as_json() for one in series]}
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
