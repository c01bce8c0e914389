"""``sim compare``: deltas of every metric, tolerances in the bad direction, exit 99."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from sim.report.compare import bad_direction, check, delta_of, parse_tolerance
from tests.report.conftest import SCENARIO, SETS, sim


def _judge(spec: str, a: dict[str, float], b: dict[str, float]) -> list[tuple[str, bool]]:
    return [(v.metric, v.passed) for v in check(parse_tolerance(spec), a, b)]


def test_tolerances_parse_sign_amount_and_unit() -> None:
    t = parse_tolerance("lateness.new.p99_s=+5%")
    assert (t.pattern, t.limit, t.relative, t.sign) == ("lateness.new.p99_s", 5.0, True, "+")
    assert parse_tolerance("cleanup.deleted=-2.5").sign == "-"
    assert not parse_tolerance("cleanup.deleted=-2.5").relative
    assert parse_tolerance("a.b=±1%").sign == "+-"
    assert parse_tolerance("a.b=+-1%").sign == "+-"
    assert parse_tolerance("a.b=10%").sign == ""
    for bad in ("a.b", "=5%", "a.b=five", "a.b=5%%"):
        with pytest.raises(ValueError, match="METRIC=LIMIT"):
            parse_tolerance(bad)


def test_each_metric_has_a_bad_direction_or_none() -> None:
    assert bad_direction("lateness.normal.p99_s") == "up"
    assert bad_direction("invariants.window_cap.violations") == "up"
    assert bad_direction("cleanup.deleted.new.pending") == "up"
    assert bad_direction("milestones.captured") == "down"
    assert bad_direction("snapshots.total") is None


def test_a_move_beyond_the_tolerance_in_the_bad_direction_fails() -> None:
    a = {"lateness.new.p99_s": 10.0, "snapshots.total": 100, "milestones.captured": 50}
    up = {"lateness.new.p99_s": 10.6, "snapshots.total": 104, "milestones.captured": 40}
    assert _judge("lateness.new.p99_s=5%", a, up) == [("lateness.new.p99_s", False)]
    assert _judge("lateness.new.p99_s=10%", a, up) == [("lateness.new.p99_s", True)]
    assert _judge("lateness.new.p99_s=+0.5", a, up) == [("lateness.new.p99_s", False)]
    assert _judge("lateness.new.p99_s=-1%", a, up) == [("lateness.new.p99_s", True)]  # only down
    # unsigned: the metric's bad direction; an improvement passes, a drop in captures fails
    assert _judge("lateness.new.p99_s=5%", up, a) == [("lateness.new.p99_s", True)]
    assert _judge("milestones.captured=5%", a, up) == [("milestones.captured", False)]
    # no known bad direction: either way counts
    assert _judge("snapshots.total=3%", a, up) == [("snapshots.total", False)]
    assert _judge("snapshots.total=3%", up, a) == [("snapshots.total", False)]
    assert _judge("snapshots.total=+-5%", a, up) == [("snapshots.total", True)]


def test_zero_baselines_missing_metrics_and_patterns() -> None:
    a = {"x.violations": 0, "lateness.new.p99_s": 1.0, "lateness.normal.p99_s": 2.0}
    b = {"x.violations": 1, "lateness.new.p99_s": 1.0, "lateness.archive.p99_s": 9.0}
    [v] = check(parse_tolerance("x.violations=+10%"), a, b)
    assert not v.passed
    assert math.isinf(v.moved or 0)
    assert _judge("x.violations=+1", a, b) == [("x.violations", True)]
    assert _judge("lateness.normal.p99_s=5%", a, b) == [("lateness.normal.p99_s", False)]
    assert _judge("nothing.here=5%", a, b) == [("nothing.here", False)]
    assert _judge("nothing.*=5%", a, b) == [("nothing.*", False)]
    # a pattern judges what both runs have; metrics of one run are listed, not judged
    assert _judge("lateness.*.p99_s=5%", a, b) == [
        ("lateness.archive.p99_s", True),
        ("lateness.normal.p99_s", True),
        ("lateness.new.p99_s", True),
    ]


def test_deltas_say_worse_better_changed_added_removed() -> None:
    assert delta_of("lateness.new.p99_s", 2.0, 3.0).change == "worse"
    assert delta_of("lateness.new.p99_s", 2.0, 1.0).change == "better"
    assert delta_of("snapshots.total", 2, 3).change == "changed"
    assert delta_of("snapshots.total", 2, 2).change == "same"
    d = delta_of("snapshots.total", 4, 5)
    assert (d.delta, d.pct) == (1.0, 25.0)
    assert delta_of("x", None, 1, in_a=False).change == "added"
    assert delta_of("x", 1, None, in_b=False).change == "removed"
    assert delta_of("x.examples", [1], [2]).change == "differs"


@pytest.fixture(scope="module")
def tighter_cap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report run's scenario with a window cap of 20 (series only)."""
    out = tmp_path_factory.mktemp("cap") / "cap20"
    args = ("--out", str(out), "-q", "--no-plots", "--set", "design.window_cap=20")
    code, output = sim("run", str(SCENARIO), *args, *SETS)
    assert code == 0, output
    return out


def test_compare_passes_a_run_against_itself(report_run: Path, tmp_path: Path) -> None:
    code, out = sim(
        "compare", str(report_run), str(report_run), "--json", "--out", str(tmp_path),
        "--tolerance", "lateness.*.p99_s=0%", "--tolerance", "snapshots.total=+-0%",
    )  # fmt: skip
    assert code == 0, out
    doc = json.loads(out)
    assert doc["passed"] is True
    assert {m["change"] for m in doc["metrics"]} == {"same"}
    assert doc["findings_changed"] == []
    assert sorted(Path(f).name for f in doc["files"]) == [
        "comparison.csv",
        "comparison.json",
        "overlay.png",
    ]


def test_compare_flags_a_regression_with_exit_99(
    report_run: Path, tighter_cap: Path, tmp_path: Path
) -> None:
    summary_a = json.loads((report_run / "summary.json").read_text())
    summary_b = json.loads((tighter_cap / "summary.json").read_text())
    # the tighter cap pushes rows into later windows: more probes per placement
    assert summary_b["windows.probes.total"] > summary_a["windows.probes.total"] * 1.05
    args = ("compare", str(report_run), str(tighter_cap), "--out", str(tmp_path))
    code, out = sim(*args, "--tolerance", "windows.probes.total=5%")
    assert code == 99, out
    assert "FAIL  windows.probes.total=5%" in out
    code, out = sim(*args, "--tolerance", "windows.probes.total=-5%", "--json")
    assert code == 0, out
    [verdict] = json.loads(out)["tolerances"]
    assert verdict["passed"] is True
    assert verdict["reason"] == "did not move in the bad direction"
    code, out = sim(*args, "--tolerance", "windows.max_count=5%")  # a lower peak is better
    assert code == 0, out


def test_compare_opens_with_the_findings_whose_severity_changed(
    report_run: Path, tmp_path: Path
) -> None:
    code, out = sim("compare", str(report_run), str(report_run), "--out", str(tmp_path / "same"))
    assert code == 0, out
    assert out.startswith("Findings: no finding changed severity.\n")
    other = shutil.copytree(report_run, tmp_path / "warn")
    summary = json.loads((other / "summary.json").read_text())
    before = summary["findings.ticks.sentence"]
    summary["findings.ticks.severity"] = "warn"
    summary["findings.ticks.sentence"] = "Ticks fell behind [by a lot]."
    (other / "summary.json").write_text(json.dumps(summary))
    code, out = sim("compare", str(report_run), str(other), "--out", str(tmp_path / "c"))
    assert code == 0, out
    assert out.startswith("Findings whose severity changed")
    row = next(line for line in out.splitlines() if "ticks" in line)
    assert [c.strip() for c in row.split("│")[1:4]] == ["ticks", "ok", "warn"]
    assert out.index("A: " + before[:40]) < out.index("B: Ticks fell behind [by a lot].")
    assert out.index("B: Ticks fell behind") < out.index("findings.ticks.severity")
    code, out = sim("compare", str(report_run), str(other), "--json", "--out", str(tmp_path / "j"))
    assert json.loads(out)["findings_changed"] == [
        {
            "id": "ticks",
            "a": "ok",
            "b": "warn",
            "sentence_a": before,
            "sentence_b": "Ticks fell behind [by a lot].",
        }
    ]


def test_compare_without_series_skips_the_overlay_only(report_run: Path, tmp_path: Path) -> None:
    other = shutil.copytree(report_run, tmp_path / "copy")
    (other / "windows.csv").unlink()
    code, out = sim("compare", str(report_run), str(other), "--json", "--out", str(tmp_path / "o"))
    assert code == 0, out
    doc = json.loads(out)
    assert [Path(f).name for f in doc["files"]] == ["comparison.csv", "comparison.json"]
    assert "windows.csv" in doc["notes"][0]


def test_compare_reports_usage_errors_with_exit_2(report_run: Path, tmp_path: Path) -> None:
    code, _ = sim("compare", str(report_run), str(report_run), "--tolerance", "nonsense")
    assert code == 2
    other = shutil.copytree(report_run, tmp_path / "copy")
    (other / "summary.json").unlink()
    code, _ = sim("compare", str(report_run), str(other), "--out", str(tmp_path / "o"))
    assert code == 2
