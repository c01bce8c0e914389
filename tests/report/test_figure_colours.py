"""Colours the report figures must get right: the occupancy heatmap (viridis up to the cap, a red
ramp from the cap to the peak) and the cleanup legend (the colours of its bars)."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from sim.report.figures import occupancy_colours


def _rgba(cap: float, peak: float, value: float) -> np.ndarray:
    cmap, norm = occupancy_colours(cap, peak)
    return np.asarray(cmap(norm(value)))


def test_below_the_cap_is_viridis_scaled_to_the_peak() -> None:
    viridis = matplotlib.colormaps["viridis"]
    assert np.allclose(_rgba(1000, 800, 400), viridis(0.5), atol=0.01)
    assert np.allclose(_rgba(1000, 1365, 500), viridis(0.5), atol=0.01)


def test_above_the_cap_windows_are_graded_reds_not_one_colour() -> None:
    just_over, far_over = _rgba(1000, 1365, 1010), _rgba(1000, 1365, 1365)
    for red in (just_over, far_over):
        assert red[0] > max(red[1], red[2])  # reds
    assert not np.allclose(just_over, far_over)
    assert far_over[:3].sum() < just_over[:3].sum()  # darker the further over
    # Viridis ends in yellow at the cap: a window at the cap is not red.
    at_cap = _rgba(1000, 1365, 999.9)
    assert at_cap[1] > 0.8  # green channel of viridis' yellow


def test_outside_the_run_is_grey() -> None:
    cmap, _ = occupancy_colours(1000, 1365)
    assert np.allclose(cmap(np.ma.masked_invalid([np.nan]))[0], (0.92, 0.92, 0.92, 1.0))


def test_cleanup_legend_has_the_colours_of_the_bars() -> None:
    from matplotlib.colors import to_rgba

    from sim.report.figures import cleanup
    from sim.report.plots import COLOURS, PlotContext
    from sim.report.tables import Table

    hour = 3_600_000
    start = 1_925_395_200_000
    hours = np.arange(start, start + 6 * hour, hour, dtype=np.int64)
    columns = {"hour_start_ms": hours, "new": np.zeros(6, np.int64)}
    columns |= {"milestone": np.array([0, 1, 0, 1, 0, 0]), "normal": np.array([2, 0, 0, 0, 0, 1])}
    columns["archive"] = np.zeros(6, np.int64)
    ctx = PlotContext("t", 8 * hour, 1000, 50, start, start + 6 * hour, False)
    fig = cleanup({"cleanup_hourly": Table(columns)}, ctx)
    legend = fig.axes[0].get_legend()
    shown = {
        t.get_text(): h.get_facecolor()
        for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }
    plt.close(fig)
    assert shown == {
        "milestone (2)": to_rgba(COLOURS["milestone"]),
        "normal (3)": to_rgba(COLOURS["normal"]),
    }
