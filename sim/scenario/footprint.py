"""How much memory a scenario needs, estimated from its keys before anything is allocated.

A run holds every video of the catalogue and of the arrivals (curve parameters, the store's
record), every schedule row the run creates (none are retired yet: issue 30), the snapshots of
the last three days (the memory store lets older ones go: no rule reads them), and per-window
series. So its memory grows with the number of videos, with videos x days, and with
days; without this estimate a catalogue of 10^12 videos is found out by numpy, with a traceback.

The constants were fitted to runs of this tree (peak resident memory of the run's process and
of the reducer process added, as ``bench/scheduler.py`` prints them; 7 December 2026, compiled,
pure Python within 1 % at 200k videos for a day) and rounded up so that the estimate stays above
every one. Measured again once the memory store kept only the snapshots a rule can reach (7
December, evening): ``baseline`` for 7 days 272 MB (estimate 298 MB), the tenth-scale month for
30 days 339 MB (479 MB), ``how-many-songs`` (2M videos, 8 days) 805 MB (988 MB), ``full-scale``
for 30 days 1,113 MB (1,731 MB), ``full-scale-10x`` for an hour (20M videos, with the due
heaps' int32 ids) 4,426 MB (5.4 GB) and, later, for the whole week 6,792 MB (7.5 GB), then
4,886 MB once the reducer process stopped leaking there (full scale for 30 days then 1,002 MB),
4,170 MB once the world kept fewer columns;
and before, runs the change leaves alone (three days or
less): the tenth-scale month for a day 244 MB (251 MB), ``full-scale`` for an hour 698 MB (725
MB). So 3-80 % over: the per-day
bytes below still count the snapshots a run of more than three days no longer keeps, and are
not fitted again. ``small`` (5,500 videos, the reducers inline: one interpreter, not two, 82 MB)
is over-estimated 2.4 times, its floor below included (98 MB): a run that small needs no check.

So the estimate is a ceiling, and the estimate divided by that margin a floor. A run whose
ceiling exceeds the memory the machine has available but whose floor fits may well run: the
commands warn and go on. Only a run whose floor does not fit is refused (:func:`memory_check`),
so a refusal is never a close call and a warning never stops a run that would have fitted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sim.scenario.document import Scenario
from sim.units import DAY_MS

BASE_BYTES = 190 * 2**20
"""Two interpreters (the run's and the metric process's), numpy, the model, the log's buffers."""
VIDEO_BYTES = 232
"""One video: its curve's parameters, the store's record and first rows, the reducers' share."""
RECOUNT_STEP_BYTES = 16
"""Each of a video's ``curves.recount_steps_max`` recount slots (when and how much)."""
VIDEO_DAY_BYTES = 14
"""One video for one simulated day: the schedule rows and snapshots it causes (about a fifth of
a row and a seventh of a snapshot a day at full scale), with their heap entries and what the
reducers keep of them."""
DAY_BYTES = 5 * 2**20
"""One simulated day of per-window series, ticks and the metric reducers' state."""
OVER_ESTIMATE: Final = 2.0
"""The estimate divided by this is the least a run needs: the estimate is at most 1.81 times
what a measured run of 200k videos or more held (module docstring), and issue 30's further
savings widen the margin until the constants above are fitted again."""


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


@dataclass(frozen=True)
class MemoryVerdict:
    """What the commands do about a scenario that may not fit: ``refuse`` (exit 2) when even
    the estimate's floor exceeds the memory available, else warn and run; ``message`` is the
    line to print after ``error:`` or ``warning:``."""

    refuse: bool
    message: str


def memory_check(
    scenario: Scenario, source: str, available: int | None = None
) -> MemoryVerdict | None:
    """None when ``scenario``'s estimate fits the machine's ``available`` bytes (measured when
    not given, the check skipped when unknown); else a one-line verdict naming the estimate,
    its floor, the memory available and the keys that drive it, and what to do."""
    have = available_bytes() if available is None else available
    need = estimate(scenario)
    if have is None or need.bytes <= have:
        return None
    floor = need.bytes / OVER_ESTIMATE
    arrivals = scenario.arrivals.per_day * need.days
    head = (
        f"{source}: needs about {show_bytes(need.bytes)} of memory (at least "
        f"{show_bytes(floor)}) and this machine has {show_bytes(have)} available: "
        f"{_count(need.videos)} videos (catalog.songs {scenario.catalog.songs:,} + "
        f"catalog.non_songs {scenario.catalog.non_songs:,} + arrivals.per_day "
        f"{_count(scenario.arrivals.per_day)} x {need.days:,g} days of duration = "
        f"{_count(arrivals)}); "
    )
    if floor > have:
        return MemoryVerdict(True, head + "lower those keys or use a larger machine")
    return MemoryVerdict(
        False,
        head + "running, as the estimate runs high; if the run is killed or the machine "
        "swaps, free memory or lower those keys",
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
