"""Hand-written event logs for the series reducers: records in order, cut into chunks."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import numpy as np

from sim.events.log import Chunk
from sim.events.schema import BY_RECORD

T0 = 1_925_395_200_000
"""2031-01-06T00:00+08:00 (a Monday), on a window, hour and day boundary in UTC+8."""


class Script:
    """Records appended in log order (``seq`` is assigned), then cut into chunks."""

    def __init__(self) -> None:
        self.records: list[Any] = []

    def __call__(self, kind: type, t_ms: int, *fields: int) -> None:
        self.records.append(kind(len(self.records), t_ms, *fields))

    def chunks(self, *cuts: int) -> list[Chunk]:
        """Chunks ending before each ``seq`` in ``cuts`` (and one for the rest)."""
        bounds = [0, *cuts, len(self.records)]
        out = []
        for lo, hi in itertools.pairwise(bounds):
            rows: dict[int, list[list[int]]] = defaultdict(list)
            for r in self.records[lo:hi]:
                rows[BY_RECORD[type(r)].code].append(list(r))
            tables = {c: np.array(v, dtype=np.int64) for c, v in sorted(rows.items())}
            out.append(Chunk(lo, hi - lo, tables))
        return out


def feed(reducer: Any, chunks: list[Chunk], names: list[str] | None = None) -> None:
    for chunk in chunks:
        reducer.feed(chunk, names or [])
