"""Archive targets: nextSaturday / nextMonday in fixed-offset local time (reference §13b)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cvsa.calendar import archive_target_nonsong_ms, archive_target_song_ms, next_weekday_ms
from sim.cvsa.params import DEFAULT_PARAMS
from sim.units import DAY_MS, HOUR_MS, WEEK_MS, format_instant_ms, parse_instant_ms

UTC8 = 8 * HOUR_MS
UTCM5 = -5 * HOUR_MS
P = DEFAULT_PARAMS


def next_saturday_ms(now_ms: int, tz: int, keep: bool) -> int:
    """The song's archive target, which is the next Saturday (the profiles' weekday)."""
    return archive_target_song_ms(now_ms, tz, keep, P)


def sat(now: str, tz: int, keep: bool) -> str:
    return format_instant_ms(next_saturday_ms(parse_instant_ms(now), tz, keep), tz)


def mon(now: str, tz: int, keep: bool) -> str:
    monday = P.archive_nonsong_weekday
    return format_instant_ms(next_weekday_ms(parse_instant_ms(now), tz, monday, keep), tz)


def test_the_archive_weekdays_are_saturday_and_monday() -> None:
    assert (P.archive_song_weekday, P.archive_nonsong_weekday) == (6, 1)  # getDay(): Sunday = 0


def test_next_saturday_from_a_wednesday() -> None:
    assert sat("2031-01-01T10:30:00Z", 0, keep=True) == "2031-01-04T10:30:00.000Z"
    assert sat("2031-01-01T10:30:00Z", 0, keep=False) == "2031-01-04T00:00:00.000Z"


def test_saturday_itself_goes_a_week_ahead() -> None:
    assert sat("2031-01-04T12:00:00Z", 0, keep=True) == "2031-01-11T12:00:00.000Z"
    assert sat("2031-01-04T00:00:00Z", 0, keep=False) == "2031-01-11T00:00:00.000Z"
    assert sat("2031-01-04T23:59:59.999Z", 0, keep=False) == "2031-01-11T00:00:00.000Z"


def test_friday_last_millisecond_goes_to_the_next_day() -> None:
    assert sat("2031-01-03T23:59:59.999Z", 0, keep=True) == "2031-01-04T23:59:59.999Z"
    assert sat("2031-01-03T23:59:59.999Z", 0, keep=False) == "2031-01-04T00:00:00.000Z"


def test_crossing_midnight_in_utc_plus_8_versus_utc() -> None:
    # 20:00Z on Friday is 04:00 on Saturday in UTC+8.
    now = "2031-01-03T20:00:00Z"
    assert sat(now, 0, keep=True) == "2031-01-04T20:00:00.000Z"
    assert sat(now, UTC8, keep=True) == "2031-01-11T04:00:00.000+08:00"
    assert sat(now, 0, keep=False) == "2031-01-04T00:00:00.000Z"
    assert sat(now, UTC8, keep=False) == "2031-01-11T00:00:00.000+08:00"
    assert next_saturday_ms(parse_instant_ms(now), UTC8, False) == parse_instant_ms(
        "2031-01-10T16:00:00Z"
    )


def test_negative_offset() -> None:
    # 03:00Z on Saturday is 22:00 on Friday in UTC-5.
    now = "2031-01-04T03:00:00Z"
    assert sat(now, UTCM5, keep=True) == "2031-01-04T22:00:00.000-05:00"
    assert sat(now, UTCM5, keep=False) == "2031-01-04T00:00:00.000-05:00"


def test_next_monday() -> None:
    assert mon("2031-01-05T09:00:00Z", 0, keep=True) == "2031-01-06T09:00:00.000Z"  # Sunday
    assert mon("2031-01-06T09:00:00Z", 0, keep=True) == "2031-01-13T09:00:00.000Z"  # Monday
    assert mon("2031-01-06T09:00:00Z", 0, keep=False) == "2031-01-13T00:00:00.000Z"
    # Sunday 20:00Z is Monday 04:00 in UTC+8: a week ahead there.
    assert mon("2031-01-05T20:00:00Z", UTC8, keep=False) == "2031-01-13T00:00:00.000+08:00"


def test_archive_target_nonsong_spans_one_week_from_next_monday() -> None:
    now = parse_instant_ms("2031-01-01T10:30:00Z")  # Wednesday
    monday_keep = parse_instant_ms("2031-01-06T10:30:00Z")
    monday_midnight = parse_instant_ms("2031-01-06T00:00:00Z")
    assert archive_target_nonsong_ms(now, 0, True, 0.0, P) == monday_keep
    assert archive_target_nonsong_ms(now, 0, False, 0.0, P) == monday_midnight
    assert archive_target_nonsong_ms(now, 0, True, 0.5, P) == monday_keep + WEEK_MS // 2
    last = archive_target_nonsong_ms(now, 0, False, 0.9999999999999999, P)
    assert last == monday_midnight + WEEK_MS - 1
    with pytest.raises(ValueError, match=r"u must be in \[0, 1\)"):
        archive_target_nonsong_ms(now, 0, True, 1.0, P)


@settings(max_examples=200, deadline=None)
@given(
    now=st.integers(0, 4_000_000_000_000),
    tz_quarter_hours=st.integers(-14 * 4, 14 * 4),
    keep=st.booleans(),
)
def test_next_saturday_agrees_with_datetime(now: int, tz_quarter_hours: int, keep: bool) -> None:
    tz_ms = tz_quarter_hours * 15 * 60_000
    local = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=now)
    local = local.astimezone(timezone(timedelta(milliseconds=tz_ms)))
    days = (5 - local.weekday()) % 7 or 7  # Python: Monday = 0, Saturday = 5
    want = local + timedelta(days=days)
    if not keep:
        want = want.replace(hour=0, minute=0, second=0, microsecond=0)
    got = next_saturday_ms(now, tz_ms, keep)
    assert got == round(want.timestamp() * 1000)
    assert 0 < got - now <= 7 * DAY_MS
