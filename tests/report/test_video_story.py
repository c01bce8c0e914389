"""``sim explain``: one video's story from the shared small run (tests/report/conftest.py).

Aid 221393785 is an approacher that crosses 100,000 views at 01:21:55 local time; at 01:10 its
milestone row #6312 hit a fetch error, was retried 596 ms later and completed 1.8 s after its due
time. The lines below were checked by hand against the event log.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from sim.cli import cli
from sim.cli.exits import EXIT_USAGE
from sim.events import cvsa_kinds as K
from sim.report.run_files import EVENTS_FILE, read_scenario
from sim.report.video_story import read_story
from sim.report.video_story_lines import timeline
from sim.report.video_story_world import headline, world_truth
from sim.units import MINUTE_MS

AID = 221393785
T = "2031-01-06T01:10:"
ROW = "2031-01-06T01:10:20"


def _explain(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["explain", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_the_timeline_of_a_retried_row(report_run: Path) -> None:
    scenario = read_scenario(report_run)
    lo = scenario.start_ms + 70 * MINUTE_MS
    story = read_story(report_run / EVENTS_FILE, AID)
    lines = timeline(story, scenario.timezone, lo, lo + MINUTE_MS)
    # (event, row, type, time, due), times in ms after 01:10:00 local
    got = [(ln.event, ln.row, ln.type, ln.t_ms - lo, ln.due_ms - lo) for ln in lines]
    due = 20_788  # row #6312 is due at 01:10:20.788; the tick takes rows due within 1 s (§7.2)
    assert got == [
        ("not created", -1, "milestone", 0, 23_484),  # requested time of the refused row
        ("dispatched", 6312, "milestone", 20_000, due),
        ("started", 6312, "milestone", 20_000, due),
        ("upstream error", 6312, "milestone", 20_353, due),  # attributed through job 297
        ("retry", 6312, "milestone", 20_353, due),
        ("snapshot", 6312, "milestone", 22_583, due),  # retried after 596 ms, then fetched
        ("finished", 6312, "milestone", 22_583, due),
        ("row created", 6315, "milestone", 22_583, 44_505),  # the next row, as it finished
        ("dispatched", 6315, "milestone", 44_000, 44_505),
        ("started", 6315, "milestone", 44_000, 44_505),
        ("snapshot", 6315, "milestone", 44_047, 44_505),
        ("finished", 6315, "milestone", 44_047, 44_505),
        ("row created", 6318, "milestone", 44_047, 68_762),
    ]
    by_event = {ln.event: ln for ln in lines[:7]}
    assert by_event["dispatched"].detail == "job 297, priority 1; 788ms before due"
    assert by_event["upstream error"].detail == "fetch_error; job 297, single call"
    assert by_event["retry"].detail == "attempt 1 in 596ms after fetch_error; job 297"
    snap = by_event["snapshot"]
    assert (snap.views, snap.detail) == (99_998, "server time 01:10:21.766; 1.8s after due")
    assert lines[7].detail == (
        "requested 2031-01-06T01:10:44 by the re-ETA after a milestone snapshot (§9 step 7); "
        "booked as requested (exact, window 01:10 now holds 8)"
    )
    # The failure is the job's, logged without an aid: only the job ties it to this video.
    assert len(story[K.UpstreamFailed]) == 1
    assert len(story[K.RetryScheduled]) == 1


def test_the_headline_says_when_the_milestone_was_crossed_and_captured(report_run: Path) -> None:
    scenario = read_scenario(report_run)
    story = read_story(report_run / EVENTS_FILE, AID)
    lo, hi = scenario.start_ms, scenario.end_ms
    text = headline(story, world_truth(scenario, AID, lo, hi), scenario.timezone, lo, hi)
    assert text[1] == (
        "Crossed 100,000 views at 2031-01-06T01:21:55+08:00: captured 15.7s later (bracket 16.6s)."
    )
    assert text[2].startswith("In this span: 81 snapshots, 82 rows created, 16 not created,")


def test_the_command_prints_the_table_and_writes_the_plot(report_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "story.png"
    code, stdout, _ = _explain(
        str(report_run),
        "--aid",
        str(AID),
        "--from",
        "1h10m",
        "--to",
        f"{T}59+08:00",
        "--out",
        str(out),
    )
    assert code == 0
    assert f"{ROW}   upstream error   #6312   milestone   {ROW}" in stdout
    assert "fetch_error; job 297, single call" in stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert stdout.rstrip().endswith(f"wrote {out}")


def test_a_run_without_a_saved_log_says_how_to_get_one(report_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(report_run, run, ignore=shutil.ignore_patterns(EVENTS_FILE, "*.png"))
    code, _, err = _explain(str(run), "--aid", str(AID))
    assert code == EXIT_USAGE
    assert "no saved event log" in err
    assert f"sim run SCENARIO --out {run} --save-events" in err
    assert "Traceback" not in err


def _without_findings(report_run: Path, run: Path, **examples: list[dict[str, object]]) -> None:
    """A copy of the run whose summary has no findings but ``examples`` (id -> examples)."""
    shutil.copytree(report_run, run, ignore=shutil.ignore_patterns("*.png"))
    summary = json.loads((run / "summary.json").read_text())
    summary = {k: v for k, v in summary.items() if not k.startswith("findings.")}
    for fid, items in examples.items():
        summary[f"findings.{fid}.severity"] = "warn"
        summary[f"findings.{fid}.examples"] = items
    (run / "summary.json").write_text(json.dumps(summary))


def test_an_aid_not_in_the_log_suggests_some_that_are(report_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _without_findings(report_run, run)
    code, _, err = _explain(str(run), "--aid", "5")
    assert code == EXIT_USAGE
    # Without findings' examples: the run's milestone crossings (milestones.csv) first.
    suggested = "236885587, 86218215, 226836875, 221393785, 107555788"
    assert err == f"error: aid 5 is not in the event log of {run}; aids that are: {suggested}\n"
    for aid in suggested.split(", "):
        assert read_story(run / EVENTS_FILE, int(aid)).found


def test_the_findings_examples_come_first_among_the_suggestions(
    report_run: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    _without_findings(report_run, run, staleness=[{"aid": 262216960, "type": "normal"}])
    code, _, err = _explain(str(run), "--aid", "5")
    assert code == EXIT_USAGE
    assert "aids that are: 262216960, 236885587, 86218215, 226836875, 221393785\n" in err


def test_a_bad_time_names_its_flag(report_run: Path) -> None:
    code, _, err = _explain(str(report_run), "--aid", str(AID), "--to", "yesterday")
    assert code == EXIT_USAGE
    assert "Invalid value for '--to'" in err
    assert "'yesterday'" in err
    code, _, err = _explain(str(report_run), "--aid", str(AID), "--from", "3h", "--to", "2h")
    assert code == EXIT_USAGE
    assert "--from must be before --to" in err
