"""Gaps between consecutive snapshots of each song, vectorised per chunk (invariant
``stale_songs``, finding ``staleness``).

A song is known from the start (the catalogue's, each from its latest snapshot before the run)
or from its ``SongClassified`` on; each ``SnapshotTaken`` of a known song closes the gap since
its previous snapshot (or since it became known). At the end, every song has an open gap up to
the log's last instant. A gap longer than the bound is *excused* when the video was unavailable
(deleted, hidden or under review: the API answers with a code, not views, reference §9, §16.12)
at some instant of the gap: nothing could snapshot it then, and the scheduler stops following a
video whose status is non-zero. Excused gaps are counted apart, by the song's code.

State is a few aligned arrays over the songs (sorted aids), so the cost per chunk is a sort of
the chunk's song snapshots, not a Python loop over them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.invariants.common import EXAMPLES, _last_t
from sim.metrics.invariants.truth import SongBaselines, Unavailability
from sim.units import Ms

Gap = tuple[int, int, int, int, int]
"""``(gap_ms, to_ms, aid, from_ms, type)`` of one gap; ``type`` -1 for an open gap."""


class SongGaps:
    """Every song's snapshot gaps against ``bound_ms`` (module docstring).

    Args:
        songs: the catalogue's songs, each with the instant its first gap starts.
        bound_ms: a gap longer than this is over the bound.
        unavailable: when each video stops answering, and with which code.
        keep_worst: how many of the longest over-bound gaps of available songs to keep.
    """

    def __init__(
        self,
        songs: Mapping[int, Ms] | SongBaselines,
        bound_ms: Ms,
        unavailable: Unavailability | None = None,
        keep_worst: int = 0,
    ) -> None:
        self.bound = bound_ms
        self.unavailable = unavailable or Unavailability()
        base = SongBaselines.of(songs)
        self.aid = base.aid.copy()
        """Every song known so far, sorted."""
        self.last = base.since_ms.copy()
        """Per song, the instant its open gap starts."""
        # Two per-song facts are rare, so they are looked up per chunk rather than kept aligned
        # with ``aid`` (at 20M videos four arrays of the 2M songs, 64 MB): when a song was
        # classified (a catalogue song is known from the start) and when it was unavailable
        # (``unavailable`` is sorted by aid already).
        self._classified_aid = np.empty(0, np.int64)
        """Songs classified during the log, sorted..."""
        self._classified_seq = np.empty(0, np.int64)
        """...and the seq of each one's ``SongClassified``: its snapshots logged before it do
        not count."""
        self.over = 0
        """Closed over-bound gaps of available songs."""
        self.first: list[dict[str, Any]] = []
        """The first :data:`EXAMPLES` of them, in log order."""
        self.stale = np.zeros(self.aid.size, bool)
        """Per song: it had a closed over-bound gap while available. A flag aligned with
        ``aid``, not a set of aids: at 20M videos, where most songs wait longer than the bound,
        a set grew by tens of MB a day."""
        self.excused = 0
        self.excused_songs: dict[int, int] = {}
        """Unavailable songs with a closed over-bound gap -> their code."""
        self.keep_worst = keep_worst
        self.worst: list[Gap] = []
        self.max_gap: Ms = 0
        """The longest closed gap of an available song."""
        self.now: Ms | None = None

    def feed(self, chunk: Chunk) -> None:
        end = _last_t(chunk)
        if end is not None:
            self.now = end if self.now is None else max(self.now, end)
        classified = chunk.table(K.SongClassified)
        if classified.size:
            self._classify(classified[:, :3])
        taken = chunk.table(K.SnapshotTaken)
        if not (taken.size and self.aid.size):
            return
        pos = np.minimum(np.searchsorted(self.aid, taken[:, 2]), self.aid.size - 1)
        mine = self.aid[pos] == taken[:, 2]
        known = self._classified_aid
        if known.size:
            at = np.minimum(np.searchsorted(known, taken[:, 2]), known.size - 1)
            late = known[at] == taken[:, 2]
            mine &= ~late | (taken[:, 0] > self._classified_seq[at])
        if not mine.any():
            return
        rows, pos = taken[mine], pos[mine]
        order = np.lexsort((rows[:, 0], pos))  # by song, then in log order
        rows, pos = rows[order], pos[order]
        t = rows[:, 1]
        head = np.ones(t.size, bool)
        head[1:] = pos[1:] != pos[:-1]
        prev = np.empty_like(t)
        prev[head] = self.last[pos[head]]
        prev[~head] = t[np.flatnonzero(~head) - 1]
        tail = np.ones(t.size, bool)
        tail[:-1] = head[1:]
        self.last[pos[tail]] = np.maximum(self.last[pos[tail]], t[tail])
        gap = t - prev
        unav_from, unav_until, unav_code = self.unavailable.lookup(rows[:, 2])
        excused = (unav_from <= t) & (unav_until > prev)
        if (~excused).any():
            self.max_gap = max(self.max_gap, int(gap[~excused].max()))
        over = gap > self.bound
        hit = np.flatnonzero(over & ~excused)
        if hit.size:
            self.over += hit.size
            self.stale[pos[hit]] = True
            first = hit[np.argsort(rows[hit, 0], kind="stable")][: EXAMPLES - len(self.first)]
            self.first.extend(
                self.example(a, f, to, False)
                for a, f, to in zip(
                    rows[first, 2].tolist(), prev[first].tolist(), t[first].tolist(), strict=True
                )
            )
            self._keep(gap[hit], t[hit], rows[hit, 2], prev[hit], rows[hit, 4])
        off = np.flatnonzero(over & excused)
        if off.size:
            self.excused += off.size
            self.excused_songs.update(
                zip(rows[off, 2].tolist(), unav_code[off].tolist(), strict=True)
            )

    def _classify(self, rows: np.ndarray) -> None:
        """Songs known from their ``SongClassified`` (seq, t, aid) on, if not known before."""
        aid, first = np.unique(rows[:, 2], return_index=True)
        seq, t = rows[first, 0], rows[first, 1]
        pos = np.searchsorted(self.aid, aid)
        new = ~((pos < self.aid.size) & (self.aid[np.minimum(pos, self.aid.size - 1)] == aid))
        if not new.any():
            return
        aid, seq, t, pos = aid[new], seq[new], t[new], pos[new]
        self.aid = np.insert(self.aid, pos, aid)
        self.last = np.insert(self.last, pos, t)
        self.stale = np.insert(self.stale, pos, False)
        at = np.searchsorted(self._classified_aid, aid)
        self._classified_aid = np.insert(self._classified_aid, at, aid)
        self._classified_seq = np.insert(self._classified_seq, at, seq)

    def _keep(
        self, gap: np.ndarray, to: np.ndarray, aid: np.ndarray, frm: np.ndarray, ty: np.ndarray
    ) -> None:
        if not self.keep_worst:
            return
        top = np.lexsort((aid, to, -gap))[: self.keep_worst]
        cols = (gap[top], to[top], aid[top], frm[top], ty[top])
        self.worst.extend(zip(*(c.tolist() for c in cols), strict=True))
        self.worst.sort(key=lambda g: (-g[0], g[1], g[2]))
        del self.worst[self.keep_worst :]

    def open_gaps(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the songs whose open gap at the end is over the bound: (available,
        excused), the available ones by gap start then aid."""
        if self.now is None or not self.aid.size:
            empty = np.empty(0, np.int64)
            return empty, empty
        over = self.now - self.last > self.bound
        excused = np.zeros(self.aid.size, bool)
        excused[self._excused_open()[0]] = True
        avail = np.flatnonzero(over & ~excused)
        avail = avail[np.lexsort((self.aid[avail], self.last[avail]))]
        return avail, np.flatnonzero(over & excused)

    def longest_open(self) -> Ms:
        """The longest open gap of an available song at the end (0 without a log)."""
        if self.now is None or not self.aid.size:
            return 0
        avail = np.ones(self.aid.size, bool)
        avail[self._excused_open()[0]] = False
        return int(self.now - self.last[avail].min()) if avail.any() else 0

    def _excused_open(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the songs unavailable at some instant of their open gap, and each one's
        code: the unavailable videos are few, so only they are looked up among the songs."""
        unav = self.unavailable
        empty = np.empty(0, np.int64)
        if self.now is None or not (unav.aid.size and self.aid.size):
            return empty, empty
        pos = np.minimum(np.searchsorted(self.aid, unav.aid), self.aid.size - 1)
        hit = np.flatnonzero(self.aid[pos] == unav.aid)
        pos = pos[hit]
        gone = (unav.from_ms[hit] <= self.now) & (unav.until_ms[hit] > self.last[pos])
        return pos[gone], unav.code[hit[gone]]

    def code_of(self, pos: np.ndarray) -> np.ndarray:
        """The codes of the songs at ``pos`` (0 for one that stays available)."""
        return self.unavailable.lookup(self.aid[pos])[2]

    def example(self, aid: int, frm: Ms, to: Ms, is_open: bool) -> dict[str, Any]:
        return {
            "aid": aid,
            "from_ms": frm,
            "to_ms": to,
            "gap_s": (to - frm) / 1000,
            "open": is_open,
        }
