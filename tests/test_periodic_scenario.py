"""``[periodic]`` in a scenario file: what it accepts, and each refusal in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cvsa.job_table import JobSpec
from sim.scenario import load_scenario
from sim.scenario.parse import ScenarioError

HEAD = 'name = "p"\nduration = "1h"\n'


def _load(tmp_path: Path, body: str) -> object:
    path = tmp_path / "p.toml"
    path.write_text(HEAD + body, encoding="utf-8")
    return load_scenario(path)


def test_per_job_schedules_become_the_tables_jobs(tmp_path: Path) -> None:
    sc = _load(
        tmp_path,
        '[periodic]\npolicy = "table"\ntimezone = "Europe/Berlin"\n'
        '[periodic.jobs.scheduleCleanup]\ncron = "*/3 * * * *"\n'
        '[periodic.jobs.dispatchArchiveSnapshots]\nevery = "1h"\nenabled = false\n',
    )
    specs = sc.periodic.specs(sc.params)  # type: ignore[attr-defined]
    assert specs[0] == JobSpec("snapshotTick", 1000, None, True)
    assert specs[4] == JobSpec("dispatchArchiveSnapshots", 3_600_000, None, False)
    assert specs[5] == JobSpec("scheduleCleanup", None, "*/3 * * * *", True)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[periodic]\npolicy = "table"\n[periodic.jobs.snapshotTick]\ncron = "61 * * * *"\n',
            "periodic.jobs.snapshotTick.cron cron '61 * * * *': Bad minute",
        ),
        (
            '[periodic]\npolicy = "table"\n[periodic.jobs.snapshotTick]\ncron = "* * * *"\n',
            "must have five fields (minute hour day month weekday)",
        ),
        (
            '[periodic]\npolicy = "table"\n[periodic.jobs.snapshotTick]\nevery = "2s"\n'
            'cron = "* * * * *"\n',
            "set every or cron, not both",
        ),
        (
            '[periodic]\npolicy = "table"\ntimezone = "Mars/Olympus"\n',
            "periodic.timezone unknown time zone 'Mars/Olympus'",
        ),
        (
            '[periodic]\npolicy = "table"\n[periodic.jobs.tick]\nevery = "2s"\n',
            "unknown periodic job 'tick' (one of: snapshotTick, bulkSnapshotTick,",
        ),
        (
            '[periodic]\npolicy = "table"\n[[periodic.actions]]\nat = "2h"\njob = "snapshotTick"\n',
            "periodic.actions[0].at = 2h falls after the run's end (duration 1h)",
        ),
        (
            '[periodic]\n[periodic.jobs.snapshotTick]\nevery = "2s"\n',
            'jobs apply only to policy = "table"',
        ),
    ],
)
def test_refusals_name_key_rule_and_value(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        _load(tmp_path, body)
    (problem,) = caught.value.problems
    assert message in problem
    assert "\n" not in problem
