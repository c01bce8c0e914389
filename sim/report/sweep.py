"""The table of a parameter sweep, read from its runs' files.

Each point of a sweep (:mod:`sim.scenario.grid`) is a full run whose directory is
``OUT/runs/<label>/`` (``sim sweep`` runs them), or in a seed swarm (``--seeds``) one run per seed
in ``OUT/runs/<label>/seed-<n>/``, tabulated as the median and the 5-95 % band of each metric
and, per finding, how many seeds ended in each severity; :func:`tabulate` reads each point's
``summary.json`` and ``manifest.json`` back and :func:`write_sweep` writes ``sweep.csv`` (one row
per point, in grid order) and ``sweep.json``; ``sweep.png`` is drawn from the same
:class:`SweepResult` (:mod:`sim.report.sweep_plot`). Nothing in these files depends on the order
in which points finished or on wall time.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

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


BAND = (5.0, 95.0)
"""The percentiles of a seed swarm's band (the median is drawn between them)."""


def run_dir(out_dir: Path, label: str, seed: int | None) -> Path:
    """Where a point's run goes: ``runs/<label>/``, or ``runs/<label>/seed-<n>/`` in a swarm
    (``runs/seed-<n>/`` when the sweep has no axes: ``sim run --seeds``)."""
    base = out_dir / RUNS_DIR / label if label else out_dir / RUNS_DIR
    return base if seed is None else base / f"seed-{seed}"


@dataclass
class SweepResult:
    """Every point of a sweep (each under every seed of a swarm), its runs' metrics and
    manifests, and the metrics tabulated."""

    axes: list[Axis]
    fixed: list[str]
    points: list[dict[str, str]]
    labels: list[str]
    results: list[list[dict[str, Any]]]
    """Per point, per seed (one entry without ``seeds``): ``{"metrics": summary.json,
    "manifest": manifest.json}``."""
    metrics: list[str]
    unmatched: list[str]
    seeds: list[int] | None = None
    """The swarm's seeds (None: one run per point, the scenario's seed)."""

    def values(self, point: int, metric: str) -> npt.NDArray[np.float64]:
        """The metric over the point's runs (NaN where a run has no number for it)."""
        raw = [r["metrics"].get(metric) for r in self.results[point]]
        return np.array(
            [
                float(v) if isinstance(v, int | float) and not isinstance(v, bool) else np.nan
                for v in raw
            ],
            dtype=np.float64,
        )

    def band(self, point: int, metric: str) -> tuple[float, float, float]:
        """``(p5, median, p95)`` of the metric over the point's seeds (NaN: no run had it)."""
        v = self.values(point, metric)
        v = v[~np.isnan(v)]
        if not len(v):
            return (math.nan, math.nan, math.nan)
        lo, mid, hi = np.percentile(v, [BAND[0], 50.0, BAND[1]])
        return (float(lo), float(mid), float(hi))

    def severities(self, point: int) -> dict[str, Counter[str]]:
        """Per finding, how many of the point's runs ended in each severity."""
        out: dict[str, Counter[str]] = {}
        for r in self.results[point]:
            for name, value in r["metrics"].items():
                if name.startswith("findings.") and name.endswith(".severity"):
                    finding = name.removeprefix("findings.").removesuffix(".severity")
                    out.setdefault(finding, Counter())[str(value)] += 1
        return dict(sorted(out.items()))

    def table(self) -> Table:
        """One row per point: its parameters and each metric (with seeds: the median, and the
        band's ends in ``<metric>.p5`` and ``<metric>.p95``)."""
        cols: dict[str, Column] = {
            "point": np.arange(len(self.points), dtype=np.int64),
            "run": np.array(self.labels, dtype=np.str_),
        }
        for axis in self.axes:
            cols[axis.key] = np.array([p[axis.key] for p in self.points], dtype=np.str_)
        for m in self.metrics:
            bands = [self.band(i, m) for i in range(len(self.points))]
            cols[m] = np.array([b[1] for b in bands], dtype=np.float64)
            if self.seeds is not None:
                cols[f"{m}.p5"] = np.array([b[0] for b in bands], dtype=np.float64)
                cols[f"{m}.p95"] = np.array([b[2] for b in bands], dtype=np.float64)
        return Table(cols)

    def to_json(self) -> dict[str, Any]:
        points = []
        for i, (point, label) in enumerate(zip(self.points, self.labels, strict=True)):
            runs = self.results[i]
            doc: dict[str, Any] = {"point": i, "run": label, "set": point}
            if self.seeds is None:
                r = runs[0]
                doc["event_log_sha256"] = r["manifest"]["event_log_sha256"]
                doc["partial"] = r["manifest"]["partial"]
                doc["metrics"] = {m: r["metrics"].get(m) for m in self.metrics}
            else:
                doc["seeds"] = [
                    {
                        "seed": seed,
                        "event_log_sha256": r["manifest"]["event_log_sha256"],
                        "partial": r["manifest"]["partial"],
                        "metrics": {m: r["metrics"].get(m) for m in self.metrics},
                    }
                    for seed, r in zip(self.seeds, runs, strict=True)
                ]
                doc["bands"] = {
                    m: dict(zip(("p5", "median", "p95"), _finite(self.band(i, m)), strict=True))
                    for m in self.metrics
                }
                doc["severities"] = {k: dict(v) for k, v in self.severities(i).items()}
            points.append(doc)
        return {
            "axes": [{"key": a.key, "values": list(a.values)} for a in self.axes],
            "fixed": self.fixed,
            "seeds": self.seeds,
            "metrics": self.metrics,
            "unmatched_metrics": self.unmatched,
            "points": points,
        }


def _finite(values: tuple[float, ...]) -> list[float | None]:
    return [None if math.isnan(v) else v for v in values]


def tabulate(
    out_dir: Path,
    axes: list[Axis],
    fixed: list[str],
    points: list[dict[str, str]],
    labels: list[str],
    metrics: Sequence[str] = (),
    seeds: Sequence[int] | None = None,
) -> SweepResult:
    """Read every point's runs (:func:`run_dir`) and choose the metrics to tabulate:
    ``metrics`` (names or patterns), else :data:`DEFAULT_METRICS`."""
    each: list[int | None] = list(seeds) if seeds is not None else [None]
    results = [
        [
            {"metrics": read_summary(d), "manifest": read_manifest(d)}
            for d in (run_dir(out_dir, label, seed) for seed in each)
        ]
        for label in labels
    ]
    names = sorted({n for runs in results for r in runs for n in r["metrics"]})
    chosen, unmatched = select_metrics(list(metrics) or list(DEFAULT_METRICS), names)
    if not metrics:
        unmatched = []
    return SweepResult(
        axes,
        fixed,
        points,
        labels,
        results,
        chosen,
        unmatched,
        list(seeds) if seeds is not None else None,
    )


def write_sweep(result: SweepResult, out_dir: Path, stem: str = "sweep") -> list[Path]:
    """``sweep.csv`` and ``sweep.json`` in ``out_dir`` (``swarm.*`` for ``sim run --seeds``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / f"{stem}.csv", out_dir / f"{stem}.json"
    write_atomic(csv_path, to_csv(result.table()).encode())
    write_atomic(
        json_path, (json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n").encode()
    )
    return [csv_path, json_path]
