"""``sim run`` writes a complete report consistent with summary.json; ``sim plot`` redraws it
byte for byte, from the saved events or from the CSV files."""

from __future__ import annotations

import base64
import csv
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sim.metrics.findings import findings_in, verdict_sentence
from sim.report import TABLES, crossings_for, read_tables, write_series
from sim.report.figures import RUN_FIGURES, SUMMARY_FIGURES
from sim.report.run_files import read_scenario
from sim.units import HOUR_MS
from tests.report.conftest import sim

# write_path.png is drawn only for a run with seed 003's write path or modes (this one has neither).
PNGS = [name for name, _, _ in [*RUN_FIGURES, *SUMMARY_FIGURES] if name != write_series.FILE]
REPORT = [*(f"{t}.csv" for t in TABLES), *PNGS, "report.html", "findings.md"]
TYPES = ("new", "milestone", "normal", "archive")


def _bytes(run_dir: Path, names: list[str]) -> dict[str, bytes]:
    return {n: (run_dir / n).read_bytes() for n in names}


def test_run_writes_every_report_file(report_run: Path) -> None:
    files = {p.name for p in report_run.iterdir()}
    expected = {*REPORT, "manifest.json", "summary.json", "scenario.json", "events.simlog"}
    assert files == expected
    for png in PNGS:
        assert (report_run / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_series_agree_with_the_summary(report_run: Path) -> None:
    summary = json.loads((report_run / "summary.json").read_text())
    t = read_tables(report_run, list(TABLES))
    per_minute = t["snapshots_per_minute"]
    assert (
        sum(int(per_minute.ints(ty).sum()) for ty in (*TYPES, "discovery"))
        == summary["snapshots.total"]
    )
    windows = t["windows"]
    for ty in TYPES:
        assert int(windows.ints(f"executed_{ty}").sum()) == summary.get(f"snapshots.{ty}", 0)
    assert int(windows.ints("peak_count").max()) == summary["windows.max_count"]
    lateness = t["lateness_hourly"]
    kinds = lateness.texts("type")
    assert int(lateness.ints("count")[kinds == "all"].sum()) == sum(
        summary.get(f"lateness.{ty}.count", 0) for ty in TYPES
    )
    for ty in TYPES:
        mine = kinds == ty
        if mine.any():
            assert float(lateness.floats("max_s")[mine].max()) == summary[f"lateness.{ty}.max_s"]
    assert (
        int(sum(t["cleanup_hourly"].ints(ty).sum() for ty in TYPES)) == summary["cleanup.deleted"]
    )
    upstream = t["upstream"]
    requests = upstream.texts("event") == "request"
    assert int(upstream.ints("aids")[requests].sum()) == summary["events.by_kind.ScheduleStarted"]
    singles = requests & (upstream.texts("path") == "single")
    assert int(upstream.ints("count")[singles].sum()) == summary["dispatch.milestone"] + summary[
        "dispatch.new"
    ] - summary.get("dispatch.skipped.row_gone", 0) - summary.get("dispatch.skipped.bili_status", 0)
    depth = t["queue_depth"]
    assert int(depth.ints("active_max").max()) <= 50  # the snapshot queue's workers


def test_milestones_are_the_visible_crossings_of_the_run(report_run: Path) -> None:
    scenario = read_scenario(report_run)
    truth = crossings_for(scenario)
    m = read_tables(report_run, ["milestones"])["milestones"]
    assert len(m) == int(np.count_nonzero(truth.visible)) > 0
    assert int(m.ints("song").sum()) == int(np.count_nonzero(truth.song[truth.visible]))
    captured = m.ints("captured_ms") >= 0
    assert captured.any()
    assert (m.ints("captured_ms")[captured] >= m.ints("crossed_ms")[captured]).all()
    assert (m.floats("latency_s")[captured] >= 0).all()
    brackets = m.floats("bracket_s")[captured]
    known = ~np.isnan(brackets)
    assert (brackets[known] >= m.floats("latency_s")[captured][known]).all()


def test_report_html_holds_every_metric_plot_and_threshold(report_run: Path) -> None:
    html = (report_run / "report.html").read_text()
    summary = json.loads((report_run / "summary.json").read_text())
    for name in summary:
        assert f"<code>{name}</code>" in html, name
    for png in PNGS:
        assert base64.b64encode((report_run / png).read_bytes()).decode() in html
    assert "windows.max_reserved" in html
    assert "&lt;= 1000" in html
    assert "wall_seconds" not in html
    assert "compression_ratio" not in html
    assert "http://" not in html
    assert "https://" not in html
    assert "Partial run" not in html


def test_report_html_opens_with_the_verdict_and_the_findings(report_run: Path) -> None:
    """The verdict, then each finding (sentence, numbers, thresholds, mechanism, its plots),
    all before the metric list; the metric list keeps every name."""
    html = (report_run / "report.html").read_text()
    summary = json.loads((report_run / "summary.json").read_text())
    verdict = html.index(f"<b>Verdict.</b> {verdict_sentence(findings_in(summary))}")
    ticks = html.index('id="finding-ticks"')
    sentence = html.index(summary["findings.ticks.sentence"], ticks)
    metrics = html.index('<h2 id="metrics">')
    assert verdict < ticks < sentence < metrics
    section = html[ticks:metrics]
    assert '<span class="badge sev-ok">ok</span> Tick and queue health' in section
    assert '<code>warn_queue_wait_s</code></td><td class="num">60</td>' in section
    iterations = f"{summary['findings.ticks.iterations']:,}"
    assert f'<code>iterations</code></td><td class="num">{iterations}</td>' in section
    assert summary["findings.ticks.mechanism"] in section
    load_png = base64.b64encode((report_run / "load.png").read_bytes()).decode()
    assert load_png in section  # the plot the finding names, embedded under it
    assert '<a href="#load"><code>load.png</code></a>' in section


def test_plot_recomputes_byte_identical_files_from_saved_events(
    report_run: Path, tmp_path: Path
) -> None:
    run = shutil.copytree(report_run, tmp_path / "run")
    before = _bytes(run, REPORT)
    for name in REPORT:
        (run / name).unlink()
    code, out = sim("plot", str(run), "--json")
    assert code == 0, out
    assert json.loads(out)["source"] == "events"
    assert _bytes(run, REPORT) == before


def test_plot_without_saved_events_redraws_from_the_csv_files(
    report_run: Path, tmp_path: Path
) -> None:
    run = shutil.copytree(report_run, tmp_path / "run")
    (run / "events.simlog").unlink()
    drawn = [*PNGS, "report.html", "findings.md"]
    before = _bytes(run, drawn)
    for name in drawn:
        (run / name).unlink()
    code, out = sim("plot", str(run))
    assert code == 0, out
    assert "from the CSV files" in out
    assert _bytes(run, drawn) == before


def test_plot_refuses_a_log_that_is_not_the_runs(report_run: Path, tmp_path: Path) -> None:
    run = shutil.copytree(report_run, tmp_path / "run")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["event_log_sha256"] = "0" * 64
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, _ = sim("plot", str(run), "--from", "events")
    assert code == 2
    code, _ = sim("plot", str(tmp_path))  # not a report directory
    assert code == 2


def test_run_without_plots_writes_the_series_only(tmp_path: Path) -> None:
    from tests.report.conftest import SCENARIO

    out = tmp_path / "run"
    code, output = sim(
        "run",
        str(SCENARIO),
        "--out",
        str(out),
        "-q",
        "--no-plots",
        "--json",
        "--set",
        'duration="1h"',
    )
    assert code == 0, output
    doc = json.loads(output)
    assert sorted(Path(f).name for f in doc["files"]) == sorted(f"{t}.csv" for t in TABLES)
    assert {v["metric"] for v in doc["expect"]} == {"snapshots.total", "windows.max_reserved"}
    assert doc["verdict"] == verdict_sentence(findings_in(doc["metrics"]))
    assert not (out / "report.html").exists()
    rows = list(csv.DictReader((out / "windows.csv").read_text().splitlines()))
    assert rows[0]["window_start"] == "2031-01-06T00:00+08:00"


def test_the_model_is_let_go_before_the_report_is_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At full scale the model holds 1.6 GB when the run ends; drawing the report (matplotlib)
    while it is still alive would add to the run's peak memory."""
    import weakref

    import sim.runner
    from sim.runner import RunOptions, run_scenario
    from sim.scenario import load_scenario
    from sim.scheduler import build_cvsa_model
    from tests.report.conftest import SCENARIO

    models: list[weakref.ref[Any]] = []

    def build(*args: Any) -> Any:
        model = build_cvsa_model(*args)
        models.append(weakref.ref(model.ctx.store))
        return model

    alive_at_report: list[bool] = []
    write = sim.runner.write_report

    def spy(*args: Any, **kwargs: Any) -> Any:
        alive_at_report.append(models[0]() is not None)
        return write(*args, **kwargs)

    monkeypatch.setattr(sim.runner, "write_report", spy)
    scenario = load_scenario(SCENARIO).model_copy(update={"duration": HOUR_MS})
    run_scenario(scenario, build, RunOptions(out_dir=tmp_path / "run", report=True, plots=False))
    assert alive_at_report == [False]
