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
    values = samples.astype(np.float64) / scale
    out: dict[str, Any] = {f"{prefix}.count": int(samples.size)}
    for p, v in zip(PERCENTILES, np.percentile(values, PERCENTILES, method="linear"), strict=True):
        out[f"{prefix}.p{p}"] = round(float(v), 6)
    out[f"{prefix}.max"] = round(float(values.max()), 6)
    out[f"{prefix}.mean"] = round(float(values.mean()), 6)
    return out


class Samples:
    """Grows an int64 sample array chunk by chunk (amortised, no Python-level loop)."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []

    def add(self, values: np.ndarray) -> None:
        if values.size:
            self._parts.append(np.asarray(values, dtype=np.int64))

    def array(self) -> np.ndarray:
        if not self._parts:
            return np.empty(0, dtype=np.int64)
        if len(self._parts) > 1:
            self._parts = [np.concatenate(self._parts)]
        return self._parts[0]
