"""Streaming reducers: every metric is a pure function of the event log (non-negotiable 4).

A reducer sees the log chunk by chunk (``feed``) and reports a flat mapping of dotted metric
names to numbers (``result``), e.g. ``{"jobs.snapshot.wait.p99_s": 0.0}``. The same reducers run
live (as a sink of the running log) and offline over a saved log (``sim plot``), so a report
re-drawn from ``events.simlog`` is the report the run wrote.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sim.events.log import Chunk


class Reducer(Protocol):
    """A pure, streaming fold over the log."""

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        """Consume one chunk; ``names`` is the log's name table so far."""

    def result(self) -> dict[str, Any]:
        """Metrics so far, as dotted names -> JSON-ready values."""


class ReducerSink:
    """Runs reducers as a sink of a live :class:`~sim.events.log.EventLog`."""

    def __init__(self, reducers: Iterable[Reducer]) -> None:
        self.reducers = list(reducers)
        self.names: list[str] = []
        self.fingerprint = ""
        self.partial = False

    def open(self, header: bytes) -> None:
        import json

        from sim.events.log import MAGIC

        self.names = list(json.loads(header[len(MAGIC) :])["names"])

    def write(self, chunk: Chunk, raw: bytes) -> None:
        for index, text in chunk.new_names:
            if index == len(self.names):
                self.names.append(text)
        for r in self.reducers:
            r.feed(chunk, self.names)

    def close(self, fingerprint: str, partial: bool) -> None:
        self.fingerprint = fingerprint
        self.partial = partial

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for r in self.reducers:
            out.update(r.result())
        return dict(sorted(out.items()))


PERCENTILES = (50, 90, 99)


BATCH = 1 << 16
"""Samples are counted in batches of at least this many (or as many as the histogram holds)."""


class Histogram:
    """Exact counts of integer samples: their distinct values, sorted, and how many of each.

    The reducers' distributions (lateness, waits, capture latency, in ms) are kept as counts,
    not as every sample: a month at a tenth of full scale has 1.24M lateness samples but 51k
    distinct values (an answer's time and a due time are both whole ms, and most rows run
    within seconds of due), so memory follows the spread of the values, not the run's length.
    Samples wait in a batch until there are at least ``BATCH`` of them, or as many as the
    histogram has values; then they are counted with ``np.unique`` and merged into the sorted
    pair of int64 arrays. Merging costs a pass over the histogram, so a merge per chunk (a few
    thousand samples each) would cost more than the counting itself. The exact sum is kept as
    a Python int, for the mean.
    """

    __slots__ = ("_batch", "_batch_n", "_counts", "_n", "_total", "_values", "batch_size")

    def __init__(self, batch_size: int = BATCH) -> None:
        self.batch_size = batch_size
        self._values = np.zeros(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._n = 0
        self._total = 0
        self._batch: list[npt.NDArray[np.int64]] = []
        self._batch_n = 0

    def add(self, samples: npt.ArrayLike) -> None:
        """Count these integer samples."""
        part = np.array(samples, dtype=np.int64)  # a copy, never a view that holds a chunk
        if part.size:
            self._batch.append(part)
            self._batch_n += part.size
            if self._batch_n >= max(self.batch_size, self._values.size):
                self._count_batch()

    def merge(self, other: Histogram) -> None:
        """Count another histogram's samples too."""
        self._count_batch()
        self._merge(other.values, other.counts)

    @property
    def values(self) -> npt.NDArray[np.int64]:
        """The distinct values, ascending."""
        self._count_batch()
        return self._values

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """How many samples of each value."""
        self._count_batch()
        return self._counts

    @property
    def n(self) -> int:
        """How many samples."""
        return self._n + self._batch_n

    @property
    def total(self) -> int:
        """Their exact sum."""
        self._count_batch()
        return self._total

    def _count_batch(self) -> None:
        if not self._batch:
            return
        batch = self._batch[0] if len(self._batch) == 1 else np.concatenate(self._batch)
        self._batch, self._batch_n = [], 0
        values, counts = np.unique(batch, return_counts=True)
        self._merge(values, counts.astype(np.int64, copy=False))

    def _merge(self, values: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> None:
        if not values.size:
            return
        self._n += int(counts.sum())
        self._total += _exact_dot(values, counts)
        if not self._values.size:
            self._values, self._counts = values.copy(), counts.copy()
            return
        at = np.searchsorted(self._values, values)
        known = at < self._values.size
        known[known] = self._values[at[known]] == values[known]
        self._counts[at[known]] += counts[known]  # ``values`` are distinct: no index twice
        new = ~known
        if new.any():
            self._values = np.insert(self._values, at[new], values[new])
            self._counts = np.insert(self._counts, at[new], counts[new])

    def percentiles(self, qs: Sequence[float], scale: float = 1.0) -> list[float]:
        """``np.percentile(samples.astype(np.float64) / scale, qs, method="linear")``, bit for
        bit, from the counts (``tests/metrics/test_histogram.py`` checks it against numpy).

        numpy's linear method puts percentile ``q`` at ``h = (n - 1) * (q / 100)`` in the
        sorted samples and interpolates between the order statistics ``floor(h)`` and the next
        with its ``_lerp`` (``numpy/lib/_function_base_impl.py``); at ``h >= n - 1`` it takes
        the largest. The order statistics are read from the cumulative counts, and the float
        operations are numpy's, in its order: an int converted to float64 and divided by
        ``scale`` is what the scaled sample array holds, and the conversion and the division are
        monotonic, so the sorted scaled samples are the scaled sorted values. With a scale of 1
        the result is also numpy's on the int64 samples themselves while every value is within
        2**53 (the interpolation's operands are then exact either way).
        """
        if not self.n:
            raise ValueError("no samples")
        cum = np.cumsum(self.counts)
        last = self.n - 1
        out = []
        for q in qs:
            h = last * (q / 100)
            if h >= last:
                out.append(float(self.values[-1]) / scale)
                continue
            k = math.floor(h)
            a, b = self._order_statistics(cum, k)
            lo, hi = float(a) / scale, float(b) / scale
            t = h - k
            diff = hi - lo
            out.append(hi - diff * (1 - t) if t >= 0.5 else lo + diff * t)
        return out

    def _order_statistics(self, cum: npt.NDArray[np.int64], k: int) -> tuple[int, int]:
        """The ``k``-th and ``k + 1``-th smallest samples (from 0)."""
        i, j = np.searchsorted(cum, [k, k + 1], side="right").tolist()
        return int(self.values[i]), int(self.values[j])


def _exact_dot(values: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> int:
    """``sum(values * counts)`` exactly: in int64 when no partial sum can overflow."""
    bound = max(abs(int(values[0])), abs(int(values[-1]))) * int(counts.sum())
    if bound < 2**63:
        return int(np.dot(values, counts))
    return sum(v * c for v, c in zip(values.tolist(), counts.tolist(), strict=True))


def percentiles(hist: Histogram, prefix: str, scale: float = 1.0) -> dict[str, Any]:
    """``prefix.count/.p50/.p90/.p99/.max/.mean`` of the samples divided by ``scale``.

    The percentiles and the maximum are those ``np.percentile(..., method="linear")`` (pinned,
    libraries.md §5) and ``max`` give on the scaled float64 samples, bit for bit. The mean is
    the exact sum's over the count, correctly rounded: numpy's mean summed the scaled floats
    pairwise in the samples' order, which the counts no longer hold, so the two differ by
    numpy's rounding error, far below the six decimals the summary keeps but on a tie (every
    scenario's summary is unchanged: docs/performance.md "Exact histograms in the reducer
    process").
    """
    if not hist.n:
        return {f"{prefix}.count": 0}
    out: dict[str, Any] = {f"{prefix}.count": hist.n}
    for p, v in zip(PERCENTILES, hist.percentiles(PERCENTILES, scale), strict=True):
        out[f"{prefix}.p{p}"] = round(v, 6)
    out[f"{prefix}.max"] = round(float(hist.values[-1]) / scale, 6)
    out[f"{prefix}.mean"] = round(float(Fraction(hist.total, hist.n) / Fraction(scale)), 6)
    return out
