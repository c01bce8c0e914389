"""Numbers for people: one rule for every table a person reads on the terminal.

Integers (and whole floats) are grouped in thousands (``2,066,540``); other floats keep
``digits`` significant digits, never in exponent notation above a ten-thousandth (``12.5``,
``0.1235``, and ``2,066,540`` rather than ``2.06654e+06``); ``signed`` writes a ``+`` on
positive numbers, for deltas. :func:`percent` is a signed share (``+12.5 %``). ``sim compare``
and ``sim check`` format through here (``sim.cli.common.show_number``).
"""

from __future__ import annotations

import math

_TINY = 1e-4
"""Below this a fraction is written in exponent notation (``1.5e-06``, ``8.68e-05``): zeros
would hide it."""


def show_number(value: float, digits: int = 6, *, signed: bool = False) -> str:
    """``value`` for a person (module docstring)."""
    sign = "+" if signed and value > 0 else ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{sign}{value:,}"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return f"{sign}inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if value.is_integer() or magnitude >= digits - 1:
        return f"{sign}{round(value):,}"
    if abs(value) < _TINY:  # three significant digits say enough of a number this small
        return f"{sign}{value:.{min(digits, 3)}g}"
    decimals = digits - 1 - magnitude
    text = f"{value:,.{decimals}f}".rstrip("0").rstrip(".")
    return sign + text


def percent(share: float, digits: int = 3) -> str:
    """A change as a signed percentage, ``+12.5 %``; ``share`` is already in percent."""
    return show_number(share, digits, signed=True) + " %"
