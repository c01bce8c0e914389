"""``why_late.png`` is drawn from the lateness finding in the summary, with or without one."""

from __future__ import annotations

from pathlib import Path

from sim.report.figures import draw_summary
from sim.report.plots import PlotContext
from sim.report.why_late import FILE, why_late

CTX = PlotContext("t", 0, 1000, 50, 0, 3_600_000, False)


def test_a_bar_per_type_stacks_its_parts_with_the_tick_left_of_zero(tmp_path: Path) -> None:
    p = "findings.lateness."
    summary = {
        f"{p}normal.tail.tick_s": -2.0,
        f"{p}normal.tail.queue_s": 3.0,
        f"{p}normal.tail.upstream_s": 1.0,
        f"{p}normal.p99_s": 1.5,
        f"{p}new.tail.upstream_s": 0.5,
    }
    fig = why_late(summary, CTX)
    ax = fig.axes[0]
    bars = [(round(b.get_x(), 3), round(b.get_width(), 3)) for b in ax.patches]
    # new (y 0): only upstream; normal (y 1): tick from -2 to 0, queue 0..3, upstream 3..4.
    assert (0.0, 0.5) in bars
    assert {(-2.0, 2.0), (0.0, 3.0), (3.0, 1.0)} <= set(bars)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["new (p99 tail)", "normal (p99 tail)"]
    assert tmp_path / FILE in draw_summary(tmp_path, summary, CTX)
    assert (tmp_path / FILE).exists()


def test_without_scheduled_snapshots_the_figure_says_so() -> None:
    fig = why_late({}, CTX)
    assert "no scheduled snapshot was taken" in [t.get_text() for t in fig.axes[0].texts]
