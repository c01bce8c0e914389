"""JavaScript number semantics the CVSA formulas depend on.

The deployed scheduler is TypeScript: its arithmetic is IEEE-754 doubles where ``x / 0`` is
``±Infinity`` or ``NaN`` instead of an exception, and ``Math.min``/``Math.max`` propagate ``NaN``.
Python floats are the same doubles, so evaluating the *same expression in the same order* gives
bit-identical results (reference §19.8 boundary cases depend on this); only division by zero and
``NaN`` handling need these helpers. Mirrors packages/core/lib/math.ts and
packages/crawler/utils/truncate.ts (reference, "Conventions").
"""

from __future__ import annotations

import math


def div(a: float, b: float) -> float:
    """``a / b`` as JavaScript computes it: ``x/0`` is ``±inf``, ``0/0`` is ``nan`` (reference,
    "Conventions")."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        # The sign of a zero divisor matters in IEEE arithmetic (1 / -0 = -inf).
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def truncate(x: float, lo: float, hi: float) -> float:
    """CVSA ``truncate(x, lo, hi)`` = ``Math.max(lo, Math.min(x, hi))``; ``NaN`` stays ``NaN``
    (reference, "Conventions")."""
    if math.isnan(x):
        return math.nan
    return max(lo, min(x, hi))


def log(v: float, base: float = 10.0) -> float:
    """``ln v / ln base`` (**default base 10**), as CVSA's ``log(v, b)``.

    ``Math.log`` of a negative number is ``NaN`` and of zero ``-Infinity``; Python raises instead,
    so both are mapped to the JavaScript values.
    """
    if math.isnan(v) or v < 0:
        return math.nan
    num = -math.inf if v == 0 else math.log(v)
    return div(num, math.log(base))
