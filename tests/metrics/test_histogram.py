"""``Histogram`` keeps counts, not samples, and gives numpy's linear percentiles bit for bit
(issue 30): against ``np.percentile`` on random integer samples, and on whole runs against
reducers that keep every sample, as they did before."""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sim.metrics import base
from sim.metrics.base import BATCH, PERCENTILES, Histogram, percentiles
from sim.runner import RunOptions, run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from tests.conftest import DATA

I64 = np.iinfo(np.int64)
SPREADS = {
    "ties": st.integers(-3, 3),
    "ms": st.integers(-600_000, 40_000_000),
    "near 2**53": st.integers(2**53 - 40, 2**53 + 40) | st.integers(-(2**53) - 40, -(2**53) + 40),
    "int64": st.integers(int(I64.min), int(I64.max)),
}
samples = st.sampled_from(sorted(SPREADS)).flatmap(
    lambda spread: st.lists(SPREADS[spread], min_size=1, max_size=300)
)
qs = st.lists(st.sampled_from([0, 50, 90, 99, 100, 99.9, 100 / 3]) | st.floats(0, 100), min_size=1)
scales = st.sampled_from([1, 1.0, 1000, 1000.0, 7.0, 0.25])


def hist_of(values: Sequence[int], cuts: Sequence[int] = (), batch_size: int = 1) -> Histogram:
    """The histogram of ``values``, fed in chunks cut before each index in ``cuts`` and counted
    in batches of ``batch_size`` (1: each chunk merged on its own)."""
    hist = Histogram(batch_size)
    bounds = [0, *sorted(c % (len(values) + 1) for c in cuts), len(values)]
    for lo, hi in pairwise(bounds):
        hist.add(np.array(values[lo:hi], dtype=np.int64))
    return hist


def bits(values: Sequence[float] | npt.NDArray[np.float64]) -> list[str]:
    return [float(v).hex() for v in values]


@settings(max_examples=400, deadline=None)
@given(
    samples, st.lists(st.integers(0, 300), max_size=5), qs, scales, st.sampled_from([1, 7, BATCH])
)
@example([7], [], [0, 50, 100], 1000, 1)  # one value
@example([3, -2], [1], list(PERCENTILES), 1000, 1)  # two values
@example(list(range(101)), [50], list(PERCENTILES), 1000, 1)  # (n - 1) * q exact: no lerp
@example([2**53 - 1, 2**53, 2**53 + 1, -(2**53)], [], [25, 50, 75], 1, 1)
def test_percentiles_are_numpys_on_the_scaled_floats(
    values: list[int], cuts: list[int], q: list[float], scale: float, batch_size: int
) -> None:
    hist = hist_of(values, cuts, batch_size)
    floats = np.array(values, dtype=np.int64).astype(np.float64)
    floats /= scale  # as the reducers did: convert, then divide in place
    expected = np.percentile(floats, q, method="linear")
    assert bits(hist.percentiles(q, scale)) == bits(expected)
    assert hist.n == len(values)
    assert hist.total == sum(values)
    assert float(hist.values[-1]) / scale == floats.max()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(-(2**53), 2**53), min_size=1, max_size=300),
    st.lists(st.integers(0, 300), max_size=5),
    qs,
)
def test_without_a_scale_they_are_numpys_on_the_integers(
    values: list[int], cuts: list[int], q: list[float]
) -> None:
    """Within 2**53 the interpolation's operands are exact, so numpy's integer path (the
    difference taken in int64) gives the same floats as its float path."""
    hist = hist_of(values, cuts)
    ints = np.array(values, dtype=np.int64)
    assert bits(hist.percentiles(q)) == bits(np.percentile(ints, q, method="linear"))
    for one in (99, 50.0):  # a scalar q is numpy's "weak" path: the same numbers
        assert hist.percentiles([one]) == [float(np.percentile(ints, one, method="linear"))]


@settings(max_examples=300, deadline=None)
@given(samples, st.lists(st.integers(0, 300), max_size=5), scales)
def test_the_summary_keeps_numpys_numbers_and_the_exact_mean(
    values: list[int], cuts: list[int], scale: float
) -> None:
    got = percentiles(hist_of(values, cuts), "x", scale)
    floats = np.array(values, dtype=np.int64).astype(np.float64) / scale
    want = {"x.count": len(values)}
    for p, v in zip(PERCENTILES, np.percentile(floats, PERCENTILES, method="linear"), strict=True):
        want[f"x.p{p}"] = round(float(v), 6)
    want["x.max"] = round(float(floats.max()), 6)
    assert {k: v for k, v in got.items() if k != "x.mean"} == want
    # The mean is the exact sum's, correctly rounded; numpy's pairwise float sum is within its
    # error bound of it (the two agree to the summary's six decimals but on a tie).
    exact = Fraction(sum(values), len(values)) / Fraction(scale)
    assert got["x.mean"] == round(float(exact), 6)
    bound = (math.log2(len(values)) + 2) * 2**-52 * float(np.abs(floats).mean())
    assert abs(float(exact) - float(floats.mean())) <= bound + math.ulp(float(exact))


@given(st.lists(st.integers(-(2**20), 2**20), min_size=1, max_size=300))
def test_the_mean_is_numpys_when_numpys_sum_is_exact(values: list[int]) -> None:
    """Small integers, no scale: numpy's partial sums are exact, so both means are the sum
    divided by the count, correctly rounded."""
    floats = np.array(values, dtype=np.float64)
    assert percentiles(hist_of(values), "x")["x.mean"] == round(float(floats.mean()), 6)


@given(samples, samples)
def test_merging_is_counting_both(a: list[int], b: list[int]) -> None:
    merged = hist_of(a)
    merged.merge(hist_of(b))
    whole = hist_of(a + b, batch_size=BATCH)
    assert merged.values.tolist() == whole.values.tolist() == sorted(set(a + b))
    assert merged.counts.tolist() == whole.counts.tolist()
    assert (merged.n, merged.total) == (whole.n, whole.total) == (len(a + b), sum(a + b))


def test_no_samples() -> None:
    empty = Histogram()
    empty.add(np.zeros(0, dtype=np.int64))
    assert percentiles(empty, "x") == {"x.count": 0}
    with pytest.raises(ValueError, match="no samples"):
        empty.percentiles([50])


# -- whole runs: the reducers as they were (every sample kept) against the histograms ----------


class Kept:
    """A reducer's distribution as it was before issue 30: every sample, numpy on them."""

    made = 0
    """How many were made: the reference run must have used them."""

    def __init__(self) -> None:
        self.parts: list[npt.NDArray[np.int64]] = []
        Kept.made += 1

    def add(self, samples: npt.ArrayLike) -> None:
        self.parts.append(np.asarray(samples, dtype=np.int64))

    def merge(self, other: Kept) -> None:
        self.parts.extend(other.parts)

    def array(self) -> npt.NDArray[np.int64]:
        return np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.int64)

    @property
    def n(self) -> int:
        return int(self.array().size)

    @property
    def values(self) -> npt.NDArray[np.int64]:
        return np.unique(self.array())

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        return np.unique(self.array(), return_counts=True)[1]

    def percentiles(self, qs: Sequence[float], scale: float = 1.0) -> list[float]:
        assert scale == 1  # the findings took numpy's percentile of the integers themselves
        return list(np.percentile(self.array(), qs, method="linear"))


def kept_percentiles(kept: Kept, prefix: str, scale: float = 1.0) -> dict[str, Any]:
    """``sim.metrics.base.percentiles`` before issue 30."""
    samples = kept.array()
    if samples.size == 0:
        return {f"{prefix}.count": 0}
    values = samples.astype(np.float64)
    values /= scale
    maximum, mean = float(values.max()), float(values.mean())
    qs = np.percentile(values, PERCENTILES, method="linear")
    out: dict[str, Any] = {f"{prefix}.count": int(samples.size)}
    for p, v in zip(PERCENTILES, qs, strict=True):
        out[f"{prefix}.p{p}"] = round(float(v), 6)
    out[f"{prefix}.max"] = round(maximum, 6)
    out[f"{prefix}.mean"] = round(mean, 6)
    return out


USERS = (
    "sim.metrics.cvsa",
    "sim.metrics.engine",
    "sim.metrics.invariants.songs",
    "sim.metrics.wall_timing",
    "sim.metrics.findings.levelling",
    "sim.metrics.findings.tick_health",
    "sim.metrics.findings.write_backlog",
)
"""Every module that builds a histogram (a test below fails when one is missing here)."""


def test_every_user_of_histograms_is_compared() -> None:
    root = Path(base.__file__).parent
    users = {
        "sim.metrics." + str(p.relative_to(root).with_suffix("")).replace("/", ".")
        for p in root.rglob("*.py")
        if "Histogram()" in p.read_text()
    }
    assert users == set(USERS)


@pytest.mark.parametrize("name", ["small.toml", "small-operations.toml"])
def test_a_run_reports_what_kept_samples_reported(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario(DATA / name)
    new = run_scenario(scenario, build_cvsa_model, RunOptions()).metrics
    for module in USERS:
        monkeypatch.setattr(f"{module}.Histogram", Kept)
        if hasattr(importlib.import_module(module), "percentiles"):
            monkeypatch.setattr(f"{module}.percentiles", kept_percentiles)
    monkeypatch.setattr(Kept, "made", 0)
    old = run_scenario(scenario, build_cvsa_model, RunOptions()).metrics
    assert Kept.made >= 5  # lateness by type, job waits, capture latency and bracket, ticks
    assert sorted(new) == sorted(old)
    assert any(k.startswith("lateness.") and k.endswith(".p99_s") for k in new)
    # Every number the same float, the means included (numpy's pairwise sum and the exact one
    # agree to the six decimals kept unless the exact mean falls on a tie).
    assert {k: (old[k], v) for k, v in new.items() if v != old[k]} == {}
