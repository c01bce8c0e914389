"""``sim check``: thresholds from [expect], exit status 0 / 99 / 2."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sim.cli import cli
from sim.scenario.expect import ExpectSection, evaluate, parse_condition
from tests.conftest import DATA

SHORT = ["--set", 'duration="6h"']


def test_conditions() -> None:
    assert parse_condition("< 5").holds(4.9)
    assert not parse_condition("< 5").holds(5)
    assert parse_condition(">= 1_000").holds(1000)
    assert parse_condition("between 1 and 3").holds(3)
    assert not parse_condition("between 1 and 3").holds(0.5)
    assert not parse_condition("== 0").holds(float("nan"))


def test_a_missing_metric_fails_and_says_so() -> None:
    expect = ExpectSection.model_validate({"no.such_metric": "< 1", "a.b": "== 2"})
    verdicts = evaluate(expect, {"a.b": 2})
    assert [(v.metric, v.passed, v.missing) for v in verdicts] == [
        ("a.b", True, False),
        ("no.such_metric", False, True),
    ]


def test_exit_0_when_thresholds_hold(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli, ["check", str(DATA / "small.toml"), "-q", "--json", "--out", str(tmp_path), *SHORT]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    # the run's series are written for `sim plot` and `sim compare`; no plots
    assert (tmp_path / "small" / "windows.csv").exists()
    assert not (tmp_path / "small" / "report.html").exists()
    assert doc["passed"] is True
    assert {v["metric"] for v in doc["scenarios"]["small"]} == {
        "windows.max_reserved",
        "snapshots.total",
    }
    summary = json.loads((tmp_path / "small" / "summary.json").read_text())
    assert summary["snapshots.total"] == next(
        v["value"] for v in doc["scenarios"]["small"] if v["metric"] == "snapshots.total"
    )


def test_exit_99_when_a_threshold_fails(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli,
        [
            "check",
            str(DATA / "small.toml"),
            "-q",
            "--out",
            str(tmp_path),
            *SHORT,
            "--set",
            'expect."snapshots.total"="< 10"',
        ],
    )
    assert r.exit_code == 99, r.output
    assert "FAIL" in r.output


def test_exit_2_for_a_bad_condition(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli,
        [
            "check",
            str(DATA / "small.toml"),
            "-q",
            "--out",
            str(tmp_path),
            "--set",
            'expect."snapshots.total"="<< 10"',
        ],
    )
    assert r.exit_code == 2
    assert "expect.snapshots.total must be a condition" in r.output
