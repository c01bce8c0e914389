"""Ground truth: the exact instant each video crosses each milestone of the ladder.

The ladder is CVSA's non-strict one: 100k, 1M, then every 1M (reference §11.2, §16.5; the run's
``Params.milestone_ladder``: ``first``, then every ``step``). A video
crosses milestone ``M`` at the first millisecond ``t*`` with ``V(t*) >= M``; the search is a
vectorised bisection on whole milliseconds over the curve itself (never a time-stepped scan),
so the answer is exact for the simulated world: ``V(t* - 1 ms) < M <= V(t*)``.

Recounts make ``V`` dip, so "reached ``M`` by ``t``" is tested on the running maximum
``max(V(u) for u in [t0, t])``, which is monotone: the maximum of ``V`` at ``t`` and just before
each recount step in ``(t0, t]``. Only milestones above ``V(t0)`` count, each once, at its first
crossing; a recount that dips below a milestone does not make it cross again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sim.cvsa.params import MilestoneLadder
from sim.units import Ms
from sim.world.curves import RecountSteps

I8 = npt.NDArray[np.int64]
B1 = npt.NDArray[np.bool_]

Evaluate = Callable[[I8, I8], I8]
"""``(indices, instants) -> views``, element-wise."""


def rungs_reached(views: npt.ArrayLike, ladder: MilestoneLadder) -> I8:
    """How many ladder milestones are <= ``views`` (100k is rung 1, 1M rung 2, 2M rung 3 ...)."""
    v = np.asarray(views, dtype=np.int64)
    out: I8 = (v >= ladder.first).astype(np.int64) + v // ladder.step
    return out


def rung_value(rung: npt.ArrayLike, ladder: MilestoneLadder) -> I8:
    """The milestone of each rung (1 -> 100k, k >= 2 -> (k-1) x 1M)."""
    k = np.asarray(rung, dtype=np.int64)
    out: I8 = np.where(k == 1, ladder.first, (k - 1) * ladder.step)
    return out


def next_milestone(views: int, ladder: MilestoneLadder) -> int:
    """The smallest ladder milestone strictly above ``views``."""
    return int(rung_value(rungs_reached(views, ladder) + 1, ladder))


@dataclass(frozen=True)
class Crossings:
    """Milestone crossings, sorted by instant then aid."""

    aid: I8
    index: I8
    """Internal video index (see :meth:`sim.world.World.index`)."""
    milestone: I8
    t_ms: I8
    """First millisecond at which the views reach ``milestone``."""
    visible: B1
    """Whether the API answers normally at ``t_ms`` (a hidden video's crossing cannot be seen)."""

    def __len__(self) -> int:
        return len(self.t_ms)


def find_crossings(
    evaluate: Evaluate,
    n: int,
    recount: RecountSteps,
    t0_ms: Ms,
    t1_ms: Ms,
    ladder: MilestoneLadder,
) -> tuple[I8, I8, I8]:
    """``(index, milestone, t_ms)`` of every first crossing in ``(t0, t1]`` among ``n`` videos.

    ``evaluate`` is the world's exact vectorised view function; ``ladder`` the run's milestones.
    """
    everyone = np.arange(n, dtype=np.int64)
    v0 = evaluate(everyone, np.full(n, t0_ms, np.int64))
    peak = evaluate(everyone, np.full(n, t1_ms, np.int64))
    pre = _pre_step_views(evaluate, recount, t0_ms, t1_ms)
    if len(recount.index):
        peak[recount.index] = np.maximum(peak[recount.index], pre.max(axis=1))
    k0, k1 = rungs_reached(v0, ladder), rungs_reached(peak, ladder)
    count = np.maximum(k1 - k0, 0)
    idx = np.repeat(everyone, count)
    first = np.repeat(np.cumsum(count) - count, count)
    rung = k0[idx] + 1 + (np.arange(len(idx)) - first)
    milestone = rung_value(rung, ladder)
    lo = np.full(len(idx), t0_ms, np.int64)
    hi = np.full(len(idx), t1_ms, np.int64)
    row, has_steps = _recount_rows(recount, idx)
    active = np.flatnonzero(hi - lo > 1)
    while active.size:
        mid = (lo[active] + hi[active]) // 2
        ok = evaluate(idx[active], mid) >= milestone[active]
        steps = np.flatnonzero(has_steps[active])
        if steps.size:
            r, target = row[active[steps]], milestone[active[steps], None]
            seen = (recount.t_ms[r] <= mid[steps, None]) & (pre[r] >= target)
            ok[steps] |= seen.any(axis=1)
        hi[active] = np.where(ok, mid, hi[active])
        lo[active] = np.where(ok, lo[active], mid)
        active = active[hi[active] - lo[active] > 1]
    order = np.lexsort((idx, hi))
    return idx[order], milestone[order], hi[order]


def _recount_rows(recount: RecountSteps, idx: I8) -> tuple[I8, B1]:
    """Row of each ``idx`` in the recount table, and whether it has one."""
    if not len(recount.index):
        return np.zeros(len(idx), np.int64), np.zeros(len(idx), np.bool_)
    row = np.minimum(np.searchsorted(recount.index, idx), len(recount.index) - 1)
    found: B1 = recount.index[row] == idx
    return row, found


def _pre_step_views(evaluate: Evaluate, recount: RecountSteps, t0_ms: Ms, t1_ms: Ms) -> I8:
    """Views just before each recount step inside ``(t0, t1]`` (-1 for steps outside)."""
    rows, cols = recount.t_ms.shape
    t = recount.t_ms
    inside = (t > t0_ms) & (t <= t1_ms)
    out = np.full((rows, cols), -1, np.int64)
    r, c = np.nonzero(inside)
    if len(r):
        out[r, c] = evaluate(recount.index[r], t[r, c] - 1)
    return out
