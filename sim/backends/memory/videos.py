"""``bilibili_metadata``, ``songs``, ``video_snapshot`` and ``eta`` in memory.

Every aid the tables see gets a dense slot, and per-video values are columns indexed by slot
(:mod:`~sim.backends.memory.columns`; about 40 bytes a video, 32 more for one with an eta row):
at full scale that is two million videos. A video's snapshots are a block of a shared page
(:mod:`~sim.backends.memory.snapshot_pages`): 16 bytes a snapshot, plus 8 a video and the
block's room to grow. Readers take the page, the index of the video's first value in it
(``at``) and its number of snapshots (``n``): snapshot ``i`` is ``page[at + 2 * i]`` (its time)
and ``page[at + 2 * i + 1]`` (its views).

Built with a reach (the composition root passes
:func:`~sim.cvsa.snapshots.snapshot_reach_ms`), the store keeps only the snapshots a read can
still reach: when a video's block is full, the snapshots older than the last one at or before
``reach`` before the new one stay behind as the block moves (:meth:`VideoTables._unreachable`).
A 30-day run keeps a few days of each video's snapshots instead of all of them. A snapshot
inserted out of order and older than that has no duplicate check against the ones left behind
(the write path holds a row for seconds, the reach is days).

The milestone candidates (§11.1) are kept as sets, re-checked whenever a video's latest views,
its eta or its song flag change.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64, trait

from sim.backends.memory.columns import (
    AidIndex,
    F64Column,
    I32Column,
    I64Column,
    U8Column,
)
from sim.backends.memory.snapshot_pages import SnapshotPages
from sim.cvsa.milestones import milestone_candidate
from sim.cvsa.params import MilestoneLadder
from sim.ports import EtaInputs, EtaRow, Snapshot, new_record
from sim.units import Ms

IS_VIDEO: Final = 1
IS_SONG: Final = 2
HAS_ETA: Final = 4


def last_at_or_before(page: vec[i64], at: int, hi: int, t_ms: Ms) -> int:
    """Index of the last snapshot with time <= t among the first ``hi`` of the video whose
    snapshots start at ``page[at]``, or -1."""
    lo = 0
    while lo < hi:
        mid = (lo + hi) >> 1
        if page[at + 2 * mid] <= t_ms:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def _closest_row(page: vec[i64], at: int, n: int, t: Ms, j: int) -> int:
    """The row (of ``n`` from ``page[at]``) closest to ``t``, given ``j``, the last row at or
    before it (-1 if none); a tie goes to the earlier row (§19.7)."""
    if j < 0:
        return 0
    tj = page[at + 2 * j]
    if tj == t or j == n - 1:
        return j
    return j if t - tj <= page[at + 2 * j + 2] - t else j + 1


@final
class _Lookbacks:
    """A kept ``lookback_snapshots`` answer, brought up to date in place (asked again every five
    minutes for each milestone candidate)."""

    def __init__(self, n: int, backs: tuple[Ms, ...]) -> None:
        self.n = n
        """The number of snapshots it was computed for."""
        self.backs = backs
        self.out: tuple[Snapshot | None, ...] = ()
        k = len(backs)
        self.rows: vec[i64] = vec[i64]([0] * k)
        """Per target, the row of its answer."""
        self.lo: vec[float] = vec[float]([0.0] * k)
        self.hi: vec[float] = vec[float]([0.0] * k)
        """Per target, the range ``(lo, hi]`` of twice the target for which its answer is the
        closest row."""
        self.lo2 = 0.0
        self.hi2 = 0.0
        """The whole answer holds while ``lo2 < 2 * now <= hi2`` (:meth:`narrow`)."""
        self.settled_by = 0
        """The reader that settled this video's ETA inputs (0: none); cleared by its next
        snapshot (``SettledEtaInputs``)."""

    def set(self, k: int, page: vec[i64], at: int, i: int) -> Snapshot:
        """Target ``k``'s answer is row ``i`` (of the video's ``self.n`` from ``page[at]``):
        keep the range of twice a target for which that row is the closest (twice the midpoints
        to its neighbours: exact integers; a tie goes to the earlier row), and return the row."""
        r = at + 2 * i
        self.rows[k] = i
        self.lo[k] = float(page[r - 2] + page[r]) if i > 0 else -math.inf
        self.hi[k] = float(page[r] + page[r + 2]) if i < self.n - 1 else math.inf
        return new_record(Snapshot, (page[r], page[r + 1]))

    def narrow(self) -> None:
        """Target ``k`` is ``now - back_k`` and holds while ``lo_k < 2 * (now - back_k) <=
        hi_k``, that is ``lo_k + 2 * back_k < 2 * now <= hi_k + 2 * back_k``: all of them hold
        on the intersection of those intervals of ``2 * now``."""
        lo2, hi2 = -math.inf, math.inf
        for k in range(len(self.backs)):
            back2 = 2 * self.backs[k]
            lo, hi = self.lo[k] + back2, self.hi[k] + back2
            if lo > lo2:
                lo2 = lo
            if hi < hi2:
                hi2 = hi
        self.lo2, self.hi2 = lo2, hi2


@final
class Candidates:
    """The milestone candidates (§11.1), in ascending order: asked for every five minutes (and
    once more by the dispatcher's idle check), while only a few join or leave in between, so
    the order is kept as they do rather than made by sorting every candidate on every ask."""

    def __init__(self) -> None:
        self.members: set[int] = set()
        self.ascending: list[int] = []
        """``members`` in ascending order."""

    def add(self, aid: int) -> None:
        if aid not in self.members:
            self.members.add(aid)
            bisect.insort(self.ascending, aid)

    def discard(self, aid: int) -> None:
        if aid in self.members:
            self.members.discard(aid)
            del self.ascending[bisect.bisect_left(self.ascending, aid)]


WALK_STEPS: Final = 4
"""Snapshots walked back one by one before a binary search takes over: most lookback targets
are a step or two from the previous one, but a video snapshotted every few minutes while it
nears a milestone has hundreds of rows in the 72-hour lookback."""


def _refreshed(
    page: vec[i64], at: int, memo: _Lookbacks, now_ms: Ms
) -> tuple[Snapshot | None, ...]:
    """Move each answer whose target left its range to the target's closest row: a few
    steps from where it was (targets move with the clock), else a binary search."""
    out = list(memo.out)
    n = memo.n
    last = n - 1
    backs = memo.backs
    for k in range(len(backs)):
        t = now_ms - backs[k]
        if memo.lo[k] < 2 * t <= memo.hi[k]:
            continue
        # Row i holds for 2t in (t[i-1] + t[i], t[i] + t[i+1]]: a tie goes to the earlier
        # row (§19.7), as in the full walk above.
        i: int = memo.rows[k]
        steps = WALK_STEPS
        while i < last and 2 * t > page[at + 2 * i] + page[at + 2 * i + 2] and steps:
            i, steps = i + 1, steps - 1
        while i > 0 and 2 * t <= page[at + 2 * i - 2] + page[at + 2 * i] and steps:
            i, steps = i - 1, steps - 1
        if not steps:
            i = _closest_row(page, at, n, t, last_at_or_before(page, at, n, t))
        out[k] = memo.set(k, page, at, i)
    memo.out = tuple(out)
    memo.narrow()
    return memo.out


# A trait: compiled by mypyc, a class may have one base class and traits besides
# (docs/performance.md "Compiled hot modules (mypyc)").
@trait
class VideoTables:
    """The video half of :class:`~sim.backends.memory.MemoryStore`."""

    def __init__(self, snapshot_reach_ms: Ms | None = None) -> None:
        self._reach_ms = snapshot_reach_ms
        """How far before a video's latest snapshot a read can still ask (None: no bound, every
        snapshot is kept); see :meth:`_unreachable`."""
        self._aids = I64Column()
        self._slot = AidIndex(self._aids)
        """aid -> slot (-1: none)."""
        self._flags = U8Column()
        self._published = I64Column()
        self._bili_code: dict[int, int] = {}
        """By slot: the video's non-zero status (bilibili's code, ``bilibili_metadata.status``).
        Few videos ever have one, so a dict, not a column: at 20M videos a column of 4 bytes a
        video was 80 MB of zeros."""
        self._eta_row = I32Column()
        """By slot: the index of the video's eta row in the eta columns (0: none). The four
        eta columns grow by eta row, not by slot: a video that never had one (two thirds of
        them at full scale on day 10) costs 4 bytes instead of 32."""
        self._eta = F64Column()
        self._speed = F64Column()
        self._eta_views = I64Column()
        self._eta_updated = I64Column()
        self._eta.append(0.0)  # index 0 unused: no eta row
        self._speed.append(0.0)
        self._eta_views.append(0)
        self._eta_updated.append(0)
        self._snaps = SnapshotPages()
        """By slot: the video's snapshots."""
        self._candidates = Candidates()
        self._candidates_wide = Candidates()
        self._candidate_rule: tuple[float, MilestoneLadder] | None = None
        """Set C's threshold the two candidate sets are kept for (None: not yet asked, none
        kept; the first :meth:`milestone_candidates` builds them)."""
        self._lookbacks: dict[int, _Lookbacks] = {}
        """aid -> the last lookback_snapshots answer; narrowed when a snapshot is
        appended, dropped when one is inserted before the last or the video stops being a
        milestone candidate."""

    def _slot_of(self, aid: int) -> int:
        s = self._slot.get(aid)
        if s < 0:
            s = self._aids.n
            self._aids.append(aid)
            self._slot.add(aid, s)
            self._flags.append(0)
            self._published.append(-1)
            self._eta_row.append(0)
            self._snaps.append_empty()
        return s

    def _video_added(self, s: int, song: bool) -> None:
        """Hook for the store: the video (or song) in slot ``s`` joined the catalogue."""

    # -- catalogue ----------------------------------------------------------------------------
    async def add_video(self, aid: int, published_ms: Ms) -> None:
        s = self._slot_of(aid)
        if self._flags.get(s) & IS_VIDEO:
            return
        self._flags.set(s, self._flags.get(s) | IS_VIDEO)
        if not self._flags.get(s) & IS_SONG:  # a song keeps the time songs.published_at has
            self._published.set(s, published_ms)
        self._video_added(s, False)

    async def add_song(self, aid: int, published_ms: Ms) -> bool:
        s = self._slot_of(aid)
        if self._flags.get(s) & IS_SONG:
            return False
        self._flags.set(s, self._flags.get(s) | IS_SONG)
        # songs.published_at is the video's when the video is known (as the SQL store writes
        # it); one column holds both, since only a song's time is ever read.
        if not self._flags.get(s) & IS_VIDEO:
            self._published.set(s, published_ms)
        self._video_added(s, True)
        self._recheck_candidate(aid, s)
        return True

    async def load_catalog(
        self, aids: Sequence[int], published_ms: Sequence[Ms], is_song: Sequence[bool]
    ) -> None:
        for aid, pub, song in zip(aids, published_ms, is_song, strict=True):
            await self.add_video(aid, pub)
            if song:
                await self.add_song(aid, pub)

    async def load_snapshots(
        self, aids: Sequence[int], times_ms: Sequence[Ms], views: Sequence[int]
    ) -> int:
        stored = 0
        for aid, t, v in zip(aids, times_ms, views, strict=True):
            stored += await self.insert_snapshot(aid, t, v)
        return stored

    def _aids_with(self, flag: int, without: int = 0) -> list[int]:
        flags, aids = self._flags, self._aids
        return sorted(
            aids.get(s) for s in range(aids.n) if flags.get(s) & flag and not flags.get(s) & without
        )

    async def song_aids(self) -> list[int]:
        return self._aids_with(IS_SONG)

    async def video_aids(self) -> list[int]:
        return self._aids_with(IS_VIDEO)

    async def song_published_ms(self, aid: int) -> Ms | None:
        s = self._slot.get(aid)
        return None if s < 0 or not self._flags.get(s) & IS_SONG else self._published.get(s)

    async def video_status(self, aid: int) -> int:
        s = self._slot.get(aid)
        return 0 if s < 0 or not self._flags.get(s) & IS_VIDEO else self._bili_code.get(s, 0)

    async def set_video_status(self, aid: int, code: int) -> None:
        s = self._slot.get(aid)
        if s >= 0 and self._flags.get(s) & IS_VIDEO:
            if code:
                self._bili_code[s] = code
            else:
                self._bili_code.pop(s, None)

    # -- snapshots ----------------------------------------------------------------------------
    async def insert_snapshot(self, aid: int, t_ms: Ms, views: int) -> bool:
        s = self._slot_of(aid)
        snaps = self._snaps
        n = snaps.count(s)
        if n == 0:
            snaps.append(s, t_ms, views)
        elif snaps.time_ms(s, n - 1) < t_ms:  # the usual case: appended in time order
            drop = self._unreachable(aid, s, n, t_ms) if snaps.full(s) else 0
            self._lookbacks_appended(aid, s, t_ms, drop)
            snaps.append(s, t_ms, views, drop)
        else:
            self._lookbacks.pop(aid, None)
            page, at = snaps.page(s), snaps.at(s)
            i = last_at_or_before(page, at, n, t_ms)
            if i >= 0 and page[at + 2 * i] == t_ms:
                return False
            snaps.insert(s, i + 1, t_ms, views)
            return True
        self._recheck_candidate(aid, s)
        return True

    def _unreachable(self, aid: int, s: int, n: int, t_ms: Ms) -> int:
        """How many of slot ``s``'s ``n`` snapshots, the oldest, no read can reach once one
        taken at ``t_ms`` is its latest; they are left behind when its block moves.

        Every read asks about an instant at most :attr:`_reach_ms` before the clock it runs
        on (:func:`sim.cvsa.snapshots.snapshot_reach_ms`), and a snapshot is never taken after
        the clock it is written on, so no later read asks before ``cut = t_ms - reach``. A
        read at or after ``cut`` finds the last snapshot at or before its instant and the one
        after it, never an earlier one: the snapshots before the last at or before ``cut`` are
        unreachable. A kept lookback answer keeps the rows it points at (its row numbers
        shift down by the number left behind)."""
        reach = self._reach_ms
        if reach is None:
            return 0
        snaps = self._snaps
        drop = last_at_or_before(snaps.page(s), snaps.at(s), n, t_ms - reach)
        if drop <= 0:
            return 0
        memo = self._lookbacks.get(aid)
        if memo is not None:
            for k in range(len(memo.rows)):
                drop = min(drop, memo.rows[k])
        return drop

    def _lookbacks_appended(self, aid: int, s: int, t_ms: Ms, drop: int) -> None:
        """A row appended after the last one only narrows the last row's range: its upper
        bound was open and is now the midpoint to the new row; every other answer kept holds
        over the same targets as before. The ``drop`` oldest rows are left behind
        (:meth:`_unreachable`): every row number moves down by that many."""
        memo = self._lookbacks.get(aid)
        if memo is None:
            return
        memo.settled_by = 0  # a new latest snapshot: the ETA inputs changed
        last = memo.n - 1
        for k in range(len(memo.rows)):
            if memo.rows[k] == last:
                memo.hi[k] = float(self._snaps.time_ms(s, last) + t_ms)
            memo.rows[k] -= drop
        memo.n += 1 - drop
        memo.narrow()

    async def latest_snapshot(self, aid: int) -> Snapshot | None:
        s = self._slot.get(aid)  # asked for every candidate every pass
        n = 0 if s < 0 else self._snaps.count(s)
        if n == 0:
            return None
        return new_record(Snapshot, (self._snaps.time_ms(s, n - 1), self._snaps.views(s, n - 1)))

    async def snapshot_before(self, aid: int, t_ms: Ms) -> Snapshot | None:
        s = self._slot.get(aid)
        n = 0 if s < 0 else self._snaps.count(s)
        if n == 0:
            return None
        page, at = self._snaps.page(s), self._snaps.at(s)
        r = at + 2 * last_at_or_before(page, at, n, t_ms)
        return None if r < at else new_record(Snapshot, (page[r], page[r + 1]))

    async def closest_snapshot(self, aid: int, t_ms: Ms) -> Snapshot | None:
        s = self._slot.get(aid)
        n = 0 if s < 0 else self._snaps.count(s)
        if n == 0:
            return None
        page, at = self._snaps.page(s), self._snaps.at(s)
        r = at + 2 * _closest_row(page, at, n, t_ms, last_at_or_before(page, at, n, t_ms))
        return new_record(Snapshot, (page[r], page[r + 1]))

    async def lookback_snapshots(
        self, aid: int, now_ms: Ms, backs_ms: Sequence[Ms]
    ) -> tuple[Snapshot | None, ...]:
        s = self._slot.get(aid)
        if s < 0 or not self._snaps.count(s) or not backs_ms:
            return (None,) * len(backs_ms)
        return self._lookbacks_of(aid, s, now_ms, tuple(backs_ms))

    async def eta_inputs(
        self, aids: Sequence[int], now_ms: Ms, backs_ms: Sequence[Ms], reader: int = 0
    ) -> EtaInputs:
        backs = tuple(backs_ms)
        latest_ms: list[Ms | None] = []
        latest_views: list[int] = []
        lookbacks: list[Sequence[Snapshot | None]] = []
        answered: list[int] = []
        settled = 0
        twice_now = 2 * now_ms
        for aid in aids:
            if reader:
                # Settled by this reader, no snapshot since (that clears the mark) and every
                # lookback still on the same row: the answer would be the kept one.
                memo = self._lookbacks.get(aid)
                if (
                    memo is not None
                    and memo.settled_by == reader
                    and memo.lo2 < twice_now <= memo.hi2
                    and memo.backs == backs
                ):
                    settled += 1
                    continue
            answered.append(aid)
            s = self._slot.get(aid)
            n = 0 if s < 0 else self._snaps.count(s)
            if n == 0:
                latest_ms.append(None)
                latest_views.append(0)
                lookbacks.append(())
                continue
            latest_ms.append(self._snaps.time_ms(s, n - 1))
            latest_views.append(self._snaps.views(s, n - 1))
            # Mostly the kept answer itself: no new object per candidate (EtaInputs says why).
            lookbacks.append(self._lookbacks_of(aid, s, now_ms, backs) if backs else ())
        return new_record(EtaInputs, (latest_ms, latest_views, lookbacks, answered, settled))

    async def settle_eta_inputs(self, aids: Sequence[int], now_ms: Ms, reader: int) -> None:
        # The mark sits on the kept lookback answer, which exists exactly while the video is a
        # candidate and goes with a snapshot inserted before the last; an appended one clears it.
        twice_now = 2 * now_ms
        for aid in aids:
            memo = self._lookbacks.get(aid)
            s = self._slot.get(aid)
            if (
                memo is not None
                and s >= 0
                and memo.n == self._snaps.count(s)
                and memo.lo2 < twice_now <= memo.hi2
            ):
                memo.settled_by = reader

    def _lookbacks_of(
        self, aid: int, s: int, now_ms: Ms, backs: tuple[Ms, ...]
    ) -> tuple[Snapshot | None, ...]:
        """:meth:`lookback_snapshots` of the video in slot ``s``, which has snapshots, for at
        least one target."""
        n = self._snaps.count(s)
        page, at = self._snaps.page(s), self._snaps.at(s)
        memo = self._lookbacks.get(aid)
        if memo is not None and memo.n == n and memo.backs == backs:
            # The milestone dispatcher asks again five minutes later: each answer holds as long
            # as its target stays between the same midpoints (one interval test for all of
            # them); only targets that left theirs are looked up again, from where they were.
            if memo.lo2 < 2 * now_ms <= memo.hi2:
                return memo.out
            memo.settled_by = 0  # another answer: what it leads to is not known yet
            return _refreshed(page, at, memo, now_ms)
        # One backward walk serves every target (a handful, mostly near the end of the list),
        # latest target first; a stable sort, so equal targets keep their order.
        times_ms = [now_ms - back for back in backs]
        out: list[Snapshot | None] = [None] * len(times_ms)
        kept = _Lookbacks(n, backs)
        j = n - 1
        for k in sorted(range(len(times_ms)), key=times_ms.__getitem__, reverse=True):
            t = times_ms[k]
            steps = WALK_STEPS
            while j >= 0 and page[at + 2 * j] > t:
                if not steps:
                    j = last_at_or_before(page, at, j, t)
                    break
                j -= 1
                steps -= 1
            out[k] = kept.set(k, page, at, _closest_row(page, at, n, t, j))
        kept.out = tuple(out)
        kept.narrow()
        self._lookbacks[aid] = kept
        return kept.out

    # -- eta and milestone candidates ---------------------------------------------------------
    async def upsert_eta(self, row: EtaRow) -> None:
        s = self._slot_of(row.aid)
        e = self._eta_row.get(s)
        if not e:  # the video's first eta row
            e = self._eta.n
            self._eta_row.set(s, e)
            self._eta.append(0.0)
            self._speed.append(0.0)
            self._eta_views.append(0)
            self._eta_updated.append(0)
            self._flags.set(s, self._flags.get(s) | HAS_ETA)
        self._eta.set(e, row.eta_h)
        self._speed.set(e, row.speed)
        self._eta_views.set(e, row.current_views)
        self._eta_updated.set(e, row.updated_ms)
        self._recheck_candidate(row.aid, s)

    async def get_eta(self, aid: int) -> EtaRow | None:
        s = self._slot.get(aid)
        if s < 0 or not self._flags.get(s) & HAS_ETA:
            return None
        e = self._eta_row.get(s)
        return EtaRow(
            aid,
            self._eta.get(e),
            self._speed.get(e),
            self._eta_views.get(e),
            self._eta_updated.get(e),
        )

    def _recheck_candidate(self, aid: int, s: int) -> None:
        # The candidate query scans latest_video_snapshot and eta in SQL; here both candidate
        # sets (with and without set A) are kept up to date on every write that can change them.
        rule = self._candidate_rule
        if rule is None:  # no threshold asked for yet, no sets kept
            return
        below, ladder = rule
        n = self._snaps.count(s)
        if not n:
            return
        views, is_song = self._snaps.views(s, n - 1), bool(self._flags.get(s) & IS_SONG)
        eta_h = self._eta.get(self._eta_row.get(s)) if self._flags.get(s) & HAS_ETA else None
        if milestone_candidate(views, is_song, eta_h, False, below, ladder):
            self._candidates.add(aid)
            self._candidates_wide.add(aid)
            return
        self._candidates.discard(aid)
        if is_song and milestone_candidate(views, is_song, eta_h, True, below, ladder):
            self._candidates_wide.add(aid)
        else:
            self._candidates_wide.discard(aid)
            # No longer asked about every five minutes: its kept lookback answer (about 1.2 KB
            # besides the answer tuple, which the scheduler's ETA memo shares) would otherwise
            # stay for the rest of the run, one per video that was ever a candidate. Asked
            # again, it is computed afresh.
            self._lookbacks.pop(aid, None)

    async def milestone_candidates(
        self, wide: bool, eta_below_h: float, ladder: MilestoneLadder
    ) -> list[int]:
        if (eta_below_h, ladder) != self._candidate_rule:  # a first ask, or another: rebuild
            self._candidate_rule = (eta_below_h, ladder)
            self._candidates, self._candidates_wide = Candidates(), Candidates()
            for s in range(self._aids.n):
                self._recheck_candidate(self._aids.get(s), s)
        return list((self._candidates_wide if wide else self._candidates).ascending)
