"""Building a run's report: series -> CSV files -> PNG plots -> ``report.html``.

Three ways in, one way out:

* live, during ``sim run``: :class:`SeriesSet` is a sink of the running log (``run_scenario``
  with ``report=True``), then :func:`write_report`;
* from a saved log (``sim plot`` on a run made with ``--save-events``): :func:`report_from_log`
  recomputes every series from ``events.simlog``;
* from the CSVs alone (``sim plot`` otherwise): :func:`draw_report`.

Plots and the page are always drawn from the tables read back from the CSV files, so the three
give byte-identical files for the same run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sim.events.log import Chunk
from sim.report.load_series import QueueDepth, UpstreamRequests
from sim.report.milestone_tracking import GroundTruth, MilestoneTracking
from sim.report.periodic_series import TABLE as PERIODIC_TABLE
from sim.report.periodic_series import PeriodicSlots
from sim.report.proxies import ProxyRequests
from sim.report.run_files import (
    EVENTS_FILE,
    as_saved,
    read_manifest,
    read_scenario,
    read_summary,
)
from sim.report.series import (
    CleanupDeletions,
    LatenessOverTime,
    RunSpan,
    SeriesReducer,
    SnapshotRate,
    WindowOccupancy,
)
from sim.report.tables import Table, read_tables, write_tables
from sim.report.write_series import TABLE as WRITE_TABLE
from sim.report.write_series import WriteBacklogSeries
from sim.scenario import Scenario
from sim.units import Ms

REPORT_FILE = "report.html"
TABLES = (
    "windows",
    "snapshots_per_minute",
    "lateness_hourly",
    "cleanup_hourly",
    "upstream",
    "queue_depth",
    "milestones",
    "proxies",
    PERIODIC_TABLE,
    WRITE_TABLE,
)
"""Every CSV file of a report (``<name>.csv``)."""


class SeriesSet:
    """Every series of the report, fed as one reducer (it adds no metrics to the summary)."""

    def __init__(self, tz_ms: Ms, truth: GroundTruth, periods_ms: Mapping[str, Ms]) -> None:
        self.span = RunSpan()
        self.series: list[SeriesReducer] = [
            WindowOccupancy(tz_ms),
            SnapshotRate(tz_ms),
            LatenessOverTime(tz_ms),
            CleanupDeletions(tz_ms),
            UpstreamRequests(tz_ms),
            QueueDepth(tz_ms),
            MilestoneTracking(truth, tz_ms),
            ProxyRequests(tz_ms),
            PeriodicSlots(tz_ms, periods_ms),
            WriteBacklogSeries(tz_ms),
        ]

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.span.feed(chunk, names)
        for s in self.series:
            s.feed(chunk, names)

    def result(self) -> dict[str, Any]:
        return {}

    def tables(self) -> dict[str, Table]:
        span = self.span.span()
        out: dict[str, Table] = {}
        for s in self.series:
            out.update(s.tables(span))
        return out


def series_tables(reducers: list[Any]) -> dict[str, Table]:
    """The report group's outcome when reducers run in a second process
    (:class:`sim.metrics.remote.ProcessReducerSink`): the one :class:`SeriesSet`'s tables."""
    (series,) = reducers
    assert isinstance(series, SeriesSet)
    return series.tables()


def crossings_for(scenario: Scenario) -> GroundTruth:
    """The milestone ground truth of ``scenario``'s world over the planned run (the world is a
    pure function of the scenario and its seed, so this is the run's own)."""
    from sim.rng import RandomStreams
    from sim.world import World

    world = World.build(scenario, RandomStreams(scenario.seed))
    return GroundTruth.of(world, scenario.start_ms, scenario.end_ms)


def write_report(
    out_dir: Path,
    tables: dict[str, Table],
    scenario: Scenario,
    manifest: dict[str, Any],
    summary: dict[str, Any],
    *,
    plots: bool = True,
) -> list[Path]:
    """Write the CSV files, then (with ``plots``) draw the plots and the page from them;
    returns the paths written."""
    csvs = write_tables(out_dir, tables)
    return csvs + (draw_report(out_dir, scenario, manifest, summary) if plots else [])


def draw_report(
    out_dir: Path, scenario: Scenario, manifest: dict[str, Any], summary: dict[str, Any]
) -> list[Path]:
    """Draw every PNG and ``report.html`` from the CSV files in ``out_dir``."""
    from sim.report.figures import draw_run, draw_summary
    from sim.report.html import write_html
    from sim.report.plots import PlotContext

    tables = read_tables(out_dir, list(TABLES))
    summary = as_saved(summary)
    ctx = PlotContext.of(scenario, manifest)
    pngs = [*draw_run(out_dir, tables, ctx), *draw_summary(out_dir, summary, ctx)]
    page = write_html(out_dir / REPORT_FILE, scenario, manifest, summary, pngs, tables)
    return [*pngs, page]


def report_from_log(run_dir: Path) -> list[Path]:
    """Recompute every series from ``run_dir/events.simlog`` and rewrite the report.

    Raises ``ValueError`` when the log does not match the manifest's fingerprint."""
    from sim.events import SavedLog

    scenario = read_scenario(run_dir)
    manifest = read_manifest(run_dir)
    summary = read_summary(run_dir)
    series = SeriesSet(
        scenario.timezone, crossings_for(scenario), scenario.periodic.periods_ms(scenario.params)
    )
    with SavedLog(run_dir / EVENTS_FILE) as log:
        for chunk in log.chunks():
            series.feed(chunk, log.names)
        complete, fingerprint = log.complete, log.fingerprint()
    if complete and fingerprint != manifest.get("event_log_sha256"):
        raise ValueError(
            f"{run_dir / EVENTS_FILE}: its fingerprint {fingerprint[:12]}... differs from the "
            f"manifest's {str(manifest.get('event_log_sha256'))[:12]}...: not this run's log"
        )
    return write_report(run_dir, series.tables(), scenario, manifest, summary)


def redraw(run_dir: Path, *, from_log: bool | None = None) -> list[Path]:
    """``sim plot``: from the saved log when there is one (or ``from_log``), else the CSVs;
    ``findings.md`` is rewritten too (from the summary)."""
    from sim.report.findings_md import write_findings_md

    use_log = (run_dir / EVENTS_FILE).exists() if from_log is None else from_log
    scenario = read_scenario(run_dir)
    manifest = read_manifest(run_dir)
    summary = read_summary(run_dir)
    if use_log:
        paths = report_from_log(run_dir)
    else:
        paths = draw_report(run_dir, scenario, manifest, summary)
    return [*paths, write_findings_md(run_dir, scenario, manifest, summary)]
