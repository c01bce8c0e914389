"""The table of a parameter sweep, read from its runs' files.

Each point of a sweep (:mod:`sim.scenario.grid`) is a full run whose directory is
``OUT/runs/<label>/`` (``sim sweep`` runs them); :func:`tabulate` reads each point's
``summary.json`` and ``manifest.json`` back and :func:`write_sweep` writes ``sweep.csv`` (one row
per point, in grid order) and ``sweep.json``; ``sweep.png`` is drawn from the same
:class:`SweepResult` (:mod:`sim.report.sweep_plot`). Nothing in these files depends on the order
in which points finished or on wall time.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim.report.run_files import read_manifest, read_summary
from sim.report.tables import Column, Table, to_csv, write_atomic
from sim.scenario.grid import Axis

RUNS_DIR = "runs"
"""The directory of a sweep's output that holds one run directory per point."""
DEFAULT_METRICS = (
    "snapshots.total",
    "windows.max_count",
    "windows.placement.fallback",
    "windows.placement.exhausted",
    "lateness.*.p99_s",
    "cleanup.deleted",
    "milestones.capture_latency.p90_s",
)
"""Metrics of a sweep without ``--metric`` (patterns; those matching nothing are left out)."""


def select_metrics(patterns: Sequence[str], names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Expand metric names and patterns against ``names`` (in the order given, each once);
    also returns the patterns that matched nothing."""
    chosen: list[str] = []
    unmatched: list[str] = []
    for pattern in patterns:
        hits = sorted(n for n in names if fnmatch.fnmatchcase(n, pattern))
        if not hits:
            unmatched.append(pattern)
        chosen.extend(h for h in hits if h not in chosen)
    return chosen, unmatched


@dataclass
class SweepResult:
    """Every point of a sweep, its run's metrics and manifest, and the metrics tabulated."""

    axes: list[Axis]
    fixed: list[str]
    points: list[dict[str, str]]
    labels: list[str]
    results: list[dict[str, Any]]
    """Per point: ``{"metrics": summary.json, "manifest": manifest.json}``."""
    metrics: list[str]
    unmatched: list[str]

    def table(self) -> Table:
        cols: dict[str, Column] = {
            "point": np.arange(len(self.points), dtype=np.int64),
            "run": np.array(self.labels, dtype=np.str_),
        }
        for axis in self.axes:
            cols[axis.key] = np.array([p[axis.key] for p in self.points], dtype=np.str_)
        for m in self.metrics:
            values = [r["metrics"].get(m) for r in self.results]
            cols[m] = np.array(
                [np.nan if not isinstance(v, int | float) else float(v) for v in values],
                dtype=np.float64,
            )
        return Table(cols)

    def to_json(self) -> dict[str, Any]:
        return {
            "axes": [{"key": a.key, "values": list(a.values)} for a in self.axes],
            "fixed": self.fixed,
            "metrics": self.metrics,
            "unmatched_metrics": self.unmatched,
            "points": [
                {
                    "point": i,
                    "run": label,
                    "set": point,
                    "event_log_sha256": r["manifest"]["event_log_sha256"],
                    "partial": r["manifest"]["partial"],
                    "metrics": {m: r["metrics"].get(m) for m in self.metrics},
                }
                for i, (point, label, r) in enumerate(
                    zip(self.points, self.labels, self.results, strict=True)
                )
            ],
        }


def tabulate(
    out_dir: Path,
    axes: list[Axis],
    fixed: list[str],
    points: list[dict[str, str]],
    labels: list[str],
    metrics: Sequence[str] = (),
) -> SweepResult:
    """Read every point's run (``out_dir/runs/<label>/``) and choose the metrics to tabulate:
    ``metrics`` (names or patterns), else :data:`DEFAULT_METRICS`."""
    runs = [out_dir / RUNS_DIR / label for label in labels]
    results = [{"metrics": read_summary(d), "manifest": read_manifest(d)} for d in runs]
    names = sorted({n for r in results for n in r["metrics"]})
    chosen, unmatched = select_metrics(list(metrics) or list(DEFAULT_METRICS), names)
    if not metrics:
        unmatched = []
    return SweepResult(axes, fixed, points, labels, results, chosen, unmatched)


def write_sweep(result: SweepResult, out_dir: Path) -> list[Path]:
    """``sweep.csv`` and ``sweep.json`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / "sweep.csv", out_dir / "sweep.json"
    write_atomic(csv_path, to_csv(result.table()).encode())
    write_atomic(
        json_path, (json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n").encode()
    )
    return [csv_path, json_path]
