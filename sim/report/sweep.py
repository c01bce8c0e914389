"""Parameter sweeps: run a scenario over the cartesian product of ``--set`` values.

``--set switches.window_cap=1000,2000,3000 --set arrivals.per_day=200,400`` is a grid of six
points (the first key varies slowest); a ``--set`` with one value applies to every point. Values
are TOML, split at top-level commas (``scheduler.history=["1d","0ms"]`` is one value). Each point
runs in its own process (up to ``jobs`` at once) and writes a full run report under
``OUT/runs/NN_<key>=<value>.../``; the sweep writes ``sweep.csv`` (one row per point, in grid
order), ``sweep.json`` and ``sweep.png`` (each chosen metric against the first parameter, one
line per combination of the others: capacity-planning curves). Nothing in these files depends on
the order in which points finish or on wall time.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim.report.store import Column, Table, to_csv, write_atomic
from sim.scenario.load import parse_override

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


@dataclass(frozen=True)
class Axis:
    """One swept key and its values (TOML text, as given)."""

    key: str
    values: tuple[str, ...]


def split_values(raw: str) -> list[str]:
    """Split ``raw`` at commas outside brackets, braces and quotes."""
    parts, depth, quote, current = [], 0, "", ""
    for ch in raw:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    parts.append(current.strip())
    return parts


def parse_sets(specs: Sequence[str]) -> tuple[list[Axis], list[str]]:
    """``--set`` specs -> (swept axes, fixed overrides). Raises ``ValueError`` on a bad spec."""
    axes: list[Axis] = []
    fixed: list[str] = []
    for spec in specs:
        key, sep, raw = spec.partition("=")
        if not sep:
            raise ValueError(f"--set {spec}: expected key.path=value[,value...]")
        values = split_values(raw)
        if any(not v for v in values):
            raise ValueError(f"--set {spec}: an empty value")
        if len(values) == 1:
            fixed.append(spec)
        else:
            name = ".".join(parse_override(f"{key}=0")[0])
            if any(a.key == name for a in axes):
                raise ValueError(f"--set {spec}: {name} is swept twice")
            axes.append(Axis(name, tuple(values)))
    return axes, fixed


def grid(axes: Sequence[Axis]) -> list[dict[str, str]]:
    """Every point of the grid, the first axis varying slowest."""
    return [
        dict(zip([a.key for a in axes], combo, strict=True))
        for combo in itertools.product(*(a.values for a in axes))
    ]


def point_label(index: int, point: dict[str, str], width: int) -> str:
    """``03_window_cap=2000``: a directory name for a point (index first, so names are unique)."""
    body = ",".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in point.items())
    return f"{index:0{width}d}_" + re.sub(r"[^A-Za-z0-9_.,=+-]", "_", body)[:80]


def run_point(
    scenario_path: str, overrides: list[str], seed: int | None, out_dir: str, plots: bool
) -> dict[str, Any]:
    """Run one point (in a worker process); returns its metrics and manifest."""
    from sim.runner import run_scenario
    from sim.scenario import load_scenario
    from sim.scheduler import build_cvsa_model

    scenario = load_scenario(scenario_path, overrides=overrides, seed=seed)
    result = run_scenario(
        scenario, build_cvsa_model, out_dir=Path(out_dir), report=True, plots=plots
    )
    return {"metrics": result.metrics, "manifest": result.manifest}


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
    axes: list[Axis]
    fixed: list[str]
    points: list[dict[str, str]]
    labels: list[str]
    results: list[dict[str, Any]]
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


def run_sweep(
    scenario_path: Path,
    axes: list[Axis],
    fixed: list[str],
    *,
    out_dir: Path,
    seed: int | None = None,
    jobs: int = 1,
    metrics: Sequence[str] = (),
    plots: bool = True,
    on_done: Callable[[int, str], None] | None = None,
) -> SweepResult:
    """Run every point (``jobs`` processes at once) and write the sweep's files."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    points = grid(axes)
    width = len(str(max(len(points) - 1, 0)))
    labels = [point_label(i, p, width) for i, p in enumerate(points)]
    runs = out_dir / "runs"
    args = [
        (
            str(scenario_path),
            [*fixed, *(f"{k}={v}" for k, v in p.items())],
            seed,
            str(runs / label),
            plots,
        )
        for p, label in zip(points, labels, strict=True)
    ]
    results: list[dict[str, Any] | None] = [None] * len(points)
    context = multiprocessing.get_context("spawn")  # no fork of a process holding threads
    with ProcessPoolExecutor(
        max_workers=max(1, min(jobs, len(points))), mp_context=context
    ) as pool:
        futures = {pool.submit(run_point, *a): i for i, a in enumerate(args)}
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            if on_done is not None:
                on_done(i, labels[i])
    done = [r for r in results if r is not None]
    names = sorted({n for r in done for n in r["metrics"]})
    chosen, unmatched = select_metrics(list(metrics) or list(DEFAULT_METRICS), names)
    if not metrics:
        unmatched = []
    result = SweepResult(axes, fixed, points, labels, done, chosen, unmatched)
    write_sweep(result, out_dir)
    return result


def write_sweep(result: SweepResult, out_dir: Path) -> list[Path]:
    """``sweep.csv``, ``sweep.json`` and ``sweep.png`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / "sweep.csv", out_dir / "sweep.json"
    write_atomic(csv_path, to_csv(result.table()).encode())
    write_atomic(
        json_path, (json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n").encode()
    )
    from sim.report.sweep_plot import draw_sweep

    return [csv_path, json_path, draw_sweep(result, out_dir / "sweep.png")]
