"""JavaScript number semantics used by the formulas (reference, "Conventions")."""

from __future__ import annotations

import math

from sim.cvsa import jsmath


def test_div_follows_ieee_instead_of_raising() -> None:
    assert jsmath.div(6, 4) == 1.5
    assert jsmath.div(1, 0) == math.inf
    assert jsmath.div(-1, 0) == -math.inf
    assert jsmath.div(1, -0.0) == -math.inf
    assert math.isnan(jsmath.div(0, 0))
    assert math.isnan(jsmath.div(math.nan, 0))


def test_truncate_propagates_nan_like_math_min_max() -> None:
    assert jsmath.truncate(5, 4.5, 100) == 5
    assert jsmath.truncate(-3, 4.5, 100) == 4.5
    assert jsmath.truncate(math.inf, 4.5, 100) == 100
    assert math.isnan(jsmath.truncate(math.nan, 4.5, 100))


def test_log_defaults_to_base_10() -> None:
    assert jsmath.log(100) == 2
    # ln v / ln b, as CVSA computes it: not math.log10 (which gives exactly 3 here).
    assert jsmath.log(1000) == 2.9999999999999996
    assert jsmath.log(8, 2) == 3.0
    assert jsmath.log(0) == -math.inf
    assert math.isnan(jsmath.log(-1))
    assert math.isnan(jsmath.log(math.nan))
