"""``sim compare`` tells the truth (issue 29): it warns when the runs differ in what was run,
labels a change by the metric's declared good direction, writes numbers for people, refuses a
tolerance no run can be judged on, and fits the terminal without cutting a metric name."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from sim.cli import cli
from sim.cli.compare import print_comparison
from sim.report.compare import compare_runs, delta_cells, delta_of, metric_cell
from sim.report.numbers import percent, show_number


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _edit(run: Path, name: str, **changes: object) -> None:
    doc = json.loads((run / name).read_text())
    doc.update(changes)
    (run / name).write_text(json.dumps(doc))


@pytest.fixture
def other(report_run: Path, tmp_path: Path) -> Path:
    """A copy of the shared run, to edit."""
    return shutil.copytree(report_run, tmp_path / "other")


def test_numbers_are_for_people() -> None:
    assert show_number(2066540.0) == "2,066,540"
    assert show_number(2066540.25, signed=True) == "+2,066,540"
    assert show_number(-43200.0, signed=True) == "-43,200"
    assert show_number(12.5) == "12.5"
    assert show_number(0.123456789) == "0.123457"
    assert show_number(1234.5678, 4) == "1,235"
    assert show_number(3, signed=True) == "+3"
    assert show_number(0.0, signed=True) == "0"
    assert show_number(1.5e-6) == "1.5e-06"
    assert show_number(8.68060e-05, signed=True) == "+8.68e-05"
    assert percent(12.5) == "+12.5 %"
    assert percent(-76.6666) == "-76.7 %"
    assert percent(123456.0) == "+123,456 %"
    assert "e+" not in show_number(9.87654321e12)


def test_a_change_is_better_or_worse_only_with_a_good_direction() -> None:
    assert delta_of("lateness.new.p99_s", 2.0, 3.0).change == "worse"
    assert delta_of("milestones.captured", 5, 4).change == "worse"  # higher is better
    assert delta_of("findings.capacity.headroom", 0.1, 0.2).change == "better"
    for count in ("snapshots.total", "dispatch.new", "events.by_kind.JobAdded", "run.simulated_s"):
        assert delta_of(count, 1, 2).change == "changed"
        assert delta_of(count, 2, 1).change == "changed"
    # a finding's severity moves by rank
    assert delta_of("findings.ticks.severity", "ok", "warn").change == "worse"
    assert delta_of("findings.ticks.severity", "fail", "info").change == "better"
    assert delta_of("findings.ticks.sentence", "a", "b").change == "differs"


def test_cells_format_deltas_and_values_for_people() -> None:
    row = delta_of("windows.probes.total", 1000.0, 2067540.0)
    assert delta_cells(row) == ("+2,066,540", "+206,654 %")
    assert metric_cell([1, 2, 3]) == "3 items"
    assert metric_cell("x" * 50) == "x" * 29 + "…"
    assert metric_cell(None) == ""


def test_an_unknown_tolerance_is_refused_before_anything_is_written(
    report_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cmp"
    r = _invoke(
        "compare", str(report_run), str(report_run), "--out", str(out),
        "--tolerance", "latenes.new.p99_s=5%", "--tolerance", "latenes.*.p99_s=+5",
        "--tolerance", "lateness.*.p99_s=+5",
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines() == [
        "error: --tolerance 'latenes.new.p99_s=5%': no run writes a metric named "
        "latenes.new.p99_s; did you mean lateness.new.p99_s, lateness.new.p90_s or "
        "lateness.new.p50_s?",
        "error: --tolerance 'latenes.*.p99_s=+5': the pattern latenes.*.p99_s matches no metric "
        "a run writes; did you mean lateness.*.p99_s, lateness.*.p90_s or lateness.*.p50_s?",
    ]
    assert r.stdout == ""
    assert not out.exists()


def test_a_name_no_run_of_these_writes_but_one_could_is_judged_missing(
    report_run: Path, tmp_path: Path
) -> None:
    # a 6-hour run has no archive snapshots: the name is right, the run lacks it (exit 99)
    r = _invoke(
        "compare", str(report_run), str(report_run), "--out", str(tmp_path),
        "--tolerance", "lateness.archive.p99_s=5%",
    )  # fmt: skip
    assert r.exit_code == 99, r.output
    assert "FAIL  lateness.archive.p99_s=5%: lateness.archive.p99_s: missing in run A" in r.stdout


def test_no_warning_for_a_run_against_itself(report_run: Path, tmp_path: Path) -> None:
    r = _invoke("compare", str(report_run), str(report_run), "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert json.loads(r.stdout)["warnings"] == []


def test_warns_before_the_table_when_the_runs_differ(
    report_run: Path, other: Path, tmp_path: Path
) -> None:
    _edit(other, "manifest.json", seed=2, partial=True, simulated_seconds=3 * 3600.0)
    scenario = json.loads((other / "scenario.json").read_text())
    scenario["design"]["window_cap"] = 20
    scenario["duration"] = "12h"
    scenario["seed"] = 2
    (other / "scenario.json").write_text(json.dumps(scenario))
    expected = [
        "the runs differ in design.window_cap: null (A) and 20 (B)",
        "the runs differ in duration: 6h (A) and 12h (B)",
        "the runs differ in seed: 7 (A) and 2 (B)",
        "the runs differ in completeness: complete (A) and partial, interrupted after 3h (B)",
    ]
    r = _invoke("compare", str(report_run), str(other), "--out", str(tmp_path / "t"))
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines() == [f"warning: {w}" for w in expected]
    assert r.output.index("warning: the runs differ in seed") < r.output.index("metric")
    r = _invoke("compare", str(report_run), str(other), "--out", str(tmp_path / "j"), "--json")
    assert json.loads(r.stdout)["warnings"] == expected
    assert json.loads((tmp_path / "j" / "comparison.json").read_text())["warnings"] == expected


def test_warns_when_the_scenarios_differ_by_name(
    report_run: Path, other: Path, tmp_path: Path
) -> None:
    _edit(other, "manifest.json", scenario="baseline")
    result = compare_runs(report_run, other, [])
    assert result.warnings == ["the runs differ in scenario: small (A) and baseline (B)"]


def _render(result: object, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    print_comparison(console, result, show_all=True)
    return console.export_text().splitlines()


@pytest.mark.parametrize("width", [80, 200])
def test_the_table_fits_the_terminal_and_keeps_metric_names_whole(
    report_run: Path, other: Path, width: int
) -> None:
    long = "findings.executed_load.thresholds.bulk_request_limit.alicloud_hangzhou"
    summary = json.loads((other / "summary.json").read_text())
    summary["windows.probes.total"] += 2066540
    summary[long] += 1
    (other / "summary.json").write_text(json.dumps(summary))
    result = compare_runs(report_run, other, [])
    lines = _render(result, width)
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    assert "…" not in "".join(line for line in lines if ".p99" in line or long in line)
    for row in result.rows:  # every name whole, on one line
        assert any(row.metric in line for line in lines), row.metric
    assert "e+0" not in text
    probes = next(line for line in lines if "windows.probes.total" in line)
    at = lines.index(probes)
    # the delta, on the table's row or (at 80 columns) on the line below the name
    assert "+2,066,540" in probes + lines[at + 1]
    if width == 200:
        assert "delta %" in text  # every column at 200
