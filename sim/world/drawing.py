"""PNG figures of a world: sample curves per family, the catalog, arrivals, crossings.

matplotlib is imported inside :func:`draw_all` with the Agg backend, so importing this module
stays cheap. Dates are drawn in the scenario's time zone (the day/night cycle's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta, timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sim.cvsa.params import MilestoneLadder
from sim.units import DAY_MS, HOUR_MS
from sim.world.arrivals import upload_clock
from sim.world.curves import NEVER_MS, Family
from sim.world.families import F8, I8
from sim.world.truth import Crossings, rung_value, rungs_reached
from sim.world.world import World

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FAMILY_COLOURS = {
    Family.DORMANT: "#7f7f7f",
    Family.STEADY: "#1f77b4",
    Family.FRESH: "#2ca02c",
    Family.VIRAL: "#d62728",
    Family.APPROACHER: "#9467bd",
    Family.RECOUNT: "#ff7f0e",
}
FAMILY_BLURB = {
    Family.DORMANT: "no growth at all (72 h regular interval)",
    Family.STEADY: "slow growth following the day/night cycle",
    Family.FRESH: "launch burst decaying over days",
    Family.VIRAL: "a second surge during the run",
    Family.APPROACHER: "placed just below a milestone, crossing it during the run",
    Family.RECOUNT: "downward recounts during the run (dotted lines)",
}
SONG, OTHER = "#c44e52", "#4c72b0"
STYLE: dict[Any, Any] = {
    "figure.dpi": 110,
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
}


def draw_all(world: World, out_dir: Path) -> Iterator[Path]:
    """Write every figure into ``out_dir`` (created if needed), yielding each path as it is
    written (``sim curves`` says so as it goes: a big world takes a while)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    sc = world.scenario
    truth = world.crossings(sc.start_ms, sc.end_ms)
    drawers: list[tuple[str, Callable[[], Figure]]] = [
        *(
            (f"family_{fam.name.lower()}.png", partial(_family_figure, world, fam, truth))
            for fam in Family
        ),
        ("catalog_views.png", partial(_catalog_figure, world)),
        ("day_night.png", partial(_day_night_figure, world)),
        ("arrivals.png", partial(_arrivals_figure, world)),
        ("crossings.png", partial(_crossings_figure, world, truth)),
    ]
    for name, draw in drawers:
        with plt.rc_context(STYLE):
            fig = draw()
        path = out_dir / name
        fig.savefig(path, bbox_inches="tight")
        plt.close(fig)
        yield path


def human(x: float, _pos: object = None) -> str:
    """``1234567 -> '1.235M'``: compact labels for view counts."""
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            return f"{x / size:.4g}{suffix}"
    return f"{x:g}"


def _counts_axis(ax: Axes) -> None:
    """View-count ticks on whole views: exact with thousands separators where the axis is small
    or narrow (a compact 4.792M would repeat), compact (1.5M) elsewhere."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10], integer=True))
    bottom, top = ax.get_ylim()
    if top < 100_000 or top - bottom < 0.01 * top:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:,.0f}"))
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(human))


def _tz(world: World) -> timezone:
    return timezone(timedelta(milliseconds=world.scenario.timezone))


def _tz_label(world: World) -> str:
    offset = world.scenario.timezone / HOUR_MS
    return f"UTC{offset:+g}"


def _dates(t_ms: I8) -> Any:
    return t_ms.astype("datetime64[ms]")


def _date_axis(ax: Axes, world: World, *, label: bool = True) -> None:
    import matplotlib.dates as mdates

    tz = _tz(world)
    # matplotlib.dates is not annotated, hence the two ignores.
    locator = mdates.AutoDateLocator(tz=tz, minticks=3, maxticks=6)  # type: ignore[no-untyped-call]
    formatter = mdates.ConciseDateFormatter(locator, tz=tz)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)
    if label:
        ax.set_xlabel(f"date ({_tz_label(world)})")


def _samples(world: World, fam: Family, k: int) -> I8:
    """Up to ``k`` members of ``fam`` spread over the range of what makes the family distinct."""
    sc = world.scenario
    members = np.flatnonzero(world.family == fam)
    if fam == Family.FRESH:  # prefer launches visible from the start of the window
        members = members[world.published_ms[members] > sc.start_ms - 3 * DAY_MS]
    if not len(members):
        return members
    start = world.views_all(sc.start_ms)[members]
    growth = world.views_all(sc.end_ms)[members] - start
    key: npt.NDArray[Any] = growth
    if fam == Family.DORMANT:
        key = start
    elif fam == Family.APPROACHER:
        key = world.table.rate[members]
    if fam == Family.RECOUNT:
        key = -growth  # the deepest corrections first
    order = members[np.argsort(key, kind="stable")]
    picks = np.unique(np.round(np.array([0.35, 0.6, 0.8, 0.9, 0.97, 1.0]) * (len(order) - 1)))
    out: I8 = order[picks.astype(np.int64)][:k]
    return out


def _family_figure(world: World, fam: Family, truth: Crossings) -> Figure:
    import matplotlib.pyplot as plt

    picks = _samples(world, fam, 6)
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.2), sharex=fam != Family.FRESH)
    fig.suptitle(
        f"{fam.name.lower()} videos: {FAMILY_BLURB[fam]}\n"
        "views against time (titles: views at the left → right edge); grey: before the run "
        "starts, dashed: milestones, dots: ground-truth crossings",
        fontsize=10,
    )
    for ax, i in zip(axes.flat, picks, strict=False):
        _curve_panel(ax, world, int(i), truth, FAMILY_COLOURS[fam])
        _counts_axis(ax)
    for ax in axes.flat[len(picks) :]:
        ax.set_axis_off()
    for ax in axes[-1]:
        _date_axis(ax, world)
    for ax in axes[0]:
        _date_axis(ax, world, label=False)
    for ax in axes[:, 0]:
        ax.set_ylabel("views")
    fig.tight_layout()
    return fig


def _curve_panel(ax: Axes, world: World, i: int, truth: Crossings, colour: str) -> None:
    sc = world.scenario
    pub = int(world.published_ms[i])
    if world.family[i] == Family.FRESH:  # the launch: from just before publication, a week
        lo, hi = pub - 2 * HOUR_MS, min(pub + 7 * DAY_MS, sc.end_ms)
    else:
        lo, hi = max(pub, sc.start_ms - 3 * DAY_MS), sc.end_ms
    t = np.linspace(lo, hi, 1500).astype(np.int64)
    v = world.views_at(np.full(len(t), i), t)
    if lo < sc.start_ms:
        ax.axvspan(*_dates(np.array([lo, sc.start_ms])), color="0.93", lw=0)
    ax.step(_dates(t), v, where="post", color=colour, lw=1.2)
    top, bottom = float(v.max()), float(v.min())
    span = max(top - bottom, 10.0)
    ax.set_ylim(max(bottom - 0.08 * span, 0), top + 0.12 * span)
    for m in _ladder_between(bottom - 0.08 * span, top + 0.12 * span, world.ladder):
        ax.axhline(m, color="#444", ls="--", lw=0.8)
        ax.annotate(
            human(m),
            (0.995, m),
            xycoords=("axes fraction", "data"),
            ha="right",
            va="top",
            fontsize=8,
            bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1},
        )
    hit = truth.index == i
    if hit.any():
        ax.plot(_dates(truth.t_ms[hit]), truth.milestone[hit], "o", ms=5, color="black", zorder=5)
    rows = np.flatnonzero(world.table.recount.index == i)
    for step in world.table.recount.t_ms[rows].ravel() if len(rows) else []:
        if step != NEVER_MS:
            ax.axvline(_dates(np.array([step]))[0], color="#555", ls=":", lw=1)
    kind = "song" if world.is_song[i] else "non-song"
    age = (sc.start_ms - pub) / DAY_MS
    when = f"{age:.0f} d before" if age >= 1 else f"{age * 24:.0f} h before"
    if pub >= sc.start_ms:
        when = f"{-age:.1f} d after"
    before = f" · published {when} start"
    ax.set_title(f"aid {world.aid_of(int(i))} · {kind}{before}\n{v[0]:,} → {v[-1]:,} views")


def _ladder_between(lo: float, hi: float, ladder: MilestoneLadder) -> list[int]:
    first = int(rungs_reached(max(int(lo), 0), ladder)) + 1
    last = int(rungs_reached(max(int(hi), 0), ladder))
    return [int(m) for m in rung_value(np.arange(first, last + 1), ladder)]


def _catalog_figure(world: World) -> Figure:
    import matplotlib.pyplot as plt

    sc = world.scenario
    n0 = len(world.initial)
    views = world.views_all(sc.start_ms)[:n0]
    song = world.initial.is_song
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    fig.suptitle(f"catalog at the start: {n0:,} videos ({int(song.sum()):,} songs)", fontsize=11)
    _views_histogram(axes[0, 0], views, song)
    _views_ccdf(axes[0, 1], views, song)
    _family_bars(axes[1, 0], world.initial.family)
    day = world.views_all(sc.start_ms + DAY_MS)[:n0] - views
    _interval_bars(axes[1, 1], day[song])
    fig.tight_layout()
    return fig


def _views_histogram(ax: Axes, views: I8, song: Any) -> None:
    from matplotlib.ticker import FuncFormatter

    bins = np.logspace(0, np.log10(max(float(views.max()), 10.0)) + 0.1, 60).tolist()
    groups = ((~song, "non-songs", OTHER, 0.96), (song, "songs", SONG, 0.89))
    for mask, label, colour, y in groups:
        if not mask.any():
            continue
        v = np.maximum(views[mask], 1)
        weights = np.full(len(v), 100 / len(v))
        ax.hist(v, bins=bins, weights=weights, histtype="stepfilled", alpha=0.3, color=colour)
        ax.hist(v, bins=bins, weights=weights, histtype="step", color=colour, label=label)
        med = max(float(np.median(views[mask])), 1.0)
        ax.axvline(med, color=colour, ls="--", lw=1)
        ax.annotate(
            f"median {human(med)}",
            (med, y),
            xycoords=("data", "axes fraction"),
            color=colour,
            ha="left",
            fontsize=8,
            xytext=(3, 0),
            textcoords="offset points",
        )
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(human))
    ax.set_xlabel("views at the start (log scale; 0 counted as 1)")
    ax.set_ylabel("% of the group per bin")
    ax.set_title("distribution of views, songs and non-songs each scaled to 100%")
    ax.legend(loc="center right")


def _views_ccdf(ax: Axes, views: I8, song: Any) -> None:
    from matplotlib.ticker import FuncFormatter

    for mask, label, colour in ((~song, "non-songs", OTHER), (song, "songs", SONG)):
        v = np.sort(np.maximum(views[mask], 1))[::-1]
        if not len(v):
            continue
        frac = np.arange(1, len(v) + 1) / len(v)
        ax.step(v, frac, color=colour, label=label, where="post")
    for m in (100_000, 1_000_000, 10_000_000):
        ax.axvline(m, color="#444", ls="--", lw=0.8)
        ax.annotate(
            human(m),
            (m, 0.97),
            xycoords=("data", "axes fraction"),
            fontsize=8,
            xytext=(3, 0),
            textcoords="offset points",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(human))
    ax.set_xlabel("views at the start (log scale)")
    ax.set_ylabel("share of videos with at least that many")
    ax.set_title("heavy tail: complementary CDF")
    ax.legend(loc="lower left")


def _family_bars(ax: Axes, family: Any) -> None:
    counts = np.bincount(family, minlength=len(Family))
    names = [f.name.lower() for f in Family]
    colours = [FAMILY_COLOURS[f] for f in Family]
    ax.barh(names, counts, color=colours)
    ax.set_xscale("log")
    total = max(int(counts.sum()), 1)
    for y, c in enumerate(counts):
        ax.annotate(f" {c:,} ({c / total:.1%})", (max(c, 1), y), va="center", fontsize=8)
    ax.set_xlim(0.8, max(int(counts.max()), 1) * 30)
    ax.invert_yaxis()
    ax.set_xlabel("videos (log scale)")
    ax.set_title("curve families in the initial catalog")


def _interval_bars(ax: Axes, per_day: I8) -> None:
    # CVSA's regular interval from the growth over the last 24 h (reference §11.6).
    labels = [
        "72 h\n(0/day)",
        "36 h\n(<6/day)",
        "24 h\n(<120/day)",
        "12 h\n(<320/day)",
        "6 h\n(≥320/day)",
    ]
    counts = np.bincount(interval_bucket(per_day.astype(np.float64)), minlength=5)
    ax.bar(labels, counts, color=SONG, alpha=0.8)
    for x, c in enumerate(counts):
        ax.annotate(f"{c:,}", (x, c), ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("songs")
    ax.set_title("songs by regular snapshot interval (views gained in the first day)")


def _day_night_figure(world: World) -> Figure:
    import matplotlib.pyplot as plt

    sc = world.scenario
    day0 = sc.start_ms - (sc.start_ms + sc.timezone) % DAY_MS  # local midnight
    t = day0 + np.arange(0, 3 * DAY_MS + 1, 10 * 60_000)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
    fig.suptitle(
        "the day/night cycle (local time): traffic multipliers and a steady video", fontsize=11
    )
    uploads = upload_clock(sc)
    a1.plot(
        _dates(t),
        [world.clock.rate_at(int(x)) for x in t],
        color="#1f77b4",
        label="views (curves.hourly_profile)",
    )
    a1.plot(
        _dates(t),
        [uploads.rate_at(int(x)) for x in t],
        color="#c44e52",
        label="uploads (arrivals.hourly_profile)",
    )
    a1.axhline(1, color="#444", lw=0.8, ls="--")
    a1.set_ylim(bottom=0)
    a1.set_ylabel("rate relative to the daily mean")
    a1.set_title("traffic multiplier m(t) over three days")
    a1.legend(loc="upper left")
    _date_axis(a1, world)
    steady = np.flatnonzero(world.family == Family.STEADY)
    if len(steady):
        i = int(steady[np.argmax(world.table.rate[steady])])
        edges = day0 + np.arange(3 * 24 + 1) * HOUR_MS
        v = world.views_at(np.full(len(edges), i), edges)
        a2.bar(_dates(edges[:-1] + HOUR_MS // 2), np.diff(v), width=1 / 24 * 0.9, color="#1f77b4")
        a2.set_title(
            f"views gained per hour by the fastest steady video (aid {world.aid_of(int(i))})"
        )
    a2.set_ylabel("views per hour")
    _date_axis(a2, world)
    fig.tight_layout()
    return fig


def _arrivals_figure(world: World) -> Figure:
    import matplotlib.pyplot as plt

    sc, arr = world.scenario, world.arrivals
    local = arr.published_ms + sc.timezone
    days = max(sc.duration / DAY_MS, 1e-9)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
    fig.suptitle(
        f"arrivals: {len(arr):,} new videos in {days:g} days "
        f"({int(arr.is_song.sum()):,} labelled songs)",
        fontsize=11,
    )
    hour = (local % DAY_MS) // HOUR_MS
    for mask, label, colour, base in (
        (~arr.is_song, "non-songs", OTHER, None),
        (arr.is_song, "songs", SONG, np.bincount(hour[~arr.is_song], minlength=24) / days),
    ):
        a1.bar(
            np.arange(24),
            np.bincount(hour[mask], minlength=24) / days,
            bottom=base,
            color=colour,
            label=label,
            width=0.85,
        )
    rate = upload_clock(sc)
    day0 = sc.start_ms - (sc.start_ms + sc.timezone) % DAY_MS  # local midnight
    edges = day0 + np.arange(25) * HOUR_MS
    expected = np.diff(rate.hours_many(edges)) * sc.arrivals.per_day / 24
    a1.step(
        np.arange(25) - 0.5,
        np.append(expected, expected[-1]),
        where="post",
        color="black",
        lw=1.2,
        label="expected (Poisson rate)",
    )
    a1.set_xticks(range(0, 24, 3))
    a1.set_xlabel(f"hour of publication ({_tz_label(world)})")
    a1.set_ylabel("videos per day")
    a1.set_title("daily cycle of uploads")
    a1.legend()
    day = (local - (sc.start_ms + sc.timezone)) // DAY_MS
    n_days = max(int(np.ceil(days)), 1)
    a2.bar(
        np.arange(n_days),
        np.bincount(day[~arr.is_song], minlength=n_days)[:n_days],
        color=OTHER,
        label="non-songs",
        width=0.85,
    )
    a2.bar(
        np.arange(n_days),
        np.bincount(day[arr.is_song], minlength=n_days)[:n_days],
        bottom=np.bincount(day[~arr.is_song], minlength=n_days)[:n_days],
        color=SONG,
        label="songs",
        width=0.85,
    )
    a2.axhline(sc.arrivals.per_day, color="black", ls="--", lw=1, label="expected per day")
    a2.legend(loc="lower right", framealpha=0.9, frameon=True)
    a2.set_xlabel("day of the run")
    a2.set_ylabel("videos published")
    a2.set_title("uploads per day (a Poisson process)")
    fig.tight_layout()
    return fig


def _crossings_figure(world: World, truth: Crossings) -> Figure:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    sc = world.scenario
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [2, 1]})
    fig.suptitle(
        f"ground truth: {len(truth):,} milestone crossings during the run "
        f"({int((~truth.visible).sum()):,} while the video was unavailable)",
        fontsize=11,
    )
    fam = world.family[truth.index]
    for f in Family:
        m = fam == f
        if m.any():
            a1.plot(
                _dates(truth.t_ms[m]),
                truth.milestone[m],
                "o",
                ms=3,
                alpha=0.6,
                color=FAMILY_COLOURS[f],
                label=f"{f.name.lower()} ({int(m.sum())})",
            )
    a1.set_yscale("log")
    a1.yaxis.set_major_formatter(FuncFormatter(human))
    a1.set_xlim(_dates(np.array([sc.start_ms, sc.end_ms])))
    _date_axis(a1, world)
    a1.set_ylabel("milestone (views, log scale)")
    a1.set_title("when each milestone was first reached, by family")
    a1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=6, fontsize=8)
    values, counts = np.unique(truth.milestone, return_counts=True)
    a2.barh([human(v) for v in values], counts, color="#555")
    a2.invert_yaxis()
    a2.set_xlabel("crossings")
    a2.set_title("crossings per milestone")
    if len(values) > 16:
        a2.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    return fig


def interval_bucket(per_day: F8) -> I8:
    """CVSA's regular-interval bucket (0: 72 h ... 4: 6 h) of a growth in views per day."""
    out: I8 = np.select([per_day <= 0, per_day < 6, per_day < 120, per_day < 320], [0, 1, 2, 3], 4)
    return out
