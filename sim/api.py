"""A small Python API for notebooks and scripts: the CLI's commands as functions.

    from sim import api

    a = api.run("tests/data/small.toml", out="reports/a", overrides={"duration": "6h"})
    b = api.run("tests/data/small.toml", out="reports/b",
                overrides={"duration": "6h", "design.window_cap": 20})
    api.tables(a.out_dir)["lateness_hourly"]          # the CSV time series as numpy columns
    cmp = api.compare(a.out_dir, b.out_dir, tolerances=["lateness.*.p99_s=+5"])
    cmp.passed, cmp.changed()

Every function writes the same files as its command (``sim run``, ``sim compare``), so a report
made here and one made on the command line are byte-identical.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sim.report.compare import Comparison
from sim.report.tables import Table
from sim.runner import RunResult
from sim.scenario import Scenario


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, Sequence):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as a TOML value")


def override_specs(overrides: Mapping[str, Any] | Sequence[str]) -> list[str]:
    """``{"design.window_cap": 2000}`` -> ``["design.window_cap=2000"]`` (``--set`` specs);
    a sequence of specs passes through."""
    if isinstance(overrides, Mapping):
        return [f"{key}={_toml_value(value)}" for key, value in overrides.items()]
    return list(overrides)


def load(
    path: str | Path,
    *,
    seed: int | None = None,
    overrides: Mapping[str, Any] | Sequence[str] = (),
) -> Scenario:
    """Read and validate a scenario file (raises ``sim.scenario.ScenarioError``)."""
    from sim.scenario import load_scenario

    return load_scenario(path, overrides=override_specs(overrides), seed=seed)


def run(
    scenario: str | Path | Scenario,
    *,
    out: str | Path | None = None,
    seed: int | None = None,
    overrides: Mapping[str, Any] | Sequence[str] = (),
    save_events: bool = False,
    plots: bool = True,
) -> RunResult:
    """Run a scenario (a path or a loaded :class:`Scenario`) as ``sim run`` does and write its
    report into ``out`` (default ``reports/<name>``); returns the manifest, the metrics and the
    files written."""
    from sim.runner import RunOptions, run_scenario
    from sim.scheduler import build_cvsa_model

    sc = (
        scenario
        if isinstance(scenario, Scenario)
        else load(scenario, seed=seed, overrides=overrides)
    )
    out_dir = Path(out) if out is not None else Path("reports") / sc.name
    options = RunOptions(out_dir=out_dir, save_events=save_events, report=True, plots=plots)
    return run_scenario(sc, build_cvsa_model, options)


def tables(run_dir: str | Path) -> dict[str, Table]:
    """Every CSV time series of a report directory by name (``windows``, ``lateness_hourly``...)."""
    from sim.report import TABLES, read_tables

    return read_tables(Path(run_dir), list(TABLES))


def summary(run_dir: str | Path) -> dict[str, Any]:
    """The metrics of a report directory (``summary.json``)."""
    from sim.report.run_files import read_summary

    return read_summary(Path(run_dir))


def compare(
    run_a: str | Path,
    run_b: str | Path,
    *,
    tolerances: Sequence[str] = (),
    out: str | Path | None = None,
) -> Comparison:
    """Compare two report directories as ``sim compare`` does; with ``out``, also write
    ``comparison.csv``/``.json`` and ``overlay.png`` there. A tolerance that no run can be
    judged on (an unknown name) raises ``ValueError`` before anything is written."""
    from sim.report.compare import compare_runs, parse_tolerance, unknown_tolerances
    from sim.report.run_files import read_summary

    parsed = [parse_tolerance(t) for t in tolerances]
    unknown = unknown_tolerances(parsed, read_summary(Path(run_a)), read_summary(Path(run_b)))
    if unknown:
        raise ValueError("; ".join(unknown))
    return compare_runs(Path(run_a), Path(run_b), parsed, None if out is None else Path(out))


def redraw(run_dir: str | Path) -> list[Path]:
    """``sim plot``: redraw a report (from its saved events when it has them)."""
    from sim.report import redraw as _redraw

    return _redraw(Path(run_dir))
