"""The lines of one video's timeline table (``sim explain``): each record of the story in words,
with the times a reader compares (requested, due, executed) and the rule or reason behind it
(the § numbers are those of the reference, ../shared/reference/cvsa-scheduler.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from sim.events import cvsa_kinds as K
from sim.metrics.findings.verdicts import duration
from sim.report.video_story import Story, local_second
from sim.units import Ms, format_instant_ms


class Line(NamedTuple):
    """One line of the timeline table (instants in epoch ms; -1 for none)."""

    t_ms: int
    seq: int
    event: str
    row: int
    type: str
    due_ms: int
    views: int
    detail: str
    repeats: int = 1
    """Identical consecutive refusals folded into this line (``not created`` every tick)."""
    last_ms: int = -1
    """The last of them."""


def _vs_due(t_ms: int, due_ms: int) -> str:
    if due_ms < 0:
        return ""
    gap = t_ms - due_ms
    return f"{duration(gap)} after due" if gap >= 0 else f"{duration(-gap)} before due"


def _detail_fns(s: Story, tz_ms: Ms) -> dict[type, Callable[[Any], tuple[str, int, int, str]]]:
    """Per kind: ``record -> (event, due_ms, views, detail)``."""

    def at(ms: Ms) -> str:
        return local_second(ms, tz_ms)

    reason = {
        "duplicate_active": "an active row of this type already exists (§5 step 3)",
        "milestone_not_earlier": "the active milestone row is already as early (§5 step 2)",
        "aid_processing": "another row of this video is processing (§7.2)",
        "row_gone": "cleanup deleted the row before its job ran (§9 step 1)",
        "bili_status": "the video's bilibili status blocks the single path (§9 step 2)",
    }

    asked_by = {
        "dispatcher": "by its dispatcher",
        "forced": "forced, by classifyVideo (§13.2)",
        "continuation": "as the next new row (§9 step 5)",
        "reeta": "by the re-ETA after a milestone snapshot (§9 step 7)",
        "bulk_reschedule": "by a bulk success (§10.3)",
        "retry": "as a retry (§9, §10)",
    }

    def created(r: K.ScheduleCreated) -> tuple[str, int, int, str]:
        place = s.word("placement", r.placement)
        shift = r.due_ms - r.requested_ms
        rule = s.word("schedule_rule", r.rule)
        text = f"requested {at(r.requested_ms)} {asked_by.get(rule, rule)}; "
        if shift:
            text += f"booked {duration(abs(shift))} {'later' if shift > 0 else 'earlier'}"
        else:
            text += "booked as requested"
        text += f" ({place}"
        if r.window_ms == K.NO_WINDOW:
            text += ", every window full: nothing reserved"
        else:
            text += f", window {at(r.window_ms)[11:16]} now holds {r.window_count}"
        return "row created", r.due_ms, -1, text + (", forced)" if r.forced else ")")

    def moved(r: K.ScheduleMoved) -> tuple[str, int, int, str]:
        text = f"moved earlier by {duration(r.from_ms - r.to_ms)} from {at(r.from_ms)}"
        return "row moved", r.to_ms, -1, text + ("" if r.was_pending else " (was processing)")

    def taken(r: K.SnapshotTaken) -> tuple[str, int, int, str]:
        text = "refused: unique (aid, time) " if r.duplicate else ""
        text += f"server time {format_instant_ms(r.taken_ms, tz_ms)[11:23]}"
        return "snapshot", r.due_ms, r.views, f"{text}; {_vs_due(r.t_ms, r.due_ms)}".strip("; ")

    def failed(r: K.UpstreamFailed) -> tuple[str, int, int, str]:
        call = "single call" if r.aids == 1 else f"bulk call for {r.aids} videos"
        code = f" (code {r.code})" if r.code else ""
        return (
            "upstream error",
            -1,
            -1,
            f"{s.word('upstream_error', r.kind)}{code}; job {r.job}, {call}",
        )

    return {
        K.VideoDiscovered: lambda r: (
            "discovered",
            -1,
            -1,
            f"entered bilibili_metadata with a first snapshot; published {at(r.published_ms)}",
        ),
        K.SongClassified: lambda r: ("classified", -1, -1, "labelled a song: joined songs (§13.2)"),
        K.ScheduleCreated: created,
        K.ScheduleNotCreated: lambda r: (
            "not created",
            r.requested_ms,
            -1,
            f"{asked_by.get(s.word('schedule_rule', r.rule), s.word('schedule_rule', r.rule))}: "
            + reason.get(s.word("not_created", r.reason), s.word("not_created", r.reason)),
        ),
        K.ScheduleMoved: moved,
        K.ScheduleDispatched: lambda r: (
            "dispatched",
            r.due_ms,
            -1,
            f"job {r.job}"
            + (f", priority {r.priority}" if r.priority >= 0 else "")
            + f"; {_vs_due(r.t_ms, r.due_ms)}",
        ),
        K.ScheduleSkipped: lambda r: (
            "skipped",
            r.due_ms,
            -1,
            reason.get(s.word("skip_reason", r.reason), s.word("skip_reason", r.reason)),
        ),
        K.ScheduleStarted: lambda r: (
            "started",
            r.due_ms,
            -1,
            f"a worker took job {r.job}; {_vs_due(r.t_ms, r.due_ms)}",
        ),
        K.StrayStatusChange: lambda r: (
            "stray status",
            r.due_ms,
            -1,
            f"{s.word('schedule_status', r.from_status)} -> "
            f"{s.word('schedule_status', r.to_status)}: a bulk tick passed aids as ids (§8.3)",
        ),
        K.SnapshotTaken: taken,
        K.HistoryLoaded: lambda r: (
            "history",
            -1,
            r.views,
            f"a snapshot of {at(r.taken_ms)} the video had at the start ([scheduler] history)",
        ),
        K.ScheduleFinished: lambda r: (
            "finished",
            r.due_ms,
            -1,
            f"{s.word('schedule_status', r.status)}; {_vs_due(r.t_ms, r.due_ms)}",
        ),
        K.ScheduleDeleted: lambda r: (
            "deleted",
            r.due_ms,
            -1,
            f"cleanup deleted it while {s.word('schedule_status', r.status)} (§12); "
            f"{_vs_due(r.t_ms, r.due_ms)}",
        ),
        K.UpstreamFailed: failed,
        K.RetryScheduled: lambda r: (
            "retry",
            -1,
            -1,
            f"attempt {r.attempt} in {duration(r.delay_ms)} after "
            f"{s.word('upstream_error', r.kind)}; job {r.job}",
        ),
    }


def timeline(story: Story, tz_ms: Ms, from_ms: Ms, to_ms: Ms) -> list[Line]:
    """Every record of the story in ``[from_ms, to_ms]``, in log order, as table lines."""
    lines: list[Line] = []
    # Failures and retries name a job: the row of this video that the job was handling (a bulk
    # job handles one row per video) gives them a row and a type.
    by_job = {
        d.job: (d.schedule, story.type_word(d.type), d.due_ms)
        for d in map(K.ScheduleDispatched._make, story[K.ScheduleDispatched].tolist())
    }
    for kind, fn in _detail_fns(story, tz_ms).items():
        table = story[kind]
        table = table[(table[:, 1] >= from_ms) & (table[:, 1] <= to_ms)]
        for values in table.tolist():
            r = kind(*values)
            event, due_ms, views, detail = fn(r)
            row = getattr(r, "schedule", -1)
            type_ = story.type_word(r.type) if hasattr(r, "type") else ""
            if hasattr(r, "job") and row < 0 and r.job in by_job:
                row, type_, due_ms = by_job[r.job]
            lines.append(Line(r.t_ms, r.seq, event, row, type_, due_ms, views, detail))
    lines.sort(key=lambda line: line.seq)
    return _fold(lines)


def _fold(lines: list[Line]) -> list[Line]:
    """Fold runs of identical ``not created`` lines: the milestone dispatcher asks again every
    run while the video's row waits (§5 step 2), which would bury the story in refusals."""
    out: list[Line] = []
    for line in lines:
        prev = out[-1] if out else None
        if (
            prev is not None
            and line.event == prev.event == "not created"
            and (line.type, line.detail) == (prev.type, prev.detail)
        ):
            out[-1] = prev._replace(repeats=prev.repeats + 1, last_ms=line.t_ms)
        else:
            out.append(line)
    return out
