"""The contract every backend must pass (trio's ``check_*_stream`` idea, style-anchors R5).

Each check is an ``async`` function taking a fresh, empty port instance; ``CHECKS`` lists them by
port. ``tests/contracts/`` runs every check against every backend: memory, SQLite, fakeredis, and
PostgreSQL and Redis when reachable. A backend that fails one is a bug, however convenient.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sim.cvsa.job_table import JobSpec, JobState, RunRow
from sim.cvsa.params import DEFAULT_PARAMS
from sim.cvsa.vocabulary import RunStatus, RunTrigger, ScheduleStatus, ScheduleType
from sim.ports import (
    EtaRow,
    JobTable,
    LockManager,
    MessageMarks,
    Reserved,
    ScheduleRow,
    ScheduleStore,
    Snapshot,
    SnapshotStore,
    WindowCounter,
)
from sim.units import MINUTE_MS, SECOND_MS, WINDOW_MS

NEW, MILESTONE, NORMAL, ARCHIVE = ScheduleType
PENDING, PROCESSING, COMPLETED, FAILED, NO_PROXY, BILI_ERROR, _DELETED = ScheduleStatus
CANDIDATE_ETA_H = DEFAULT_PARAMS.milestone_candidate_eta_h
LADDER = DEFAULT_PARAMS.milestone_ladder
RUNNING, SUCCEEDED, RUN_FAILED, SKIPPED = RunStatus
SCHEDULE, MANUAL, SKIP = RunTrigger

T0 = 1_924_992_000_000  # 2031-01-01T00:00:00Z, a window boundary


class ContractError(AssertionError):
    """A backend broke the port contract."""


def expect(actual: Any, wanted: Any, what: str) -> None:
    if actual != wanted:
        raise ContractError(f"{what}: expected {wanted!r}, got {actual!r}")


# -- schedule store -------------------------------------------------------------------------
async def schedule_insert_and_get(s: ScheduleStore) -> None:
    a = await s.insert_schedule(7, NORMAL, T0 + 5, T0)
    b = await s.insert_schedule(7, MILESTONE, T0 + 9, T0 + 1)
    expect(b, a + 1, "ids count up by one")
    row = await s.get_schedule(a)
    expect(row, ScheduleRow(a, 7, NORMAL, PENDING, T0 + 5, T0), "row")
    assert row is not None
    words = (type(row.type), type(row.status))
    expect(words, (ScheduleType, ScheduleStatus), "type and status as the vocabulary's members")
    expect(await s.get_schedule(b + 100), None, "missing row")


async def schedule_active_checks(s: ScheduleStore) -> None:
    a = await s.insert_schedule(1, MILESTONE, T0 + 300, T0)
    b = await s.insert_schedule(1, MILESTONE, T0 + 100, T0)
    await s.insert_schedule(1, NORMAL, T0 + 200, T0)
    expect(await s.has_active_schedule(1, MILESTONE), True, "pending is active")
    expect(await s.has_active_schedule(1, NEW), False, "other type")
    expect(await s.has_active_schedule(2, MILESTONE), False, "other aid")
    active = await s.active_schedules(1, MILESTONE)
    expect([(r.id, r.status) for r in active], [(a, PENDING), (b, PENDING)], "by id")
    await s.set_schedule_status([a], PROCESSING)
    active = await s.active_schedules(1, MILESTONE)
    expect([r.status for r in active], [PROCESSING, PENDING], "processing rows are active")
    await s.set_schedule_status([a], COMPLETED)
    expect([r.id for r in await s.active_schedules(1, MILESTONE)], [b], "completed: not active")
    await s.set_schedule_status([b], FAILED)
    expect(await s.has_active_schedule(1, MILESTONE), False, "all terminal")
    expect(await s.active_schedules(1, MILESTONE), [], "no active row")
    expect(await s.aids_with_active_schedule(NORMAL), {1}, "aids with active normal")
    expect(await s.aids_with_active_schedule(MILESTONE), set(), "aids with active milestone")


async def store_dispatcher_anti_joins(s: Any) -> None:
    for aid in (1, 2, 3, 4):
        await s.add_video(aid, T0)
    await s.add_song(2, T0)
    await s.add_song(4, T0)
    await s.insert_schedule(2, NORMAL, T0, T0)
    archive = await s.insert_schedule(3, ARCHIVE, T0, T0)
    expect(list(await s.songs_without_active_schedule(NORMAL)), [4], "songs without active normal")
    expect(list(await s.songs_without_active_schedule(ARCHIVE)), [2, 4], "songs without archive")
    expect(list(await s.non_songs_without_active_schedule(ARCHIVE)), [1], "non-songs")
    await s.set_schedule_status([archive], COMPLETED)
    expect(list(await s.non_songs_without_active_schedule(ARCHIVE)), [1, 3], "after completion")
    await s.add_song(5, T0)  # a song first, its bilibili_metadata row second
    await s.add_video(5, T0)
    expect(
        list(await s.non_songs_without_active_schedule(ARCHIVE)), [1, 3], "a song is no non-song"
    )
    expect(list(await s.songs_without_active_schedule(ARCHIVE)), [2, 4, 5], "songs again")
    await s.insert_schedule(1, NORMAL, T0, T0)  # a question no dispatcher asks: still answered
    expect(list(await s.non_songs_without_active_schedule(NORMAL)), [3], "non-songs without normal")


async def schedule_move(s: ScheduleStore) -> None:
    a = await s.insert_schedule(4, MILESTONE, T0 + 10 * MINUTE_MS, T0)
    before = await s.move_schedule(a, T0 + MINUTE_MS)
    expect(before, ScheduleRow(a, 4, MILESTONE, PENDING, T0 + 10 * MINUTE_MS, T0), "old row")
    row = await s.get_schedule(a)
    expect(row and row.started_at_ms, T0 + MINUTE_MS, "moved")
    due = await s.due_schedules(
        from_ms=None, to_ms=T0 + MINUTE_MS, types=[MILESTONE], limit=10, order="started_at"
    )
    expect([r.id for r in due], [a], "moved row is due at its new time")
    counts = await s.pending_counts_by_window(T0, T0 + 3600 * SECOND_MS, WINDOW_MS)
    expect(counts, {T0: 1}, "window counts follow the move")
    expect(await s.move_schedule(a + 99, T0), None, "moving a missing row")


async def schedule_due_bounds_and_order(s: ScheduleStore) -> None:
    ids: dict[str, int] = {}
    for name, type, t in [
        ("m1", MILESTONE, T0 + 1000),
        ("n1", NEW, T0 + 1000),
        ("m0", MILESTONE, T0),
        ("a1", ARCHIVE, T0 + 500),
        ("x", NORMAL, T0 + 500),
        ("late", MILESTONE, T0 + 1001),
        ("early", MILESTONE, T0 - 60_001),
    ]:
        ids[name] = await s.insert_schedule(len(ids), type, t, T0 - 100_000)
    due = await s.due_schedules(
        from_ms=T0 - 60_000,
        to_ms=T0 + 1000,
        types=[MILESTONE, NEW],
        limit=10,
        order="started_at",
    )
    expect([r.id for r in due], [ids["m0"], ids["m1"], ids["n1"]], "inclusive bounds, order")
    due = await s.due_schedules(
        from_ms=None,
        to_ms=T0 + 1000,
        types=[MILESTONE, NEW, ARCHIVE],
        limit=2,
        order="started_at",
    )
    expect([r.id for r in due], [ids["early"], ids["m0"]], "no lower bound, limit")
    due = await s.due_schedules(
        from_ms=T0 - 1,
        to_ms=T0 + 2000,
        types=[NORMAL, ARCHIVE],
        limit=10,
        order="normal_first",
    )
    expect([r.id for r in due], [ids["x"], ids["a1"]], "normal first, then archive")
    await s.set_schedule_status([ids["m0"]], PROCESSING)
    due = await s.due_schedules(
        from_ms=None, to_ms=T0 + 1000, types=[MILESTONE], limit=10, order="started_at"
    )
    expect([r.id for r in due], [ids["early"], ids["m1"]], "only pending rows are due")


async def schedule_processing_any_type(s: ScheduleStore) -> None:
    a = await s.insert_schedule(5, NORMAL, T0, T0)
    expect(await s.has_processing_schedule(5), False, "pending is not processing")
    await s.set_schedule_status([a], PROCESSING)
    expect(await s.has_processing_schedule(5), True, "any type counts")
    await s.set_schedule_status([a], COMPLETED)
    expect(await s.has_processing_schedule(5), False, "after completion")


async def schedule_set_status_returns_before(s: ScheduleStore) -> None:
    a = await s.insert_schedule(6, NORMAL, T0, T0)
    b = await s.insert_schedule(6, ARCHIVE, T0, T0)
    before = await s.set_schedule_status([b, a, 999], PROCESSING)
    expect([(r.id, r.status) for r in before], [(b, PENDING), (a, PENDING)], "rows before")
    before = await s.set_schedule_status([a], COMPLETED)
    expect([r.status for r in before], [PROCESSING], "second transition")


async def schedule_delete_overdue(s: ScheduleStore) -> None:
    old_p = await s.insert_schedule(1, NORMAL, T0 - 3 * MINUTE_MS, T0)
    old_x = await s.insert_schedule(2, NEW, T0 - 5 * MINUTE_MS, T0)
    edge = await s.insert_schedule(3, NEW, T0 - 2 * MINUTE_MS, T0)
    done = await s.insert_schedule(4, NEW, T0 - 9 * MINUTE_MS, T0)
    fresh = await s.insert_schedule(5, NEW, T0, T0)
    await s.set_schedule_status([old_x], PROCESSING)
    await s.set_schedule_status([done], COMPLETED)
    gone = await s.delete_overdue_schedules(T0 - 2 * MINUTE_MS)
    expect([r.id for r in gone], [old_p, old_x], "strictly before, active only, id order")
    expect(await s.get_schedule(old_p), None, "deleted")
    expect((await s.get_schedule(edge)) is not None, True, "started_at == bound survives")
    expect((await s.get_schedule(done)) is not None, True, "terminal rows are never deleted")
    expect((await s.get_schedule(fresh)) is not None, True, "future rows survive")
    expect(await s.has_processing_schedule(2), False, "deleted processing row")
    expect(await s.earliest_active_ms(), T0 - 2 * MINUTE_MS, "earliest active after delete")


async def schedule_delete_overdue_keeps_deferred(s: ScheduleStore) -> None:
    """Seed 003's deferred work: pending rows of a kept type have their own, earlier bound."""
    normal = await s.insert_schedule(1, NORMAL, T0 - 3 * MINUTE_MS, T0)
    old_normal = await s.insert_schedule(2, NORMAL, T0 - 9 * MINUTE_MS, T0)
    new = await s.insert_schedule(3, NEW, T0 - 3 * MINUTE_MS, T0)
    busy = await s.insert_schedule(4, NORMAL, T0 - 3 * MINUTE_MS, T0)
    archive = await s.insert_schedule(5, ARCHIVE, T0 - 3 * MINUTE_MS, T0)
    old_busy = await s.insert_schedule(6, NORMAL, T0 - 7 * MINUTE_MS, T0)
    busy_new = await s.insert_schedule(7, NEW, T0 - 3 * MINUTE_MS, T0)
    await s.set_schedule_status([busy, old_busy, busy_new], PROCESSING)
    gone = await s.delete_overdue_schedules(
        T0 - 2 * MINUTE_MS, {NORMAL: T0 - 5 * MINUTE_MS, ARCHIVE: T0 - 5 * MINUTE_MS}
    )
    expect(
        [r.id for r in gone],
        [old_normal, new, old_busy, busy_new],
        "kept types by their own bound, pending or processing; other types as before",
    )
    expect((await s.get_schedule(normal)) is not None, True, "a kept pending row survives")
    expect((await s.get_schedule(busy)) is not None, True, "a kept processing row survives")
    expect((await s.get_schedule(archive)) is not None, True, "each kept type survives")
    again = await s.delete_overdue_schedules(T0 - 2 * MINUTE_MS)
    expect([r.id for r in again], [normal, busy, archive], "a survivor is still found later")


async def schedule_window_counts(s: ScheduleStore) -> None:
    await s.insert_schedule(1, NORMAL, T0 + 1, T0)
    await s.insert_schedule(2, NORMAL, T0 + WINDOW_MS - 1, T0)
    await s.insert_schedule(3, ARCHIVE, T0 + WINDOW_MS, T0)
    c = await s.insert_schedule(4, NEW, T0 + 2 * WINDOW_MS, T0)
    await s.insert_schedule(5, NEW, T0 + 3 * WINDOW_MS, T0)
    await s.set_schedule_status([c], PROCESSING)
    counts = await s.pending_counts_by_window(T0, T0 + 3 * WINDOW_MS, WINDOW_MS)
    expect(counts, {T0: 2, T0 + WINDOW_MS: 1}, "pending per window in [from, to)")
    expect(await s.earliest_pending_ms([ARCHIVE, NEW]), T0 + WINDOW_MS, "earliest pending")
    expect(await s.earliest_pending_ms([MILESTONE]), None, "none pending")


# -- snapshot store ---------------------------------------------------------------------------
async def snapshot_latest_closest_before(s: SnapshotStore) -> None:
    expect(await s.latest_snapshot(9), None, "no snapshots")
    expect(await s.closest_snapshot(9, T0), None, "no snapshots")
    for dt, views in [(0, 100), (60_000, 160), (180_000, 400)]:
        expect(await s.insert_snapshot(9, T0 + dt, views), True, "insert")
    expect(await s.latest_snapshot(9), Snapshot(T0 + 180_000, 400), "latest")
    expect(await s.snapshot_before(9, T0 + 59_999), Snapshot(T0, 100), "before")
    expect(await s.snapshot_before(9, T0 + 60_000), Snapshot(T0 + 60_000, 160), "at == before")
    expect(await s.snapshot_before(9, T0 - 1), None, "nothing before")
    expect(await s.closest_snapshot(9, T0 + 100_000), Snapshot(T0 + 60_000, 160), "closest")
    expect(await s.closest_snapshot(9, T0 + 120_000), Snapshot(T0 + 60_000, 160), "tie: earlier")
    expect(await s.closest_snapshot(9, T0 - 5), Snapshot(T0, 100), "before the first")
    expect(await s.closest_snapshot(9, T0 + 10**9), Snapshot(T0 + 180_000, 400), "after last")
    many = await s.lookback_snapshots(9, T0 + 180_000, (60_000, 180_005, 1_000, 1_000))
    expect(
        list(many),
        [Snapshot(T0 + 60_000, 160), Snapshot(T0, 100)] + [Snapshot(T0 + 180_000, 400)] * 2,
        "lookbacks: the closest snapshot to now - back, for each back",
    )
    expect(list(await s.lookback_snapshots(9, T0 + 200_000, (80_000,))), [many[0]], "asked again")
    expect(list(await s.lookback_snapshots(10, T0, (0,))), [None], "a video without snapshots")


async def snapshot_eta_inputs(s: SnapshotStore) -> None:
    backs = (180_000, 1_200_000, 3_600_000)

    async def one_by_one(aids: list[int], now: int) -> tuple[list[Any], list[Any]]:
        latest = [await s.latest_snapshot(aid) for aid in aids]
        lookbacks = [
            [] if snap is None else list(await s.lookback_snapshots(aid, now, backs))
            for aid, snap in zip(aids, latest, strict=True)
        ]
        return latest, lookbacks

    async def check(aids: list[int], now: int, what: str) -> None:
        got = await s.eta_inputs(aids, now, backs)
        latest = [
            None if t is None else Snapshot(t, v)
            for t, v in zip(got.latest_ms, got.latest_views, strict=True)
        ]
        answer = (latest, [list(lb) for lb in got.lookbacks])
        expect(answer, await one_by_one(aids, now), what)

    for dt, views in [(0, 10), (600_000, 70), (2_400_000, 300), (3_000_000, 380)]:
        await s.insert_snapshot(7, T0 + dt, views)
    await s.insert_snapshot(8, T0 + 5, 1)
    got = await s.eta_inputs([8, 99, 7], T0 + 3_600_000, backs)
    expect(got.latest_ms, [T0 + 5, None, T0 + 3_000_000], "latest: times")
    expect(got.latest_views, [1, 0, 380], "latest: views (0 where there is none)")
    expect(list(got.lookbacks[1]), [], "no lookbacks read without a latest snapshot")
    expect(
        list(got.lookbacks[2]),
        [Snapshot(T0 + 3_000_000, 380), Snapshot(T0 + 2_400_000, 300), Snapshot(T0, 10)],
        "the closest snapshot to now - back, for each back",
    )
    await check([8, 99, 7], T0 + 3_600_000, "as the per-aid calls, asked again")
    await check([7, 7], T0 + 3_900_000, "five minutes later, an aid twice")
    await s.insert_snapshot(7, T0 + 3_700_000, 420)  # appended
    await check([7, 8], T0 + 4_200_000, "after an appended snapshot")
    await s.insert_snapshot(7, T0 + 1_000_000, 90)  # before the last
    await check([7], T0 + 4_200_000, "after a snapshot inserted before the last")
    empty = await s.eta_inputs([], T0, backs)
    expect(tuple(empty), ([], [], [], [], 0), "no aids")


async def snapshot_settled_eta_inputs(s: SnapshotStore) -> None:
    """A store may leave settled aids out of their reader's ``eta_inputs`` (``SettledEtaInputs``),
    never one whose answer changed, never from another reader, and it says how many it left
    out. Whether it leaves any out is its own affair (the SQL stores keep no marks)."""
    backs = (180_000, 1_200_000, 3_600_000)
    for dt, views in [(0, 10), (600_000, 70), (2_400_000, 300), (3_000_000, 380)]:
        await s.insert_snapshot(7, T0 + dt, views)
    await s.insert_snapshot(8, T0 + 5, 1)
    asked = [7, 8, 99]
    now = T0 + 3_600_000
    full = await s.eta_inputs(asked, now, backs, 1)
    expect((full.aids, full.settled), (asked, 0), "nothing settled yet: every aid answered")
    await s.settle_eta_inputs([7, 8], now, 1)

    async def check(now: int, reader: int, may_leave_out: set[int], what: str) -> list[int]:
        got = await s.eta_inputs(asked, now, backs, reader)
        plain = await s.eta_inputs(asked, now, backs)  # reader 0: every aid
        expect(got.aids, [a for a in asked if a in got.aids], f"{what}: answered in order")
        left_out = set(asked) - set(got.aids)
        expect(left_out <= may_leave_out, True, f"{what}: left out only settled aids")
        expect(got.settled, len(left_out), f"{what}: says how many it left out")
        for i, aid in enumerate(got.aids):
            j = asked.index(aid)
            expect(
                (got.latest_ms[i], got.latest_views[i], list(got.lookbacks[i])),
                (plain.latest_ms[j], plain.latest_views[j], list(plain.lookbacks[j])),
                f"{what}: aid {aid} answered as without marks",
            )
        return sorted(left_out)

    await check(now, 1, {7, 8}, "the settling reader")
    expect(await check(now, 2, set(), "another reader"), [], "another reader: every aid")
    await s.insert_snapshot(7, T0 + 3_650_000, 400)  # a new latest snapshot: 7's inputs moved
    await check(now + 60_000, 1, {8}, "after 7's new snapshot")
    await s.settle_eta_inputs([7], now + 60_000, 1)
    # Hours later 7's lookbacks all find its latest snapshot (another answer); 8 has one
    # snapshot, which every lookback finds whenever it is asked (the same answer).
    await check(now + 10 * 3_600_000, 1, {8}, "hours later: 7's lookbacks moved")


async def snapshot_unique(s: SnapshotStore) -> None:
    expect(await s.insert_snapshot(1, T0 + 10, 5), True, "first")
    expect(await s.insert_snapshot(1, T0 + 10, 6), False, "duplicate (aid, t) is refused")
    expect(await s.insert_snapshot(1, T0 + 5, 4), True, "an earlier instant is fine")
    expect(await s.latest_snapshot(1), Snapshot(T0 + 10, 5), "duplicate did not overwrite")
    expect(await s.snapshot_before(1, T0 + 9), Snapshot(T0 + 5, 4), "kept in time order")


async def snapshot_catalog(s: SnapshotStore) -> None:
    await s.add_video(30, T0 - 1000)
    await s.add_video(10, T0 - 2000)
    await s.add_video(10, T0)  # already there: unchanged
    expect(await s.add_song(10, T0 - 2000), True, "new song")
    expect(await s.add_song(10, T0 - 2000), False, "already a song")
    expect(await s.video_aids(), [10, 30], "videos ascending")
    expect(await s.song_aids(), [10], "songs")
    expect(await s.song_published_ms(10), T0 - 2000, "published")
    expect(await s.song_published_ms(30), None, "not a song")
    expect(await s.video_status(30), 0, "status defaults to 0")
    await s.set_video_status(30, -404)
    expect(await s.video_status(30), -404, "status set")
    expect(await s.video_status(77), 0, "missing video reads 0")


async def snapshot_milestone_candidates(s: SnapshotStore) -> None:
    await s.add_video(1, T0)
    await s.add_video(2, T0)
    await s.add_video(3, T0)
    await s.add_song(3, T0)
    await s.insert_snapshot(1, T0, 95_000)  # [90k, 100k): near 100k (set B)
    await s.insert_snapshot(2, T0, 50_000)  # not near anything
    await s.insert_snapshot(3, T0, 1_500_000)  # a song above 1M: set A only
    expect(await s.milestone_candidates(False, CANDIDATE_ETA_H, LADDER), [1], "set B")
    expect(await s.milestone_candidates(True, CANDIDATE_ETA_H, LADDER), [1, 3], "sets A and B")
    await s.upsert_eta(EtaRow(2, 2000.0, 25.0, 50_000, T0))  # eta < 2300 h: set C
    expect(await s.milestone_candidates(False, CANDIDATE_ETA_H, LADDER), [1, 2], "set C joins")
    await s.insert_snapshot(1, T0 + 1, 100_200)  # crossed 100k, far from 1M
    await s.upsert_eta(EtaRow(2, 9000.0, 5.0, 50_000, T0 + 1))
    expect(
        await s.milestone_candidates(False, CANDIDATE_ETA_H, LADDER),
        [],
        "latest views and eta decide",
    )
    # Another ladder (near band 600k below every million): 1.5M is now near 2M.
    other = LADDER._replace(near_step=600_000)
    expect(await s.milestone_candidates(False, CANDIDATE_ETA_H, other), [3], "another ladder")


async def snapshot_bulk_loads(s: SnapshotStore) -> None:
    await s.load_catalog([5, 3, 9], [T0 - 3, T0 - 2, T0 - 1], [False, True, False])
    expect(await s.video_aids(), [3, 5, 9], "videos loaded")
    expect(await s.song_aids(), [3], "songs loaded")
    expect(await s.song_published_ms(3), T0 - 2, "song published")
    stored = await s.load_snapshots([5, 5, 3, 5], [T0, T0 + 9, T0, T0], [1, 2, 3, 4])
    expect(stored, 3, "a duplicate (aid, t) in a bulk load is not stored")
    expect(await s.latest_snapshot(5), Snapshot(T0 + 9, 2), "loaded in time order")
    expect(await s.snapshot_before(5, T0 + 8), Snapshot(T0, 1), "first kept")


async def snapshot_eta(s: SnapshotStore) -> None:
    expect(await s.get_eta(1), None, "no eta")
    await s.upsert_eta(EtaRow(1, 12.5, 40.0, 99_500, T0))
    await s.upsert_eta(EtaRow(1, 2.0, 250.0, 99_500, T0 + 1))
    expect(await s.get_eta(1), EtaRow(1, 2.0, 250.0, 99_500, T0 + 1), "upsert replaces")


# -- window counter -------------------------------------------------------------------------
async def counter_incr(c: WindowCounter) -> None:
    expect(await c.incr(T0, 1), 1, "absent field reads 0")
    expect(await c.incr(T0, 1), 2, "increments")
    expect(await c.incr(T0 + WINDOW_MS, 1), 1, "separate field")
    expect(await c.incr(T0 + WINDOW_MS, -1), 0, "undo")
    expect(await c.get_all(), {T0: 2, T0 + WINDOW_MS: 0}, "zero fields stay (§19.3)")
    expect(await c.incr(T0 + 2 * WINDOW_MS, -1), -1, "counts may go negative")


async def counter_reserve(c: WindowCounter) -> None:
    await c.incr(T0, 3)
    await c.incr(T0 + WINDOW_MS, 4)
    await c.incr(T0 + 3 * WINDOW_MS, -2)
    got = await c.reserve(T0, WINDOW_MS, 10, 3)
    expect(got, Reserved(T0 + 2 * WINDOW_MS, 1, 3), "first window with room")
    expect(
        await c.get_all(),
        {T0: 3, T0 + WINDOW_MS: 4, T0 + 2 * WINDOW_MS: 1, T0 + 3 * WINDOW_MS: -2},
        "full windows restored by the undo",
    )
    got = await c.reserve(T0 + 3 * WINDOW_MS, -WINDOW_MS, 4, 1)
    expect(got, Reserved(T0 + 3 * WINDOW_MS, -1, 1), "a negative count is room")
    got = await c.reserve(T0 + 10 * WINDOW_MS, WINDOW_MS, 2, 0)
    expect(got, Reserved(None, -1, 2), "nothing fits")
    counts = await c.get_all()
    expect(
        (counts.get(T0 + 10 * WINDOW_MS), counts.get(T0 + 11 * WINDOW_MS)),
        (0, 0),
        "probed absent fields are left at 0 (§19.3)",
    )
    await c.incr(T0 + 20 * WINDOW_MS, 2)
    got = await c.reserve(T0 + 20 * WINDOW_MS, WINDOW_MS, 2, 3)
    expect(got, Reserved(T0 + 20 * WINDOW_MS, 3, 1), "a count equal to the cap fits")


async def counter_replace_and_clear(c: WindowCounter) -> None:
    await c.incr(T0, 5)
    await c.replace_all({T0 + WINDOW_MS: 3, T0 + 2 * WINDOW_MS: 1})
    expect(await c.get_all(), {T0 + WINDOW_MS: 3, T0 + 2 * WINDOW_MS: 1}, "replaced")
    await c.clear()
    expect(await c.get_all(), {}, "cleared")
    expect(await c.incr(T0 + WINDOW_MS, 1), 1, "after clear")


# -- dispatcher locks ----------------------------------------------------------------------
async def lock_take_check_release(c: LockManager) -> None:
    ttl = 30 * MINUTE_MS
    expect(await c.is_locked("dispatchRegularSnapshots", T0), False, "absent lock")
    expect(await c.acquire_lock("dispatchRegularSnapshots", T0, ttl), True, "taken")
    expect(await c.is_locked("dispatchRegularSnapshots", T0 + ttl - 1), True, "held until TTL")
    expect(await c.acquire_lock("dispatchRegularSnapshots", T0 + 1, ttl), False, "held: NX")
    expect(await c.is_locked("dispatchArchiveSnapshots", T0), False, "locks are by name")
    await c.release_lock("dispatchRegularSnapshots")
    expect(await c.is_locked("dispatchRegularSnapshots", T0 + 1), False, "released")
    await c.release_lock("dispatchRegularSnapshots")  # releasing a free lock is harmless
    expect(await c.acquire_lock("dispatchRegularSnapshots", T0 + 2, ttl), True, "taken again")


async def lock_expires_in_run_time(c: LockManager) -> None:
    ttl = 30 * MINUTE_MS
    await c.acquire_lock("dispatchArchiveSnapshots", T0, ttl)
    expect(await c.is_locked("dispatchArchiveSnapshots", T0 + ttl), False, "expired at T0+TTL")
    expect(await c.acquire_lock("dispatchArchiveSnapshots", T0 + ttl, ttl), True, "re-taken")
    expect(await c.is_locked("dispatchArchiveSnapshots", T0 + 2 * ttl - 1), True, "new TTL")
    await c.release_lock("dispatchArchiveSnapshots")


# -- seed 004's processed-message markers --------------------------------------------------
async def marks_expire_in_run_time(m: MessageMarks) -> None:
    key, day = "msg:schedule:7", 24 * 60 * MINUTE_MS
    expect(await m.is_marked(key, T0), False, "never marked")
    await m.mark(key, T0 + day)
    expect(await m.is_marked(key, T0 + day - 1), True, "marked until its expiry")
    expect(await m.is_marked(key, T0 + day), False, "expired at T0 + TTL")
    expect(await m.is_marked("msg:schedule:7,8", T0), False, "markers are by key")
    await m.mark(key, T0 + 2 * day)
    expect(await m.is_marked(key, T0 + day), True, "marked again: the new expiry")


# -- seed 001's job table and executor lock ------------------------------------------------
TICK = JobSpec("tick", SECOND_MS, None, True)
NIGHTLY = JobSpec("nightly", None, "30 3 * * *", True)


def _one_period_on(job: JobState) -> int:
    return job.next_run_at_ms + SECOND_MS


def _slot(run_id: int) -> str:
    return f"manual:{run_id}"


async def jobs_register_once(t: JobTable) -> None:
    expect(await t.register_job(TICK, T0), True, "first registration inserts")
    expect(await t.register_job(NIGHTLY, T0 + 99), True, "a second job")
    expect(await t.register_job(TICK._replace(every_ms=5), T0 + 7), False, "registered again")
    expect(
        await t.jobs(),
        [
            JobState("tick", SECOND_MS, None, True, T0, None, None),
            JobState("nightly", None, "30 3 * * *", True, T0 + 99, None, None),
        ],
        "rows in registration order, the first registration's values kept",
    )


async def jobs_run_lifecycle(t: JobTable) -> None:
    await t.register_job(TICK, T0)
    run = await t.start_run("tick", SCHEDULE, T0, T0 + 3, "a", lambda i: "1924992000")
    assert run is not None
    (job,) = await t.jobs()
    expect(job.running_run_id, run, "the job is running")
    again = await t.start_run("tick", SCHEDULE, T0, T0 + 4, "a", lambda i: "x")
    expect(again, None, "no re-entry")
    expect(
        await t.runs("tick"),
        [RunRow(run, "tick", SCHEDULE, "1924992000", RUNNING, T0, T0 + 3, None, "a", "")],
        "one running run",
    )
    (row,) = await t.runs("tick")
    expect((type(row.trigger), type(row.status)), (RunTrigger, RunStatus), "vocabulary members")
    expect(await t.finish_run(run, SUCCEEDED, T0 + 50, T0 + 1050, "", 50), True, "finished")
    (job,) = await t.jobs()
    expect((job.running_run_id, job.next_run_at_ms), (None, T0 + 1050), "next run set")
    expect(await t.finish_run(run, RUN_FAILED, T0 + 60, T0, "late", 50), False, "finished once")
    (row,) = await t.runs("tick")
    expect((row.status, row.finished_at_ms), (SUCCEEDED, T0 + 50), "the first end stands")


async def jobs_request_merges(t: JobTable) -> None:
    await t.register_job(TICK, T0)
    expect(await t.request_run("tick", T0 + 1), True, "queued")
    expect(await t.request_run("tick", T0 + 2), False, "merged with the pending request")
    (job,) = await t.jobs()
    expect((job.run_requested_at_ms, job.next_run_at_ms), (T0 + 1, T0), "first request kept")
    run = await t.start_run("tick", MANUAL, T0, T0 + 3, "a", _slot)
    assert run is not None
    (job,) = await t.jobs()
    expect(job.run_requested_at_ms, None, "a started run clears the request")
    expect(await t.request_run("tick", T0 + 4), False, "merged while running")
    (row,) = await t.runs("tick")
    expect((row.trigger, row.slot), (MANUAL, f"manual:{run}"), "slot from the run id")


async def jobs_skip_and_prune(t: JobTable) -> None:
    await t.register_job(TICK, T0)
    skipped = await t.skip_run("tick", T0 + 1, 3, _one_period_on)
    assert skipped is not None
    expect(skipped[1:], (T0, T0 + SECOND_MS), "moved from the time it read, by its rule")
    (job,) = await t.jobs()
    expect(job.next_run_at_ms, T0 + SECOND_MS, "skip moves the next run")
    (row,) = await t.runs("tick")
    expect(
        (row.id, row.trigger, row.status, row.planned_ms),
        (skipped.run_id, SKIP, SKIPPED, T0),
        "a skip history row, planned at the skipped time",
    )
    ids = []
    for i in range(4):
        run = await t.start_run("tick", SCHEDULE, T0, T0 + 10 * i, "a", str)
        assert run is not None
        ids.append(run)
        await t.finish_run(run, SUCCEEDED, T0 + 10 * i + 1, T0, "", 3)
    expect([r.id for r in await t.runs("tick")], ids[1:], "the newest 3 runs kept")
    running = await t.start_run("tick", SCHEDULE, T0, T0 + 50, "a", str)
    assert running is not None
    expect(await t.skip_run("tick", T0 + 51, 3, _one_period_on), None, "no skip while running")
    (job,) = await t.jobs()
    expect((job.next_run_at_ms, len(await t.runs("tick"))), (T0, 4), "nothing written")


async def jobs_interrupted_runs(t: JobTable) -> None:
    await t.register_job(TICK, T0)
    await t.register_job(NIGHTLY, T0 + 5)
    a = await t.start_run("tick", SCHEDULE, T0, T0 + 1, "old", str)
    b = await t.start_run("nightly", SCHEDULE, T0 + 5, T0 + 6, "old", str)
    assert a is not None
    assert b is not None
    lost = await t.interrupt_runs(T0 + 100, "gone")
    expect(
        [(r.id, r.status, r.holder) for r in lost],
        [(a, RUNNING, "old"), (b, RUNNING, "old")],
        "the running runs, as they were",
    )
    expect([j.running_run_id for j in await t.jobs()], [None, None], "jobs free again")
    expect([j.next_run_at_ms for j in await t.jobs()], [T0, T0 + 5], "next runs untouched")
    (row,) = await t.runs("tick")
    expect((row.status, row.error, row.finished_at_ms), (RUN_FAILED, "gone", T0 + 100), "failed")
    expect(await t.finish_run(a, SUCCEEDED, T0 + 200, T0, "", 50), False, "too late to finish")
    expect(await t.interrupt_runs(T0 + 300, "gone"), [], "nothing left running")


async def jobs_one_executor(t: JobTable) -> None:
    expect(await t.try_lock("a"), True, "free: taken")
    expect(await t.try_lock("a"), True, "held by the caller")
    expect(await t.try_lock("b"), False, "held by another")
    await t.drop_lock("b")  # not b's to lose
    expect(await t.try_lock("b"), False, "still a's")
    await t.drop_lock("a")
    expect(await t.try_lock("b"), True, "a died: b takes over")
    expect(await t.try_lock("a"), False, "b holds it now")
    await t.drop_lock("b")


CHECKS: dict[str, list[Callable[[Any], Awaitable[None]]]] = {
    "schedule_store": [
        schedule_insert_and_get,
        schedule_active_checks,
        schedule_move,
        schedule_due_bounds_and_order,
        schedule_processing_any_type,
        schedule_set_status_returns_before,
        schedule_delete_overdue,
        schedule_delete_overdue_keeps_deferred,
        schedule_window_counts,
    ],
    "snapshot_store": [
        snapshot_latest_closest_before,
        snapshot_eta_inputs,
        snapshot_settled_eta_inputs,
        snapshot_unique,
        snapshot_catalog,
        snapshot_bulk_loads,
        snapshot_eta,
        snapshot_milestone_candidates,
    ],
    "window_counter": [counter_incr, counter_reserve, counter_replace_and_clear],
    "store": [store_dispatcher_anti_joins],
    "locks": [lock_take_check_release, lock_expires_in_run_time],
    "marks": [marks_expire_in_run_time],
    "job_table": [
        jobs_register_once,
        jobs_run_lifecycle,
        jobs_request_merges,
        jobs_skip_and_prune,
        jobs_interrupted_runs,
        jobs_one_executor,
    ],
}
