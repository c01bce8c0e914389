"""Invariant monitors: streaming reducers that find every violation of the scheduler's invariants
in the event log (issue 4, property tests; issue 6, online monitors).

Every monitor reports, under stable names, ``invariants.<name>.violations`` (the exact count) and
``invariants.<name>.examples`` (the first :data:`EXAMPLES` violations in log order, each a small
dict of schedule ids, the aid and times in epoch ms), plus a few counters of the **legitimate
exceptions** the rules allow, so that "zero violations" never hides them. Like every reducer they
are pure (no I/O), deterministic and streaming: their state is keyed by live schedules, running
jobs, songs or milestone crossings, and what finishes is dropped.

What the log cannot tell is passed to the constructors: the window cap and two behaviour switches
of the run (:func:`invariant_reducers`), the initial catalogue's songs, the milestone ground
truth and the videos' availability (:class:`RunTruth`, read from the world once per run by
:func:`run_truth` and shared with the findings; :func:`cvsa_invariant_reducers`).

The invariants and the precise rules
====================================

``window_cap`` (:class:`WindowCapInvariant`)
    A capped reservation never leaves its window above the cap: a ``ScheduleCreated`` whose
    placement is ``forward`` or ``fallback`` (both probe with HINCRBY and undo when the count goes
    over, :func:`sim.cvsa.windows.adjust_snapshot_time`) must have ``window_count <= cap``.
    Not violations, counted apart: ``over_cap_uncapped`` -- ``exact`` (milestone/new, §19.12) and
    ``unadjusted`` creations and milestone moves (``ScheduleMoved``) whose unconditional +1 left
    the window above the cap; ``exhausted`` -- rows inserted at their target with nothing reserved
    because every probed window was full (§6.2 step 4; the event carries no count for them).

``one_active_per_type`` (:class:`LifecycleInvariants`)
    At most one active (pending or processing) row per (aid, type) unless forced (§3). The row
    statuses are rebuilt from the log (see *Row status* below). A violation is a non-forced
    ``ScheduleCreated`` while another row of the same (aid, type) is active (``cause: created``),
    or a row becoming active again without a creation -- a ``StrayStatusChange`` from a final
    status (``cause: stray``), or a row never logged (``cause: unlogged``) -- while another row of
    the (aid, type) is active. Forced creations next to active rows are legitimate (cvsa-2026's
    parallel ``new`` chains, the 4 initial ``new`` rows) and counted as ``forced_parallel``.

``no_schedule_before_creation`` (:class:`NoScheduleBeforeCreation`)
    A row's due time is never earlier than its creation instant, except where the rules put it
    there. No caller passes a target in the past (every target is ``now`` plus a delay >= 0, or
    the regular dispatcher's ``>= now + 1 ms`` clamp, or a future archive date), and the forward
    search (and the design profile's jittered fallback) returns ``max(window + jitter, now)``.
    The only rule that yields a due time before ``now`` from a target that is not is the
    deployed bare fallback (switch ``fallback_bare_window_start``, §6.2 step 3, §19.4), which
    returns the start of a window up to 25 min back. So, for ``ScheduleCreated`` at ``t`` with due
    ``d < t``: **allowed** iff placement is ``fallback``, the run's fallback is bare and
    ``d == window_ms``; every other case is a violation (an ``exact``, ``unadjusted`` or
    ``exhausted`` row keeps its target, so ``d < t`` there means a caller passed a past target;
    ``forward`` clamps to now). A ``ScheduleMoved`` to a time before its instant is a violation
    too: nothing clamps a milestone move (§19.11), but its target is a caller's ``now`` + delay
    (>= 2 s from the dispatcher, >= 0 from the re-ETA, 5 s from a retry), so a move into the past
    needs a past target. Counted apart, not violations: ``allowed`` (the bare-fallback rows in the
    past) and ``clamped_to_now`` (jittered rows whose window starts before ``t`` and whose due
    time is exactly ``t``: the jitter fell in the past and was clamped, §6.2, §19.2).

``single_path_processing`` (:class:`LifecycleInvariants`)
    ``snapshotTick`` never dispatches a row of a video that already has a ``processing`` row
    (§7.2: ``videoHasProcessingSchedule`` looks at rows of any type). A violation is a
    ``ScheduleDispatched`` into a ``snapshotVideo`` job (the job's ``JobAdded`` name tells the
    single path from the bulk path) while another row of the aid is processing. What counts as
    processing is exactly what the store holds: a single-path dispatch marks its row; a bulk
    dispatch marks its rows only when the bulk tick passes schedule ids (constructor argument
    ``bulk_marks_processing`` = not switch ``bulk_aids_as_ids_bug``; cvsa-2026 leaves them
    pending, §8.3); a ``StrayStatusChange`` sets whatever it says. So cvsa-2026's unmarked bulk
    rows are invisible to the tick, as deployed, and not violations; the hazard is counted apart:
    ``unmarked_bulk_overlap`` -- single-path dispatches of an aid with rows in an unfinished bulk
    job that did not mark them (two concurrent snapshot jobs for one video, or for one row when the
    tick takes an archive row of a pending bulk batch) -- and ``redispatched`` -- dispatches of a
    row already in an unfinished job (the bulk re-enqueue of §8.3).

``lost_schedules`` (:class:`LifecycleInvariants`)
    A row deleted by cleanup (``ScheduleDeleted``) for which no ``SnapshotTaken`` carries its
    schedule id, before or after the deletion. A deletion while a job that took the row up
    (``ScheduleStarted``) is still running is judged when that job finishes (a worker sleeping in
    a backoff retry can still record the snapshot); rows still waiting at the end of the log are
    ``undecided``. Rows that a stray status change revived from a final status are counted as
    ``stray_deleted``, not lost (they had their turn). By type: ``lost_schedules.<type>``.

``stale_songs`` (:class:`StaleSongs`)
    A song goes no longer than ``max_interval_ms`` (72 h, the longest regular interval, §11.6)
    plus ``slack_ms`` (2 h) without a snapshot of any kind. Songs are the initial catalogue's
    (constructor argument, since the catalogue load writes no events: each with the time of its
    latest history snapshot, or the run start) and those of ``SongClassified`` (from the
    classification instant). A violation is a gap longer than the bound between consecutive
    snapshots, or from that baseline to the first snapshot, or an open gap at the end of the log
    (``open: true``). Not violations, counted apart: ``unavailable`` -- over-bound gaps of a song
    that was deleted, hidden or under review at some instant of the gap (constructor argument
    ``unavailable``, the world's availability): the API answers with a code, not views, so
    nothing could snapshot it (§9, §16.12). ``max_gap_s`` is the longest gap of an available
    song.

``missed_milestones`` (:class:`MilestoneCapture`)
    Ground truth (``World.crossings``: aid, milestone M, first instant t* with views >= M) is a
    constructor argument. A crossing is *captured* by the first snapshot of the aid at or after t*
    reading views >= M; it is *missed* when no such snapshot comes by ``t* + bound_ms`` (judged
    once the log has passed that instant; crossings whose deadline the log has not passed are
    ``undecided``). Crossings of hidden videos (``visible`` false) are not judged (``hidden``).
    Only crossings of *tracked* videos (constructor argument ``tracked``: a song at the crossing,
    ``RunTruth.tracked``) are violations; the design never promises to follow a non-song, whose
    missed crossings are counted apart (``untracked``); ``checked`` counts the tracked crossings
    judged. Finding ``milestones`` explains each miss.
    Also reported: ``milestones.crossed``, ``milestones.captured``, the capture latency
    (``milestones.capture_latency.*_s``, every capture however late) and the bracket width
    (``milestones.bracket_width.*_s``: the capturing snapshot minus the last logged snapshot below
    M, when there is one).

Row status (one_active_per_type, single_path_processing, lost_schedules)
------------------------------------------------------------------------
Rebuilt from the log as the store holds it: ``ScheduleCreated`` -> pending; a single-path
``ScheduleDispatched`` -> processing (a bulk one too when ``bulk_marks_processing``);
``StrayStatusChange`` -> its ``to_status``; ``ScheduleFinished`` and ``ScheduleDeleted`` end the
row (skips and moves change no status). A row first seen in a later event (inserted without a
``ScheduleCreated``, e.g. by a test's setup) is adopted then and counted in
``invariants.unlogged_schedules``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy.typing as npt

from sim.metrics.base import Reducer
from sim.metrics.invariants.common import (
    DEFAULT_CAPTURE_BOUND_MS,
    DEFAULT_STALE_SLACK_MS,
    EXAMPLES,
)
from sim.metrics.invariants.placement import NoScheduleBeforeCreation, WindowCapInvariant
from sim.metrics.invariants.schedule_rows import LifecycleInvariants
from sim.metrics.invariants.songs import CrossingTable, MilestoneCapture, NoCrossings, StaleSongs
from sim.metrics.invariants.truth import (
    RunTruth,
    SongBaselines,
    Unavailability,
    catalog_song_baselines,
    run_truth,
)
from sim.units import Ms

if TYPE_CHECKING:
    from sim.cvsa.params import Params
    from sim.cvsa.profile import Switches


def invariant_reducers(
    switches: Switches,
    params: Params,
    *,
    crossings: CrossingTable | None = None,
    tracked: npt.ArrayLike | None = None,
    songs: Mapping[int, Ms] | SongBaselines | None = None,
    unavailable: Unavailability | None = None,
    stale_slack_ms: Ms = DEFAULT_STALE_SLACK_MS,
    capture_bound_ms: Ms = DEFAULT_CAPTURE_BOUND_MS,
) -> list[Reducer]:
    """Every invariant monitor, configured from the run's numbers (the cap) and switches (the
    fallback and the bulk tick's marking), the catalogue's songs, the milestone ground truth
    (``tracked``: which crossings the design promises to capture) and the videos'
    availability."""
    return [
        WindowCapInvariant(params.window_cap),
        NoScheduleBeforeCreation(switches.fallback_bare_window_start),
        LifecycleInvariants(bulk_marks_processing=not switches.bulk_aids_as_ids_bug),
        StaleSongs(
            songs if songs is not None else {}, slack_ms=stale_slack_ms, unavailable=unavailable
        ),
        MilestoneCapture(
            crossings if crossings is not None else NoCrossings(),
            bound_ms=capture_bound_ms,
            tracked=tracked,
        ),
    ]


def cvsa_invariant_reducers(switches: Switches, params: Params, truth: RunTruth) -> list[Reducer]:
    """:func:`invariant_reducers` for a CVSA model run, from the world's :class:`RunTruth`
    (:func:`run_truth`, built once per run)."""
    return invariant_reducers(
        switches,
        params,
        crossings=truth.crossings,
        tracked=truth.tracked,
        songs=truth.songs,
        unavailable=truth.unavailable,
    )


__all__ = [
    "EXAMPLES",
    "CrossingTable",
    "LifecycleInvariants",
    "MilestoneCapture",
    "NoScheduleBeforeCreation",
    "RunTruth",
    "SongBaselines",
    "StaleSongs",
    "Unavailability",
    "WindowCapInvariant",
    "catalog_song_baselines",
    "cvsa_invariant_reducers",
    "invariant_reducers",
    "run_truth",
]
