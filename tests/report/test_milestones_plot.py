"""``milestones.png`` (issue 29): round duration ticks written one way, never crowded; a
distribution of few samples shows its points and no percentiles it cannot tell."""

from __future__ import annotations

import itertools
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from sim.report.milestones_plot import FEW, MAX_TICKS, TIERS, duration_ticks, milestones
from sim.report.plots import PlotContext
from sim.report.tables import Table

CTX = PlotContext("t", 0, 1000, 50, 0, 86_400_000, False)
LABEL = re.compile(r"\d+(\.\d+)? (s|min|h)")
"""What a tick label looks like: ``0.1 s``, ``2 min``; never ``10^1`` or ``2×10^0``."""


def _figure(latency_s: list[float], bracket_s: list[float]) -> plt.Figure:
    n = len(latency_s)
    table = Table(
        {
            "song": np.zeros(n, dtype=np.int64),
            "latency_s": np.array(latency_s, dtype=np.float64),
            "bracket_s": np.array(bracket_s, dtype=np.float64),
        }
    )
    fig = milestones({"milestones": table}, CTX)
    fig.canvas.draw()
    return fig


@pytest.mark.parametrize(
    ("lo", "hi"), [(1e-3, 150.0), (0.5, 90.0), (1.2, 160.0), (1e-3, 1e6), (3.0, 4.0), (40, 9e4)]
)
def test_ticks_are_round_durations_and_few(lo: float, hi: float) -> None:
    ticks = duration_ticks(lo, hi)
    assert 1 <= len(ticks) <= MAX_TICKS
    assert all(lo <= t <= hi for t in ticks)
    rounds = {float(t) for tier in TIERS for t in tier}
    assert all(t in rounds for t in ticks) or len(ticks) == 1


@pytest.mark.parametrize(
    "sigma",
    [1.5, 0.4],  # many decades; and about one (where matplotlib labelled minor ticks 2x10^0)
)
def test_every_tick_label_is_a_duration_and_minor_ticks_have_none(sigma: float) -> None:
    rng = np.random.default_rng(1)
    fig = _figure(list(rng.lognormal(1, sigma, 200)), list(rng.lognormal(1.5, sigma, 200)))
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert 2 <= len(labels) <= MAX_TICKS
        assert all(LABEL.fullmatch(text) for text in labels), labels
        assert not [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()]
        # the labels do not overlap: each ends left of where the next one starts
        boxes = sorted(
            (t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()),
            key=lambda b: b.x0,
        )
        assert all(a.x1 < b.x0 for a, b in itertools.pairwise(boxes))
        [legend_text] = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "p99" in legend_text
    plt.close(fig)


def test_few_samples_are_drawn_as_points_without_percentiles() -> None:
    samples = [0.9, 1.1, 2.0, 4.8, 30.0, 59.4]
    assert len(samples) < FEW
    fig = _figure(samples, samples)
    for ax in fig.axes:
        points = [line for line in ax.get_lines() if line.get_marker() == "o"]
        assert len(points) == 1
        assert len(points[0].get_xdata()) == len(samples)
        [legend_text] = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend_text == "other videos (6, each a point): median 3.4 s, 0.9 s to 59.4 s"
        assert "p99" not in legend_text
    plt.close(fig)
