"""The picture of one video's story (``explain-<aid>.png``, ``sim explain``).

Top: the true view curve (:mod:`.video_story_world`), every snapshot as a marker at its server
time coloured by the row type that asked for it, the milestone levels near the curve as dashed
lines, each crossing as a dotted vertical line, the spans when the API hid the video in grey and
upstream errors as red crosses. Bottom, one lane per schedule type: each row from its creation
(thin line) to its due time (open circle) and to its execution (filled dot; a red cross when
cleanup deleted it), so that booking horizons and lateness show at a glance.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.cvsa.params import MilestoneLadder
from sim.events import cvsa_kinds as K
from sim.report.plots import COLOURS, STYLE, PlotContext, count_axis, days, legend, save, time_axis
from sim.report.video_story import I8, Story, col
from sim.report.video_story_world import Truth
from sim.world.truth import next_milestone, rung_value, rungs_reached

if TYPE_CHECKING:
    from matplotlib.axes import Axes

LANES = ("new", "milestone", "normal", "archive")
ERROR = "k"  # not a type's colour: milestone rows are red
CROSSING = "#17becf"
MAX_LEVELS = 6
"""Milestone levels drawn at most (the ones nearest the curve's end)."""


def _in(table: I8, lo: int, hi: int, column: int = 1) -> I8:
    return table[(table[:, column] >= lo) & (table[:, column] <= hi)]


def _levels(views: I8, ladder: MilestoneLadder) -> tuple[list[int], int | None]:
    """Ladder milestones near the curve (up to half its range above it, so that the curve is
    not flattened), and the next milestone above when it is further than that."""
    lo, hi = int(views.min()), int(views.max())
    top = next_milestone(hi, ladder)
    rungs = np.arange(int(rungs_reached(lo, ladder)) + 1, int(rungs_reached(top, ladder)) + 1)
    levels = [int(v) for v in rung_value(rungs, ladder)][-MAX_LEVELS:]
    reach = hi + max(hi - lo, 1) // 2
    return [v for v in levels if v <= reach], (top if top > reach else None)


def draw_story(story: Story, truth: Truth | None, ctx: PlotContext, path: Path) -> Path:
    """Draw the story over ``[ctx.start_ms, ctx.end_ms]`` into ``path``."""
    import matplotlib.pyplot as plt

    lo, hi = ctx.start_ms, ctx.end_ms
    with plt.rc_context(STYLE):
        fig, (top, lanes) = plt.subplots(
            2, 1, figsize=(12, 7), sharex=True, height_ratios=(3, 1.3), layout="constrained"
        )
        _curve(top, story, truth, lo, hi)
        _rows(lanes, story, lo, hi)
        top.set_title(ctx.title(f"the story of aid {story.aid}"))
        time_axis(top, ctx, label=False)
        time_axis(lanes, ctx)
        return save(fig, path)


def _curve(ax: Axes, story: Story, truth: Truth | None, lo: int, hi: int) -> None:
    if truth is not None:
        x = days(truth.t_ms)
        ax.plot(x, truth.views, color="0.25", lw=1.2, label="true views (world)")
        hidden = truth.error != 0
        if hidden.any():
            ax.fill_between(
                x,
                0,
                1,
                where=hidden,
                transform=ax.get_xaxis_transform(),
                color="0.6",
                alpha=0.3,
                lw=0,
                label="API error (deleted / hidden / under review)",
            )
        levels, above = _levels(truth.views, truth.ladder)
        if above is not None:
            ax.text(
                0.995,
                0.02,
                f"next milestone {above:,} is above this scale",
                transform=ax.transAxes,
                ha="right",
                va="bottom",
                fontsize=8,
                color="0.35",
            )
        for level in levels:
            ax.axhline(level, color="0.5", ls="--", lw=0.8)
            ax.annotate(
                f"{level:,}",
                (1.0, level),
                xycoords=("axes fraction", "data"),
                ha="right",
                va="bottom",
                fontsize=7,
                color="0.35",
            )
        for c in truth.crossings:
            ax.axvline(float(days(c.t_ms)), color=CROSSING, ls=":", lw=1.2)
        if truth.crossings:
            ax.plot([], [], color=CROSSING, ls=":", label="milestone crossed (truth)")
    snaps = _in(story[K.SnapshotTaken], lo, hi, col(K.SnapshotTaken, "taken_ms"))
    kinds = snaps[:, col(K.SnapshotTaken, "type")]
    taken = days(snaps[:, col(K.SnapshotTaken, "taken_ms")])
    views = snaps[:, col(K.SnapshotTaken, "views")]
    dup = snaps[:, col(K.SnapshotTaken, "duplicate")] == 1
    for code in sorted(set(kinds.tolist())):
        word = story.type_word(code)
        mine = (kinds == code) & ~dup
        ax.scatter(
            taken[mine],
            views[mine],
            s=14,
            color=COLOURS.get(word, "k"),
            zorder=3,
            label=f"snapshot ({word})",
        )
    if dup.any():
        ax.scatter(
            taken[dup],
            views[dup],
            s=30,
            facecolors="none",
            edgecolors="k",
            zorder=3,
            label="duplicate (refused)",
        )
    failed = _in(story[K.UpstreamFailed], lo, hi)
    if len(failed):
        y = _views_at(truth, failed[:, 1]) if truth is not None else np.zeros(len(failed))
        ax.scatter(
            days(failed[:, 1]), y, marker="x", s=40, color=ERROR, zorder=4, label="upstream error"
        )
    count_axis(ax)  # whole views: a curve that moves by a few views gets no repeated ticks
    ax.set_ylabel("views")
    if truth is None:
        ax.text(
            0.5,
            0.5,
            "no view curve: the aid is not in the rebuilt world",
            transform=ax.transAxes,
            ha="center",
            color="0.4",
        )
    legend(ax, loc="upper left", ncols=2)


def _views_at(truth: Truth, t_ms: I8) -> I8:
    i = np.clip(np.searchsorted(truth.t_ms, t_ms), 0, len(truth.t_ms) - 1)
    out: I8 = truth.views[i]
    return out


def _rows(ax: Axes, story: Story, lo: int, hi: int) -> None:
    created = story[K.ScheduleCreated]
    c_row, c_type = col(K.ScheduleCreated, "schedule"), col(K.ScheduleCreated, "type")
    due = dict(
        zip(
            created[:, c_row].tolist(),
            created[:, col(K.ScheduleCreated, "due_ms")].tolist(),
            strict=True,
        )
    )
    for m in story[K.ScheduleMoved].tolist():  # the last move wins: the row's final due time
        due[m[2]] = m[5]
    completed = story.words.get("schedule_status", []).index("completed")
    # Executed = the worker's final status; a row that did not complete ends in a red cross.
    done = {r[2]: (r[1], r[6] == completed) for r in story[K.ScheduleFinished].tolist()}
    done |= {r[2]: (r[1], False) for r in story[K.ScheduleDeleted].tolist()}
    lane = {w: i for i, w in enumerate(LANES)}
    for r in created.tolist():
        row, t_created, word = r[c_row], r[1], story.type_word(r[c_type])
        end, ok = done.get(row, (due[row], False))
        if end < lo or t_created > hi:
            continue
        y, colour = lane.get(word, len(LANES)), COLOURS.get(word, "k")
        ax.plot(days([t_created, due[row]]), [y, y], color=colour, lw=0.8, alpha=0.5)
        ax.plot(days([due[row]]), [y], "o", mfc="none", mec=colour, ms=5)
        if due[row] > hi:  # due after the span: the row is still waiting at its end
            ax.plot(days([hi]), [y], ">", color=colour, ms=6, clip_on=False)
        if row in done:
            ax.plot(days([due[row], end]), [y, y], color=colour, lw=2.5)
            ax.plot(days([end]), [y], "o" if ok else "x", color=colour if ok else ERROR, ms=6)
    for t in _in(story[K.UpstreamFailed], lo, hi)[:, 1].tolist():
        ax.axvline(float(days(t)), color=ERROR, lw=0.8, alpha=0.6)
    ax.set_yticks(range(len(LANES)), LANES)
    ax.set_ylim(-0.6, len(LANES) - 0.4)
    ax.invert_yaxis()
    ax.grid(axis="y", alpha=0)
    ax.set_title(
        "rows: created -- due (o) == finished (dot); x = failed or deleted by cleanup; "
        "> = due after the span; | = upstream error",
        loc="left",
        fontweight="normal",
        fontsize=8,
    )
