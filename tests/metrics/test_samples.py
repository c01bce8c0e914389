"""``Samples`` keeps every value exactly, in int32 where a chunk fits, and ``percentiles`` gives
what numpy gives on the plain int64 array (the summary must not move by a bit)."""

from __future__ import annotations

import numpy as np

from sim.metrics.base import Samples, percentiles


def test_small_chunks_are_int32_and_a_big_value_keeps_everything_exact() -> None:
    small = Samples()
    small.add(np.array([-5, 0, 2**31 - 1], dtype=np.int64))
    small.add(np.array([-(2**31)], dtype=np.int64))
    assert small.array().dtype == np.int32
    assert small.array().tolist() == [-5, 0, 2**31 - 1, -(2**31)]

    mixed = Samples()
    mixed.add(np.array([1, 2], dtype=np.int64))
    mixed.add(np.array([2**40, -3], dtype=np.int64))
    assert mixed.array().dtype == np.int64
    assert mixed.array().tolist() == [1, 2, 2**40, -3]


def test_percentiles_equal_numpy_on_the_int64_array() -> None:
    rng = np.random.default_rng(5)
    values = rng.integers(-300_000, 4_000_000, 100_001)
    samples = Samples()
    for part in np.array_split(values, 7):
        samples.add(part)
    got = percentiles(samples.array(), "x", 1000.0)
    floats = values.astype(np.float64) / 1000.0
    p50, p90, p99 = np.percentile(floats, (50, 90, 99), method="linear")
    assert got == {
        "x.count": 100_001,
        "x.p50": round(float(p50), 6),
        "x.p90": round(float(p90), 6),
        "x.p99": round(float(p99), 6),
        "x.max": round(float(floats.max()), 6),
        "x.mean": round(float(floats.mean()), 6),
    }
