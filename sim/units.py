"""Time units: the one convention every module uses.

Virtual time is an ``int`` of **epoch milliseconds, UTC** (`Ms`), as in the CVSA code, where every
JS time is ``Date.now()``-style milliseconds (reference §conventions). Integers keep window
arithmetic exact (``floor(t / W) * W``) and make ``==`` on times meaningful; floats appear only in
derived quantities (speeds, ETAs in hours).

Durations in scenario files are strings such as ``"90s"``, ``"5m"``, ``"1.2h"``, ``"7d"`` and are
converted here, once, at load time.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

Ms = int
"""Epoch milliseconds (UTC) for instants; milliseconds for durations (names end in ``_ms``)."""

SECOND_MS: Final[Ms] = 1000
MINUTE_MS: Final[Ms] = 60 * SECOND_MS
HOUR_MS: Final[Ms] = 60 * MINUTE_MS
DAY_MS: Final[Ms] = 24 * HOUR_MS
WEEK_MS: Final[Ms] = 7 * DAY_MS

# 5-minute load-levelling windows (seed 000, "每个5分钟时间窗口"; reference §6.1).
WINDOW_MS: Final[Ms] = 5 * MINUTE_MS

# A distinctive default epoch (2031-01-01T00:00:00Z): a stray wall-clock value (2026...) stands
# out at once in any log or report (style-anchors R10).
DEFAULT_EPOCH_MS: Final[Ms] = 1_924_992_000_000

_UNIT_MS: Final = {"ms": 1, "s": SECOND_MS, "m": MINUTE_MS, "h": HOUR_MS, "d": DAY_MS, "w": WEEK_MS}
_PART: Final = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d|w)")
_BARE: Final = re.compile(r"\d+(?:\.\d+)?|\.\d+")


class DurationError(ValueError):
    """A duration string that does not parse; the message says what is accepted."""


def parse_duration_ms(text: str | int | float) -> Ms:
    """Parse ``"90s"``, ``"5m"``, ``"1.2h"``, ``"7d"``, ``"250ms"``, ``"1h30m"`` into milliseconds.

    A bare number (or a TOML number) means seconds. The result is rounded to whole milliseconds,
    because virtual time is integral.
    """
    if isinstance(text, bool):
        raise DurationError(f"expected a duration such as '90s', '5m', '1.2h' (got {text!r})")
    if isinstance(text, int | float):
        if text < 0:
            raise DurationError(f"a duration cannot be negative (got {text!r})")
        return _whole_ms(text * SECOND_MS, text)
    s = text.strip()
    if _BARE.fullmatch(s):
        return _whole_ms(float(s) * SECOND_MS, text)
    pos, total = 0, 0.0
    for m in _PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_MS[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise DurationError(
            f"expected a duration such as '90s', '5m', '1.2h', '7d' or '1h30m' (got {text!r})"
        )
    return _whole_ms(total, text)


def _whole_ms(ms: float, text: str | int | float) -> Ms:
    # nan and inf (a TOML float, or a string of 400 digits) have no whole number of ms.
    if not math.isfinite(ms):
        raise DurationError(f"must be finite (got {text!r})")
    return round(ms)


def format_duration_ms(ms: Ms) -> str:
    """The shortest exact spelling of a duration, e.g. ``90000 -> '90s'``, ``5400000 -> '1.5h'``."""
    for unit in ("d", "h", "m", "s"):
        size = _UNIT_MS[unit]
        if ms % size == 0 and ms >= size:
            return f"{ms // size}{unit}"
    for unit in ("h", "m", "s"):
        size = _UNIT_MS[unit]
        value = ms / size
        if ms >= size and round(value, 3) == value:
            return f"{value:g}{unit}"
    return f"{ms}ms"


class InstantError(ValueError):
    """An instant that is not ISO 8601 with an explicit offset."""


def parse_instant_ms(text: str) -> Ms:
    """Parse an ISO 8601 instant **with** an offset (``Z`` or ``+08:00``) into epoch ms.

    A naive time is rejected: the scheduler's Saturday/Monday targets depend on the time zone
    (reference §13b.5), so the scenario must say which one it means.
    """
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InstantError(
            f"expected an ISO 8601 instant such as '2031-01-01T08:00:00+08:00' (got {text!r})"
        ) from exc
    if dt.tzinfo is None:
        raise InstantError(f"the instant needs a UTC offset such as 'Z' or '+08:00' (got {text!r})")
    return round(dt.timestamp() * SECOND_MS)


def format_instant_ms(ms: Ms, tz_offset_ms: Ms = 0) -> str:
    """ISO 8601 with milliseconds; ``Z`` for UTC, as in the Redis window keys (reference §2.8)."""
    tz = UTC if tz_offset_ms == 0 else timezone(timedelta(milliseconds=tz_offset_ms))
    # Built from integers: fromtimestamp(ms / 1000) can be off by a microsecond.
    dt = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    dt = dt.astimezone(tz)
    text = dt.isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def parse_utc_offset_ms(text: str) -> Ms:
    """Parse a fixed offset such as ``"UTC+8"``, ``"+08:00"`` or ``"UTC"`` into milliseconds."""
    s = text.strip().upper()
    if s in ("UTC", "Z", "+00:00", "UTC+0"):
        return 0
    m = re.fullmatch(r"(?:UTC)?([+-])(\d{1,2})(?::?(\d{2}))?", s)
    if not m:
        raise InstantError(f"expected a UTC offset such as 'UTC+8' or '+08:00' (got {text!r})")
    sign = 1 if m.group(1) == "+" else -1
    hours, minutes = int(m.group(2)), int(m.group(3) or 0)
    if hours > 14 or minutes >= 60:
        raise InstantError(f"UTC offsets range from -14:00 to +14:00 (got {text!r})")
    return sign * (hours * HOUR_MS + minutes * MINUTE_MS)


def window_start(t_ms: Ms) -> Ms:
    """The 5-minute window containing ``t_ms``: ``floor(t / W) * W`` (reference §6.1)."""
    return t_ms - t_ms % WINDOW_MS
