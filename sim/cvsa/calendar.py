"""Archive targets: date-fns ``nextSaturday`` / ``nextMonday`` in a fixed-offset local time.

The crawler computes these in its process's local time zone (reference §13b.5, Q2; the scenario
sets it as a fixed UTC offset, so there is no daylight-saving time to handle). date-fns v4's
``nextDay(date, day)`` adds 1–7 days to reach the next such weekday **strictly after** the local
date, keeping the time of day (reference §13b.2): a Saturday maps to the Saturday 7 days later.
The design note's "下周六" / "下周一到再下周一" is read as a date, i.e. local midnight, which is
also what the code did before 87d9066 (switch ``archive_keeps_time_of_day``).
"""

from __future__ import annotations

import math
from typing import Final

from sim.cvsa.params import Params
from sim.units import DAY_MS, WEEK_MS, Ms

_EPOCH_WEEKDAY: Final = 4  # 1970-01-01 was a Thursday; JavaScript getDay() counts Sunday = 0


def next_weekday_ms(now_ms: Ms, tz_offset_ms: Ms, weekday: int, keep_time_of_day: bool) -> Ms:
    """date-fns ``nextDay(now, weekday)``: the next local ``weekday`` (Sunday = 0), 1–7 days
    ahead, strictly after the local date of ``now_ms`` (on that weekday itself: +7 days). With
    ``keep_time_of_day`` (deployed) the clock time of ``now_ms`` is kept; otherwise (design) the
    target is that day's local 00:00 (reference §13b.2)."""
    local_day = (now_ms + tz_offset_ms) // DAY_MS
    delta = weekday - (local_day + _EPOCH_WEEKDAY) % 7
    if delta <= 0:
        delta += 7
    if keep_time_of_day:
        return now_ms + delta * DAY_MS
    return (local_day + delta) * DAY_MS - tz_offset_ms


def archive_target_song_ms(
    now_ms: Ms, tz_offset_ms: Ms, keep_time_of_day: bool, params: Params
) -> Ms:
    """The archive target of a song: the next local Saturday (reference §13b.2).

    Args:
        now_ms: the dispatcher's clock (epoch ms, UTC).
        tz_offset_ms: the crawler's fixed UTC offset (``Scenario.timezone``, UTC+8 likely).
        keep_time_of_day: switch ``archive_keeps_time_of_day``.
        params: the weekday (``archive_song_weekday``: Saturday).
    """
    return next_weekday_ms(now_ms, tz_offset_ms, params.archive_song_weekday, keep_time_of_day)


def archive_target_nonsong_ms(
    now_ms: Ms, tz_offset_ms: Ms, keep_time_of_day: bool, u: float, params: Params
) -> Ms:
    """The archive target of a video that is not a song: uniform in [next Monday, +7 d) (§13b.3).

    The deployed code draws uniformly between ``nextMonday(now)`` and
    ``nextMonday(nextMonday(now))`` (7 days later, at the same clock time): 1–14 days ahead.
    Design (seed 000: "下周一到再下周一随机") starts at next Monday 00:00. The fraction of a
    millisecond is dropped, as a ``Date`` does.

    Args:
        now_ms: the dispatcher's clock.
        tz_offset_ms: the crawler's fixed UTC offset.
        keep_time_of_day: switch ``archive_keeps_time_of_day``.
        u: a uniform draw in [0, 1) from the caller's stream (``Math.random()``).
        params: the weekday (``archive_nonsong_weekday``: Monday).

    Raises:
        ValueError: if ``u`` is outside [0, 1).
    """
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u must be in [0, 1) (got {u!r})")
    weekday = params.archive_nonsong_weekday
    start = next_weekday_ms(now_ms, tz_offset_ms, weekday, keep_time_of_day)
    end = next_weekday_ms(start, tz_offset_ms, weekday, keep_time_of_day)
    assert end - start == WEEK_MS  # fixed offsets: no DST, so a local week is always 7 days
    return start + math.floor(u * (end - start))
