"""How much memory a scenario needs, estimated from its keys before anything is allocated.

A run holds every video of the catalogue and of the arrivals (curve parameters, the store's
record), every schedule row and snapshot the run creates (none are retired yet: issue 30), and
per-window series. So its memory grows with the number of videos, with videos x days, and with
days; without this estimate a catalogue of 10^12 videos is found out by numpy, with a traceback.

The constants were measured (peak RSS, ``/usr/bin/time -f %M``, reducers inline) on the
baseline scenario at 20k-80k videos over 3-14 days in pure Python, the heavier build, fitted by
least squares (65 MB + 830 B a video + 4.7 MB a day; the rows and snapshots of a video-day were
too few to separate from noise there, so issue 30's compiled costs stand in: 0.27 rows of
22 + 16 bytes and 0.16 snapshots of 18 bytes) and rounded up, with a second interpreter for the
metric process. They over-estimate the measured runs by a quarter to a third, and full-scale
(2M videos, 30 days; 1.7 GB measured compiled) by about half: a refusal is never a close call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sim.scenario.document import Scenario
from sim.units import DAY_MS

BASE_BYTES = 160 * 2**20
"""Two interpreters (the run's and the metric process's), numpy, the model and the report."""
VIDEO_BYTES = 800
"""One video: its curve's parameters, its draws while the world is built, its store record."""
RECOUNT_STEP_BYTES = 16
"""Each of a video's ``curves.recount_steps_max`` recount slots (when and how much)."""
VIDEO_DAY_BYTES = 12
"""One video for one simulated day: the schedule rows and snapshots it causes (about a quarter
of a row and a sixth of a snapshot a day at the baseline's rates), with their heap entries."""
DAY_BYTES = 5 * 2**20
"""One simulated day of per-window series, ticks and the metric reducers' state."""


@dataclass(frozen=True)
class Footprint:
    """A scenario's estimated peak memory and what drives it."""

    videos: int
    """Catalogue plus the expected arrivals over the run."""
    days: float
    bytes: int


def estimate(scenario: Scenario) -> Footprint:
    """The peak memory a run of ``scenario`` needs (both processes when reducers run apart)."""
    days = scenario.duration / DAY_MS
    catalog = scenario.catalog.songs + scenario.catalog.non_songs
    arrivals = scenario.arrivals.per_day * days
    videos = catalog + arrivals
    mean_videos = catalog + arrivals / 2  # the arrivals come in over the run
    per_video = VIDEO_BYTES + RECOUNT_STEP_BYTES * scenario.curves.recount_steps_max
    total = BASE_BYTES + videos * per_video + mean_videos * days * VIDEO_DAY_BYTES
    total += days * DAY_BYTES
    # Floats: 10^12 arrivals a day times a year overflows no float; an int could not be made.
    return Footprint(videos=round(min(videos, 2**62)), days=days, bytes=round(min(total, 2**62)))


def available_bytes() -> int | None:
    """Memory the machine can give a new run now: ``MemAvailable`` of ``/proc/meminfo`` (free
    plus what the kernel can reclaim, as ``free`` shows), else free physical pages; None when
    neither says (the check is then skipped)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def memory_problem(scenario: Scenario, source: str, available: int | None = None) -> str | None:
    """One line when ``scenario`` would need more memory than the machine has (``available``
    bytes, measured when not given), naming the keys that drive it; else None."""
    have = available_bytes() if available is None else available
    need = estimate(scenario)
    if have is None or need.bytes <= have:
        return None
    arrivals = scenario.arrivals.per_day * need.days
    return (
        f"{source}: needs about {show_bytes(need.bytes)} of memory and this machine has "
        f"{show_bytes(have)} available: {_count(need.videos)} videos (catalog.songs "
        f"{scenario.catalog.songs:,} + catalog.non_songs {scenario.catalog.non_songs:,} + "
        f"arrivals.per_day {_count(scenario.arrivals.per_day)} x {need.days:,g} days of "
        f"duration = {_count(arrivals)}); lower those keys or use a larger machine"
    )


def _count(n: float) -> str:
    return f"{n:,.0f}" if n < 1e15 else f"{n:.3g}"


def show_bytes(n: float) -> str:
    """``1.7 GB``, ``350 MB``, ``4.2 PB`` (powers of 1024, as ``free -h``)."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit in ("B", "KB") or n >= 100 else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
