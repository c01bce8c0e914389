"""Findings round-trip through summary.json names; severities rank; durations read well."""

from __future__ import annotations

import pytest

from sim.metrics.findings import Finding, Severity, finding_metrics, findings_in, verdict_sentence
from sim.metrics.findings.verdicts import duration, local


def _f(fid: str, severity: Severity) -> Finding:
    return Finding(
        id=fid,
        title=fid.title(),
        severity=severity,
        sentence=f"{fid} said so.",
        mechanism="because",
        numbers={"n": 3, "share": 0.5},
        examples=({"aid": 7, "at": "2031-01-06T00:00:00+08:00"},),
        plots=("load.png",),
        thresholds={"warn_share": 0.8},
    )


def test_a_finding_round_trips_through_its_summary_names() -> None:
    summary = {**finding_metrics(_f("b", Severity.WARN)), **finding_metrics(_f("a", Severity.OK))}
    assert summary["findings.b.severity"] == "warn"
    assert summary["findings.b.thresholds.warn_share"] == 0.8
    assert summary["findings.b.share"] == 0.5
    back = findings_in({"other.metric": 1, **summary})
    assert [f.id for f in back] == ["b", "a"]  # worst first
    assert back[0] == _f("b", Severity.WARN)


def test_numbers_may_not_shadow_the_fixed_names() -> None:
    bad = Finding("x", "X", Severity.OK, "s", "m", numbers={"severity": 1})
    with pytest.raises(ValueError, match="may not be named"):
        finding_metrics(bad)


def test_the_verdict_names_the_worst_findings() -> None:
    fs = [_f("a", Severity.OK), _f("b", Severity.WARN), _f("c", Severity.FAIL)]
    assert verdict_sentence(fs) == "The design did not hold: 1 of 3 findings fail (c)."
    assert verdict_sentence(fs[:2]) == "The design held, with warnings: 1 of 2 findings warn (b)."
    assert verdict_sentence(fs[:1]) == "The design held: all 1 findings are ok or info."
    assert [s.rank for s in Severity] == [0, 1, 2, 3]


def test_people_read_local_times_and_short_durations() -> None:
    assert local(1_925_395_200_123, 8 * 3_600_000) == "2031-01-06T00:00:00+08:00"
    cases = (350, 67_000, 5_700_000, 9_000_000, 2 * 86_400_000, -90_000, 1_500)
    assert [duration(ms) for ms in cases] == ["350ms", "67s", "95m", "2.5h", "2d", "-90s", "1.5s"]
