"""``sim check``: thresholds from [expect], exit status 0 / 99 / 2."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
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


def test_margins_say_how_far_a_gate_is_from_flipping() -> None:
    expect = ExpectSection.model_validate(
        {
            "windows.max_reserved": "<= 1000",
            "snapshots.total": "> 50",
            "cleanup.deleted": "between 10 and 40",
            "invariants.window_cap.violations": "== 0",
            "findings.capacity.severity": "<= info",
            "findings.lateness.severity": "<= warn",
        }
    )
    metrics = {
        "windows.max_reserved": 573,
        "snapshots.total": 25,
        "cleanup.deleted": 20,
        "invariants.window_cap.violations": 0,
        "findings.capacity.severity": "warn",
        "findings.capacity.score": 0.9,
        "findings.capacity.score_warn": 0.8,
        "findings.capacity.score_fail": 1.0,
        "findings.lateness.severity": "ok",  # a finding without a score: no margin
    }
    margins = {v.metric: v.margin for v in evaluate(expect, metrics)}
    assert margins["windows.max_reserved"] == pytest.approx(math.log(1000 / 573))
    assert margins["snapshots.total"] == pytest.approx(math.log(25 / 50))  # < 0: fails
    assert margins["cleanup.deleted"] == pytest.approx(math.log(2))  # nearer the upper bound
    assert margins["findings.capacity.severity"] == pytest.approx(math.log(0.8 / 0.9))
    assert margins["invariants.window_cap.violations"] is None
    assert margins["findings.lateness.severity"] is None


def test_a_missing_metric_fails_and_says_so() -> None:
    expect = ExpectSection.model_validate(
        {"lateness.archive.p99_s": "< 1", "cleanup.deleted": "== 2"}
    )
    verdicts = evaluate(expect, {"cleanup.deleted": 2})  # a short run writes no archive lateness
    assert [(v.metric, v.passed, v.missing) for v in verdicts] == [
        ("cleanup.deleted", True, False),
        ("lateness.archive.p99_s", False, True),
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


def test_severity_conditions_compare_by_rank() -> None:
    at_most_info = parse_condition("<= info")
    assert [at_most_info.holds(s) for s in ("ok", "info", "warn", "fail")] == [
        True,
        True,
        False,
        False,
    ]
    assert parse_condition("== fail").holds("fail")
    assert not parse_condition("!= fail").holds("fail")
    assert parse_condition("> ok").holds("warn")
    assert parse_condition("between info and warn").holds("warn")
    assert not parse_condition("between info and warn").holds("ok")
    # a severity is not a number, nor a number a severity
    assert not at_most_info.holds(0)
    assert not parse_condition("< 5").holds("ok")
    assert parse_condition("< 5").holds(True)  # a flag is 1, as before


@pytest.mark.parametrize(
    ("condition", "word"),
    [("<= infoo", "infoo"), ("== pass", "pass"), ("between ok and bad", "bad")],
)
def test_an_unknown_severity_word_fails_at_load(condition: str, word: str) -> None:
    expected = f"must compare with a severity: ok, info, warn or fail (got {word!r}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        ExpectSection.model_validate({"findings.capacity.severity": condition})


def test_check_gates_on_a_findings_severity(tmp_path: Path) -> None:
    def check(condition: str) -> tuple[int, str]:
        r = CliRunner().invoke(
            cli,
            [
                "check",
                str(DATA / "small.toml"),
                "-q",
                "--json",
                "--out",
                str(tmp_path),
                *SHORT,
                "--set",
                f'expect."findings.ticks.severity"="{condition}"',
            ],
        )
        return r.exit_code, r.output

    code, out = check("<= info")
    assert code == 0, out
    verdict = next(
        v for v in json.loads(out)["scenarios"]["small"] if v["metric"] == "findings.ticks.severity"
    )
    assert verdict == {
        "metric": "findings.ticks.severity",
        "condition": "<= info",
        "value": "ok",
        "passed": True,
    }
    code, out = check("> ok")
    assert code == 99, out
    code, out = check("<= infoo")
    assert code == 2
    assert "expect.findings.ticks.severity must compare with a severity" in out


def test_an_unknown_metric_name_is_refused_before_anything_runs(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli,
        [
            "check", str(DATA / "small.toml"), "-q", "--out", str(tmp_path),
            "--set", 'expect."latenes.new.p99_s"="< 5"',
        ],
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    [line] = r.output.splitlines()  # one line; the loader says where (the --set)
    assert line.startswith("error: ")
    assert "--set" in line
    assert (
        "expect.latenes.new.p99_s is not a metric any run writes (got 'latenes.new.p99_s'); "
        "did you mean lateness.new.p99_s, lateness.new.p90_s or lateness.new.p50_s?"
    ) in line
    assert not (tmp_path / "small").exists()  # nothing ran


def test_an_unknown_name_in_the_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "typo.toml"
    path.write_text(
        (DATA / "small.toml").read_text()
        + '"findings.capacty.severity" = "<= info"\n"zzz.qqq" = "< 1"\n'
    )
    r = CliRunner().invoke(cli, ["check", str(path), "-q", "--out", str(tmp_path)])
    assert r.exit_code == 2, r.output
    line = len((DATA / "small.toml").read_text().splitlines()) + 1
    assert r.output.splitlines() == [
        f"error: {path}:{line}: expect.findings.capacty.severity is not a metric any run writes "
        "(got 'findings.capacty.severity'); did you mean findings.capacity.severity, "
        "findings.write_path.severity or findings.ticks.severity?",
        f"error: {path}:{line + 1}: expect.zzz.qqq is not a metric any run writes "
        "(got 'zzz.qqq'); docs/report.md lists every name under 'Metric names'",
    ]


@pytest.mark.parametrize(
    "name",
    [
        "findings.executed_load.requests.my-proxy.peak",  # proxies are the scenario's
        "jobs.snapshot#2.snapshotVideo.failed",  # a second deployment
        "periodic.scheduleCleanup.missed_slots",
        "findings.staleness.unavailable.under_review",
    ],
)
def test_names_a_run_can_write_are_accepted(name: str) -> None:
    assert list(ExpectSection.model_validate({name: "< 1"}).root) == [name]
