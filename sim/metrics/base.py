"""Streaming reducers: every metric is a pure function of the event log (non-negotiable 4).

A reducer sees the log chunk by chunk (``feed``) and reports a flat mapping of dotted metric
names to numbers (``result``), e.g. ``{"jobs.snapshot.wait.p99_s": 0.0}``. The same reducers run
live (as a sink of the running log) and offline over a saved log (``sim plot``), so a report
re-drawn from ``events.simlog`` is the report the run wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

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


def percentiles(samples: np.ndarray, prefix: str, scale: float = 1.0) -> dict[str, Any]:
    """``prefix.p50/.p90/.p99/.max/.mean``, exact (``method="linear"`` pinned, libraries.md §5)."""
    if samples.size == 0:
        return {f"{prefix}.count": 0}
    # One float copy, divided in place, and partitioned in place by the percentile once the
    # mean and max are taken (the mean sums in array order), not three copies: at full scale a
    # sample array holds millions of lateness samples, and the copies make the reducer
    # process's peak.
    values = samples.astype(np.float64)
    values /= scale
    maximum, mean = float(values.max()), float(values.mean())
    qs = np.percentile(values, PERCENTILES, method="linear", overwrite_input=True)
    out: dict[str, Any] = {f"{prefix}.count": int(samples.size)}
    for p, v in zip(PERCENTILES, qs, strict=True):
        out[f"{prefix}.p{p}"] = round(float(v), 6)
    out[f"{prefix}.max"] = round(maximum, 6)
    out[f"{prefix}.mean"] = round(mean, 6)
    return out


_INT32 = np.iinfo(np.int32)


class Samples:
    """Grows an integer sample array chunk by chunk (amortised, no Python-level loop).

    A chunk's samples are kept as int32 when they all fit (lateness and waits in ms do, by
    far), else as int64: at full scale there are millions of lateness samples, and as int64
    half their bytes would be zeros. Every value is kept exactly, so the percentiles are those
    of the int64 array.
    """

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []

    def add(self, values: np.ndarray) -> None:
        if values.size:
            part = np.asarray(values, dtype=np.int64)
            if _INT32.min <= part.min() and part.max() <= _INT32.max:
                part = part.astype(np.int32)
            self._parts.append(part)

    def array(self) -> np.ndarray:
        """Every sample, in order: int32 if every chunk's fitted, else int64."""
        if not self._parts:
            return np.empty(0, dtype=np.int64)
        if len(self._parts) > 1:
            self._parts = [np.concatenate(self._parts)]
        return self._parts[0]
