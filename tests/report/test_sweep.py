"""``sim sweep``: the grid, its order, and a tiny real sweep in two processes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sim.cli import cli
from sim.report.sweep import select_metrics
from sim.scenario.grid import Axis, grid, parse_seeds, parse_sets, point_label, split_values
from tests.conftest import DATA
from tests.report.conftest import SCENARIO, sim


def test_values_split_at_top_level_commas_only() -> None:
    assert split_values("1000,2000, 3000") == ["1000", "2000", "3000"]
    assert split_values('["1d","0ms"],["2d"]') == ['["1d","0ms"]', '["2d"]']
    assert split_values('"a,b",c') == ['"a,b"', "c"]
    assert split_values("{ x = 1, y = 2 }") == ["{ x = 1, y = 2 }"]


def test_sets_become_axes_and_fixed_overrides_and_a_grid_in_order() -> None:
    axes, fixed = parse_sets(
        ["design.window_cap=1000,2000", 'duration="6h"', "arrivals.per_day=1,2,3"]
    )
    assert axes == [
        Axis("design.window_cap", ("1000", "2000")),
        Axis("arrivals.per_day", ("1", "2", "3")),
    ]
    assert fixed == ['duration="6h"']
    points = grid(axes)
    assert len(points) == 6
    assert points[0] == {"design.window_cap": "1000", "arrivals.per_day": "1"}
    assert points[1] == {"design.window_cap": "1000", "arrivals.per_day": "2"}
    assert point_label(3, points[3], 1) == "3_window_cap=2000,per_day=1"
    for bad in (["x"], ["a.b=1,,2"], ["a.b=1,2", "a.b=3,4"]):
        with pytest.raises(ValueError, match="--set"):
            parse_sets(bad)


def test_metric_patterns_expand_in_order() -> None:
    names = ["lateness.new.p99_s", "lateness.normal.p99_s", "snapshots.total"]
    chosen, unmatched = select_metrics(["snapshots.total", "lateness.*.p99_s", "nope"], names)
    assert chosen == ["snapshots.total", "lateness.new.p99_s", "lateness.normal.p99_s"]
    assert unmatched == ["nope"]


def test_a_two_point_sweep_runs_in_parallel_and_tabulates_in_grid_order(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    code, output = sim(
        "sweep", str(SCENARIO), "--set", 'duration="2h"', "--set", "design.window_cap=2,1000",
        "--metric", "windows.max_reserved", "--metric", "snapshots.total",
        "--jobs", "2", "--no-plots", "--json", "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    doc = json.loads(output)
    assert [p["set"] for p in doc["points"]] == [
        {"design.window_cap": "2"},
        {"design.window_cap": "1000"},
    ]
    assert doc["metrics"] == ["windows.max_reserved", "snapshots.total"]
    rows = list(csv.DictReader((out / "sweep.csv").read_text().splitlines()))
    assert [r["design.window_cap"] for r in rows] == ["2", "1000"]
    for point, row in zip(doc["points"], rows, strict=True):
        run = out / "runs" / point["run"]
        summary = json.loads((run / "summary.json").read_text())
        manifest = json.loads((run / "manifest.json").read_text())
        assert point["event_log_sha256"] == manifest["event_log_sha256"]
        assert float(row["windows.max_reserved"]) == summary["windows.max_reserved"]
        assert (run / "windows.csv").exists()
        assert not (run / "report.html").exists()  # --no-plots
    low, high = (float(r["windows.max_reserved"]) for r in rows)
    assert low <= 2 < high  # the cap holds, and the larger cap is used
    assert (out / "sweep.png").read_bytes()[:4] == b"\x89PNG"


def test_a_sweep_validates_every_point_before_running(tmp_path: Path) -> None:
    code, _ = sim(
        "sweep", str(SCENARIO), "--set", "design.window_cap=1000,-5", "--out", str(tmp_path / "s")
    )
    assert code == 2
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("1-4", [1, 2, 3, 4]), ("7", [7]), ("1,2,5", [1, 2, 5]), ("1-3,9,2", [1, 2, 3, 9])],
)
def test_seed_lists(text: str, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "a", "3-1", "1-", "1-20000"])
def test_bad_seed_lists_say_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match="must "):
        parse_seeds(text)


def test_a_swarm_tabulates_medians_bands_and_severities(tmp_path: Path) -> None:
    out = tmp_path / "swarm"
    code, output = sim(
        "sweep", str(SCENARIO), "--set", 'duration="3h"', "--set", "design.window_cap=2,1000",
        "--seeds", "1-3", "--metric", "snapshots.total", "--jobs", "2", "--no-plots", "--json",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    doc = json.loads(output)
    assert doc["seeds"] == [1, 2, 3]
    for point in doc["points"]:
        totals = []
        for run in point["seeds"]:
            summary = json.loads(
                (out / "runs" / point["run"] / f"seed-{run['seed']}" / "summary.json").read_text()
            )
            assert summary["snapshots.total"] == run["metrics"]["snapshots.total"]
            totals.append(summary["snapshots.total"])
        band = point["bands"]["snapshots.total"]
        assert band["median"] == sorted(totals)[1]
        assert min(totals) <= band["p5"] <= band["median"] <= band["p95"] <= max(totals)
        assert sum(point["severities"]["capacity"].values()) == 3
    assert doc["points"][0]["severities"]["capacity"] == {"fail": 3}  # a cap of 2
    rows = list(csv.DictReader((out / "sweep.csv").read_text().splitlines()))
    assert {"snapshots.total", "snapshots.total.p5", "snapshots.total.p95"} <= set(rows[0])


def test_run_seeds_is_a_swarm_of_one_scenario(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    code, output = sim(
        "run", str(SCENARIO), "--set", 'duration="2h"', "--seeds", "4,5", "-q", "--no-plots",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    flat = " ".join(output.split())  # the table title wraps at the terminal's width
    assert "median [5 % - 95 %] over 2 seeds" in flat
    assert "in 2 of 2" in flat
    assert (out / "runs" / "seed-4" / "summary.json").is_file()
    assert (out / "swarm.csv").is_file()
    assert (out / "swarm.png").read_bytes()[:4] == b"\x89PNG"
    seeds = [json.loads((out / "runs" / f"seed-{s}" / "manifest.json").read_text()) for s in (4, 5)]
    assert seeds[0]["event_log_sha256"] != seeds[1]["event_log_sha256"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "x"], "'--seeds'"),
        (["--seeds", "1-2", "--seed", "3"], "drop --seed"),
        (["--seeds", "1-2", "--store", "sqlite:/tmp/x.db"], "drop --store"),
    ],
)
def test_run_seeds_refuses_what_it_cannot_do(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["run", str(SCENARIO), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_a_metric_no_run_writes_is_refused_before_the_sweep_runs(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["sweep", str(DATA / "small.toml"), "--set", "design.window_cap=1000,2000",
         "--metric", "latenes.new.p99_s", "--out", str(tmp_path / "s")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert (
        "Invalid value for '--metric': no run writes a metric named latenes.new.p99_s; did you "
        "mean lateness.new.p99_s, lateness.new.p90_s or lateness.new.p50_s?"
    ) in result.output
    assert not (tmp_path / "s").exists()
