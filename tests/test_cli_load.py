"""``sim load`` end to end on the memory backends (the same command drives PostgreSQL and Redis)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sim.cli import cli
from tests.conftest import DATA, wait_for_progress


def _load(tmp_path: Path, *args: str) -> dict:
    result = CliRunner().invoke(
        cli,
        ["load", str(DATA / "small.toml"), "--out", str(tmp_path), "-q", *args],
    )
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "load.json").read_text())


def test_load_times_every_query_and_periodic_job(tmp_path: Path) -> None:
    doc = _load(tmp_path, "--speed", "120", "--set", 'duration="2m"')
    [step] = doc["steps"]
    assert step["speed"] == 120
    assert step["simulated_s"] == 120
    m = doc["metrics"]
    # The run ends at the scenario's end even if the wall clock ran past it.
    assert m["run.simulated_s"] == 120
    assert m["run.partial"] is False
    assert m["load.ops.store.due_schedules.count"] > 0
    assert m["load.ops.store.due_schedules.p99_ms"] >= m["load.ops.store.due_schedules.p50_ms"]
    # Elision is off in load mode: idle ticks run and are timed (a slot the wall clock already
    # passed is skipped, as BullMQ does, so a loaded machine may time fewer than 120).
    assert 1 <= m["load.jobs.snapshotTick.count"] <= 121
    assert 0 <= m["load.jobs.snapshotTick.overrun_fraction"] <= 1
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["concurrent"] is True
    assert manifest["clock"] != "virtual"


def test_ramp_doubles_the_speed_with_fresh_state_each_step(tmp_path: Path) -> None:
    doc = _load(tmp_path, "--ramp", "--speed", "300", "--step", "1", "--max-speed", "600")
    speeds = [s["speed"] for s in doc["steps"]]
    assert speeds in ([300], [300, 600])
    assert [s["simulated_s"] for s in doc["steps"]] == [1.0 * s for s in speeds]
    sustained = [s["speed"] for s in doc["steps"] if s["sustained"]]
    assert doc["highest_sustained_speed"] == (max(sustained) if sustained else None)
    for s in speeds:
        assert (tmp_path / f"x{s:g}" / "manifest.json").exists()
    # Every step has a run report; the harness page sits above them and links each one.
    page = (tmp_path / "load.html").read_text()
    for s in speeds:
        assert (tmp_path / f"x{s:g}" / "report.html").exists()
        assert f'href="x{s:g}/report.html"' in page
    for png in ("harness_ramp.png", "harness_queries.png"):
        assert (tmp_path / png).read_bytes().startswith(b"\x89PNG")
        assert png in page
    verdict = f"x{doc['highest_sustained_speed']:g}" if sustained else "none"
    assert f"Highest speed sustained: <b>{verdict}</b>" in page


def test_the_harness_page_tables_come_from_the_metrics() -> None:
    from sim.report.load_report import job_rows, query_rows, step_row

    metrics = {
        "load.ops.store.due_schedules.count": 10,
        "load.ops.store.due_schedules.p50_ms": 1.0,
        "load.ops.store.due_schedules.p99_ms": 9.0,
        "load.ops.store.due_schedules.max_ms": 12.0,
        "load.ops.counter.reserve.count": 4,
        "load.ops.counter.reserve.p50_ms": 0.5,
        "load.ops.counter.reserve.p99_ms": 20.0,
        "load.ops.counter.reserve.max_ms": 25.0,
        "load.jobs.snapshotTick.count": 200,
        "load.jobs.snapshotTick.overruns": 3,
        "load.jobs.snapshotTick.overrun_fraction": 0.015,
        "load.jobs.snapshotTick.lag.p50_s": 0.1,
        "load.jobs.snapshotTick.lag.p99_s": 0.9,
        "load.jobs.snapshotTick.lag.max_s": 1.5,
        "load.lag.p99_s": 0.9,
    }
    assert [(q["method"], q["count"], q["p99"]) for q in query_rows(metrics)] == [
        ("counter.reserve", 4, 20.0),  # slowest p99 first
        ("store.due_schedules", 10, 9.0),
    ]
    assert job_rows(metrics) == [
        {
            "job": "snapshotTick",
            "count": 200,
            "overruns": 3,
            "overrun_pct": 1.5,
            "p50": 0.1,
            "p99": 0.9,
            "max": 1.5,
        }
    ]
    step = {"speed": 400.0, "simulated_s": 90.0, "wall_seconds": 0.3, "sustained": False}
    row = step_row({**step, "metrics": metrics}, "x400/report.html")
    assert (row["simulated"], row["overrun_pct"], row["slowest"], row["slowest_p99_ms"]) == (
        "90s",
        1.5,
        "counter.reserve",
        20.0,
    )


def test_a_step_ends_on_time_even_inside_a_long_job(tmp_path: Path) -> None:
    """At the step's end, a job still running (here the start-up archive dispatch of all 5,500
    videos, thousands of aiosqlite round trips) stops between two store calls instead of holding
    the step open until it finishes."""
    store = f"sqlite:{tmp_path / 'cut.sqlite'}"
    doc = _load(tmp_path, "--store", store, "--speed", "1", "--set", 'duration="2s"')
    m = doc["metrics"]
    assert m["run.partial"] is False
    assert m["run.simulated_s"] == 2
    assert 0 < m.get("schedules.created.archive", 0) < 5_500, "the dispatch was cut short"


def test_warm_dispatches_every_video_before_the_clock_starts(tmp_path: Path) -> None:
    """--warm: the first dispatch of the cold catalogue (an archive row for each of the 5,500
    videos, a normal row for each of the 500 songs) is set-up, untimed; the step times only
    what runs after it."""
    store = f"sqlite:{tmp_path / 'warm.sqlite'}"
    doc = _load(tmp_path, "--store", store, "--speed", "1", "--set", 'duration="2s"', "--warm")
    m = doc["metrics"]
    assert (m["schedules.created.archive"], m["schedules.created.normal"]) == (5_500, 500)
    assert "load.ops.store.insert_schedule.count" not in m, "set-up calls are not timed"
    assert m["load.ops.store.due_schedules.count"] > 0


def test_an_interrupted_load_run_exits_130_and_is_marked_partial_everywhere(
    tmp_path: Path,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim", "load", str(DATA / "small.toml"), "--speed", "100",
         "--set", 'duration="1h"', "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    wait_for_progress(proc, timeout_s=120)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err.decode()
    doc = json.loads((tmp_path / "load.json").read_text())
    [step] = doc["steps"]
    assert doc["partial"] is True
    assert step["partial"] is True
    assert step["sustained"] is False
    assert 0 < step["simulated_s"] < 3600  # what ran, not the scenario's hour
    assert "interrupted" in stdout.decode()
    assert "highest speed sustained: none (PARTIAL: interrupted)" in stdout.decode()
    page = (tmp_path / "load.html").read_text()
    assert "<b>Partial run.</b>" in page
    assert '<td class="undecided">interrupted</td>' in page


def test_the_verdict_names_the_numbers_that_decided_it() -> None:
    from sim.report.load_report import step_verdict

    timed = {"load.jobs.snapshotTick.overrun_fraction": 0.0, "load.lag.p99_s": 0.2}
    assert step_verdict(timed, partial=False) == (True, "sustained")
    assert step_verdict(timed, partial=True) == (False, "interrupted")
    assert step_verdict({}, partial=False) == (False, "not measured: no periodic job ran")
    late = {**timed, "load.lag.p99_s": 2.5}
    assert step_verdict(late, partial=False) == (False, "falls behind: lag p99 2.500 s > 1 s")
    over = {**late, "load.jobs.snapshotTick.overrun_fraction": 0.03}
    assert step_verdict(over, partial=False) == (
        False,
        "falls behind: overruns 3.00 % > 1 %, lag p99 2.500 s > 1 s",
    )


def test_step_and_max_speed_without_ramp_are_refused_naming_the_flag(tmp_path: Path) -> None:
    for flag, value in (("--step", "5"), ("--max-speed", "800")):
        result = CliRunner().invoke(
            cli, ["load", str(DATA / "small.toml"), "--out", str(tmp_path), flag, value]
        )
        assert result.exit_code == 2
        assert (
            f"Error: {flag} sets a --ramp step; without --ramp the run lasts the scenario's "
            "duration (set it with --set 'duration=\"10m\"')"
        ) in result.output
