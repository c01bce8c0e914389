"""Deleted, hidden and under-review videos: the error code the API answers with, and when.

bilibili's view API answers an unavailable video with a non-zero ``code`` instead of stats; CVSA
stores it in ``bilibili_metadata.status`` and stops single-path snapshots of that aid for good
(reference §2.6, §9, §16.12). The codes used:

* ``-404``: the video does not exist (deleted; also before an arrival is published);
* ``62002``: the video is invisible (hidden by the uploader or by moderation);
* ``62004``: the video is under review; it becomes visible again after the review.

Only a small share of videos is ever unavailable, so the table is sparse: sorted row indices with
``[from, until)`` and a code, plus a dict for the scalar path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.cvsa.vocabulary import VideoUnavailable
from sim.rng import RandomStreams
from sim.scenario.document import Scenario
from sim.units import DAY_MS, Ms
from sim.world import families as fm
from sim.world.curves import NEVER_MS
from sim.world.families import F8, I8
from sim.world.scalar import error_in_force

DELETED = VideoUnavailable.DELETED
HIDDEN = VideoUnavailable.HIDDEN
UNDER_REVIEW = VideoUnavailable.UNDER_REVIEW
CODES = (DELETED, HIDDEN, UNDER_REVIEW)
"""In the order of ``[catalog.error_codes]``."""
REVIEW_SIGMA = 0.8
"""Log-normal spread of review durations (a review takes minutes to days; not in the repo)."""


@dataclass(frozen=True)
class Availability:
    """For the videos ``index`` (sorted): unavailable from ``from_ms`` until ``until_ms``
    (exclusive; :data:`NEVER_MS` when permanent), answering with ``code``."""

    index: I8
    from_ms: I8
    until_ms: I8
    code: I8
    _rows: dict[int, tuple[int, int, int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        columns = (self.index, self.from_ms, self.until_ms, self.code)
        rows = zip(*(c.tolist() for c in columns), strict=True)
        object.__setattr__(self, "_rows", {i: (f, u, c) for i, f, u, c in rows})

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays (the dict adds about 200 bytes per unavailable video)."""
        return self.index.nbytes + self.from_ms.nbytes + self.until_ms.nbytes + self.code.nbytes

    def error(self, i: int, t_ms: Ms) -> int:
        """The code in force for video ``i`` at ``t_ms`` (0 = visible; compiled:
        :func:`sim.world.scalar.error_in_force`)."""
        return error_in_force(self._rows, i, t_ms)

    def errors(self, idx: I8, t_ms: Ms | I8) -> I8:
        """Element-wise :meth:`error` (``t_ms`` is one instant or one per video)."""
        pos = np.clip(np.searchsorted(self.index, idx), 0, max(len(self.index) - 1, 0))
        out = np.zeros(len(idx), np.int64)
        if not len(self.index):
            return out
        hit = (self.index[pos] == idx) & (self.from_ms[pos] <= t_ms) & (t_ms < self.until_ms[pos])
        out[hit] = self.code[pos[hit]]
        return out

    def without(self, rows: I8) -> Availability:
        """This table less the videos ``rows`` (pinned videos are always available)."""
        keep = ~np.isin(self.index, rows)
        return Availability(
            self.index[keep], self.from_ms[keep], self.until_ms[keep], self.code[keep]
        )

    @staticmethod
    def concat(parts: list[tuple[Availability, int]]) -> Availability:
        """Join tables whose indices are offset by the given amounts."""
        return Availability(
            np.concatenate([a.index + off for a, off in parts]),
            np.concatenate([a.from_ms for a, _ in parts]),
            np.concatenate([a.until_ms for a, _ in parts]),
            np.concatenate([a.code for a, _ in parts]),
        )


def draw_availability(
    scenario: Scenario,
    streams: RandomStreams,
    stream: str,
    published_ms: I8,
    at_start: bool,
) -> Availability:
    """Unavailability for a batch of videos (``at_start``: the batch existed before the start).

    Each video becomes unavailable after an exponential time with rate ``unavailable_per_day``
    (from the start, or from publication for arrivals); catalog videos are already unavailable
    at the start with probability ``unavailable_at_start``.
    """
    cat = scenario.catalog
    start, end = scenario.start_ms, scenario.end_ms
    n = len(published_ms)

    def uniform(q: str) -> F8:
        out: F8 = streams.fresh_numpy(stream, f"availability.{q}").random(n)
        return out

    origin = np.maximum(published_ms, start)
    rate = cat.unavailable_per_day / DAY_MS
    wait = -np.log1p(-uniform("when")) / rate if rate > 0 else np.full(n, np.inf)
    t_from = np.where(wait < end - origin, origin + np.minimum(wait, end - origin), np.inf)
    if at_start:
        earlier = published_ms + uniform("before") * (start - published_ms)
        t_from = np.where(uniform("already") < cat.unavailable_at_start, earlier, t_from)
    idx = np.flatnonzero(np.isfinite(t_from))
    w = np.array(cat.error_codes.as_tuple())
    kind = np.searchsorted(np.cumsum(w) / w.sum(), uniform("code")[idx], side="right")
    code = np.array(CODES)[np.minimum(kind, len(CODES) - 1)]
    from_ms = np.round(t_from[idx]).astype(np.int64)
    review = fm.lognormal(
        streams.fresh_numpy(stream, "availability.review").standard_normal(n)[idx],
        cat.review_median,
        REVIEW_SIGMA,
    )
    until = np.full(len(idx), NEVER_MS, np.int64)
    temporary = code == UNDER_REVIEW
    until[temporary] = from_ms[temporary] + np.round(review[temporary]).astype(np.int64)
    return Availability(idx.astype(np.int64), from_ms, until, code.astype(np.int64))
