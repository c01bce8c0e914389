"""The schedule and snapshot stores in SQL, written once for SQLite and PostgreSQL.

:class:`SqlStore` holds every query of the two store ports (:mod:`sim.ports`); the dialect
adapters (:mod:`sim.backends.sqlite`, :mod:`sim.backends.postgres`) supply the connection, four
primitives (fetch rows, run, run many, a transaction) and the few spellings that differ. Queries
use sqlite3's "qmark" parameter style; the PostgreSQL adapter rewrites them into psycopg's
"format" style (:func:`sim.backends.postgres.to_format_style`).

Tables follow the deployed schema (reference §2.1-§2.6), reduced to the columns the scheduler
reads, with two deliberate changes, both so that every backend returns the same values:

* instants are ``bigint`` epoch milliseconds, not ``timestamptz`` (microseconds in PostgreSQL,
  text in SQLite): the event log records ms, and a round trip through either must be exact;
* ``started_at_5min_utc`` is computed in the window-count query instead of being a generated
  column (SQLite and PostgreSQL spell generated columns differently; the GROUP BY is the same).

``latest_video_snapshot`` is maintained by :meth:`SqlStore.insert_snapshot` itself: no deployed
code writes it (reference §2.3, Q1), and the simulator resolves that the way the memory store
does, as "the snapshot with the latest time".

Bridging: every port method is one asyncio coroutine (all its statements, one transaction where
the deployed code has one), called from trio through trio-asyncio once per call and shielded, so
a cancelled run never leaves a transaction half done (same rule as :mod:`sim.backends.redis`).
"""

from __future__ import annotations

import abc
import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import trio
import trio_asyncio

from sim.cvsa.params import MilestoneLadder
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.ports import ACTIVE_STATUSES, DueOrder, EtaInputs, EtaRow, ScheduleRow, Snapshot
from sim.units import Ms

S = TypeVar("S", bound="SqlStore")
P = ParamSpec("P")
R = TypeVar("R")

Row = tuple[Any, ...]

OWNER_TABLE = "sim_owner"
"""One row, :data:`OWNER_MARKER`: sim created the tables beside it (the ownership check)."""
OWNER_MARKER = "sim schedule and snapshot store"
TABLES = (
    "snapshot_schedule",
    "video_snapshot",
    "latest_video_snapshot",
    "eta",
    "songs",
    "bilibili_metadata",
    # Seed 001's job and runs tables and SQLite's executor lock (sim.backends.sql_jobs).
    "scheduled_job",
    "scheduled_job_run",
    "scheduler_lock",
    OWNER_TABLE,
)
"""Every table sim creates (what ``reset`` drops when it does not own the whole place)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS bilibili_metadata (
    aid BIGINT PRIMARY KEY,
    published_at BIGINT NOT NULL,
    status INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS songs (
    aid BIGINT PRIMARY KEY,
    published_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS video_snapshot (
    aid BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    views BIGINT NOT NULL,
    PRIMARY KEY (aid, created_at)
);
CREATE TABLE IF NOT EXISTS latest_video_snapshot (
    aid BIGINT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    views BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS eta (
    aid BIGINT PRIMARY KEY,
    eta {real} NOT NULL,
    speed {real} NOT NULL,
    current_views BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshot_schedule (
    id {id_column},
    aid BIGINT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    started_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshot_schedule_aid_status_type
    ON snapshot_schedule (aid, status, type);
CREATE INDEX IF NOT EXISTS snapshot_schedule_status_type_started
    ON snapshot_schedule (status, type, started_at, id);
CREATE INDEX IF NOT EXISTS snapshot_schedule_status_started
    ON snapshot_schedule (status, started_at);
CREATE TABLE IF NOT EXISTS sim_owner (marker TEXT PRIMARY KEY);
"""
"""The tables (reference §2), as ``;``-separated statements; the dialect fills in the
floating-point type and the id column."""

_SCHEDULE_COLUMNS = "id, aid, type, status, started_at, created_at"
_ACTIVE = "(" + ", ".join(f"'{status.value}'" for status in ACTIVE_STATUSES) + ")"
"""``('pending', 'processing')``: the statuses of an active row, as an SQL list."""
_PENDING = f"'{ScheduleStatus.PENDING.value}'"
_PROCESSING = f"'{ScheduleStatus.PROCESSING.value}'"
# The type and status columns hold the words of sim.cvsa.vocabulary (reference §2.1); rows are
# read back as its enum members. Parameters are passed as the plain words.
_NORMAL_FIRST = (
    f"CASE type WHEN '{ScheduleType.NORMAL.value}' THEN 0 "
    f"WHEN '{ScheduleType.ARCHIVE.value}' THEN 1 ELSE 2 END"
)
"""The bulk tick's order: normal rows, then archive, then the rest (reference §8.1)."""
_TYPE_OF: dict[str, ScheduleType] = {t.value: t for t in ScheduleType}
_STATUS_OF: dict[str, ScheduleStatus] = {s.value: s for s in ScheduleStatus}


def bridged(
    fn: Callable[Concatenate[S, P], Awaitable[R]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """Run the asyncio coroutine method ``fn`` from trio: one bridge per call, shielded. On a
    synchronous driver (``needs_asyncio`` false: stdlib sqlite3) the coroutine never suspends
    and is awaited directly, with no event loop in between."""

    async def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        async def call() -> R:
            async with self._session():
                return await fn(self, *args, **kwargs)

        if not self.needs_asyncio:
            return await call()
        with trio.CancelScope(shield=True):
            result = await trio_asyncio.aio_as_trio(call)()
        # Honour a cancellation between calls (the end of a `sim load` step, a second Ctrl-C):
        # the call itself ran to its end, so a job stops between two statements, never inside
        # one. Without a cancellation this does not yield, so virtual runs are unchanged.
        await trio.lowlevel.checkpoint_if_cancelled()
        return cast("R", result)

    functools.update_wrapper(method, fn)  # name and docstring of the port method
    return method


def marks(n: int) -> str:
    """``?, ?, ?`` for ``n`` values (an ``IN`` list)."""
    return ", ".join("?" * n)


def _schedule(row: Row) -> ScheduleRow:
    return ScheduleRow(
        int(row[0]), int(row[1]), _TYPE_OF[row[2]], _STATUS_OF[row[3]], int(row[4]), int(row[5])
    )


def _ceil_window(t_ms: Ms, window_ms: Ms) -> Ms:
    return -(-t_ms // window_ms) * window_ms


class SqlStore(abc.ABC):
    """:class:`sim.ports.ScheduleStore` and :class:`sim.ports.SnapshotStore` in SQL.

    A dialect subclass implements :meth:`_all`, :meth:`_run`, :meth:`_many` and :meth:`_tx`
    (asyncio side) and sets the class attributes below.
    """

    needs_asyncio = True
    REAL = "REAL"
    ID_COLUMN = "INTEGER PRIMARY KEY AUTOINCREMENT"
    FOR_UPDATE = ""
    """Row lock of the deployed ``SELECT ... FOR UPDATE`` (PostgreSQL only; SQLite locks the
    database for the whole write transaction instead)."""

    # -- dialect primitives (asyncio side) ------------------------------------------------------
    @abc.abstractmethod
    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Execute; return every row of the result."""

    @abc.abstractmethod
    async def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute; return the number of rows changed."""

    @abc.abstractmethod
    async def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Execute once per row; return the number of rows changed in all."""

    @abc.abstractmethod
    def _tx(self) -> AbstractAsyncContextManager[None]:
        """A write transaction: commit on success, roll back on error."""

    def _session(self) -> AbstractAsyncContextManager[Any]:
        """What one port call holds for all its statements: a pooled connection, or a lock on
        a shared one. Concurrent calls (``sim load`` runs jobs concurrently) must never
        interleave their statements on one connection, or their transactions would nest."""
        return contextlib.nullcontext()

    def schema_statements(self) -> list[str]:
        ddl = SCHEMA.format(real=self.REAL, id_column=self.ID_COLUMN)
        return [s.strip() for s in ddl.split(";") if s.strip()]

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self._all(sql, params)
        return rows[0] if rows else None

    # -- ScheduleStore (reference §2.1, §5-§12) ----------------------------------------------
    @bridged
    async def insert_schedule(
        self, aid: int, type: ScheduleType, started_at_ms: Ms, created_at_ms: Ms
    ) -> int:
        row = await self._one(
            "INSERT INTO snapshot_schedule (aid, type, status, started_at, created_at) "
            f"VALUES (?, ?, {_PENDING}, ?, ?) RETURNING id",
            (aid, type.value, started_at_ms, created_at_ms),
        )
        assert row is not None
        return int(row[0])

    @bridged
    async def get_schedule(self, schedule_id: int) -> ScheduleRow | None:
        row = await self._one(
            f"SELECT {_SCHEDULE_COLUMNS} FROM snapshot_schedule WHERE id = ?", (schedule_id,)
        )
        return None if row is None else _schedule(row)

    @bridged
    async def has_active_schedule(self, aid: int, type: ScheduleType) -> bool:
        row = await self._one(
            "SELECT 1 FROM snapshot_schedule "
            f"WHERE aid = ? AND type = ? AND status IN {_ACTIVE} LIMIT 1",
            (aid, type.value),
        )
        return row is not None

    @bridged
    async def active_schedules(self, aid: int, type: ScheduleType) -> list[ScheduleRow]:
        rows = await self._all(
            f"SELECT {_SCHEDULE_COLUMNS} FROM snapshot_schedule "
            f"WHERE aid = ? AND type = ? AND status IN {_ACTIVE} ORDER BY id",
            (aid, type.value),
        )
        return [_schedule(r) for r in rows]

    @bridged
    async def move_schedule(self, schedule_id: int, started_at_ms: Ms) -> ScheduleRow | None:
        # The deployed transaction of scheduleSnapshot step 2 (reference §5): lock, read, update.
        async with self._tx():
            row = await self._one(
                f"SELECT {_SCHEDULE_COLUMNS} FROM snapshot_schedule WHERE id = ?{self.FOR_UPDATE}",
                (schedule_id,),
            )
            if row is None:
                return None
            await self._run(
                "UPDATE snapshot_schedule SET started_at = ? WHERE id = ?",
                (started_at_ms, schedule_id),
            )
        return _schedule(row)

    @bridged
    async def due_schedules(
        self,
        *,
        from_ms: Ms | None,
        to_ms: Ms,
        types: Sequence[ScheduleType],
        limit: int,
        order: DueOrder,
    ) -> list[ScheduleRow]:
        if not types or limit <= 0:
            return []
        where = f"status = {_PENDING} AND started_at <= ? AND type IN ({marks(len(types))})"
        params: list[Any] = [to_ms, *(t.value for t in types)]
        if from_ms is not None:
            where += " AND started_at >= ?"
            params.append(from_ms)
        by = "started_at, id"
        if order == "normal_first":  # the bulk tick's ORDER BY (reference §8.1)
            by = f"{_NORMAL_FIRST}, {by}"
        rows = await self._all(
            f"SELECT {_SCHEDULE_COLUMNS} FROM snapshot_schedule WHERE {where} "
            f"ORDER BY {by} LIMIT ?",
            (*params, limit),
        )
        return [_schedule(r) for r in rows]

    @bridged
    async def has_processing_schedule(self, aid: int) -> bool:
        row = await self._one(
            f"SELECT 1 FROM snapshot_schedule WHERE aid = ? AND status = {_PROCESSING} LIMIT 1",
            (aid,),
        )
        return row is not None

    @bridged
    async def set_schedule_status(
        self, ids: Sequence[int], status: ScheduleStatus
    ) -> list[ScheduleRow]:
        if not ids:
            return []
        async with self._tx():
            rows = await self._all(
                f"SELECT {_SCHEDULE_COLUMNS} FROM snapshot_schedule "
                f"WHERE id IN ({marks(len(ids))}){self.FOR_UPDATE}",
                tuple(ids),
            )
            await self._run(
                f"UPDATE snapshot_schedule SET status = ? WHERE id IN ({marks(len(ids))})",
                (status.value, *ids),
            )
        by_id = {int(r[0]): _schedule(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    @bridged
    async def delete_overdue_schedules(
        self, before_ms: Ms, kept_before_ms: Mapping[ScheduleType, Ms] | None = None
    ) -> list[ScheduleRow]:
        kept = sorted((kept_before_ms or {}).items())
        # A row of a kept type has its own bound (seed 003's deferred work).
        own = "".join("(type = ? AND started_at < ?) OR " for _ in kept)
        other = f"(type IS NULL OR type NOT IN ({marks(len(kept))}))" if kept else "TRUE"
        rows = await self._all(
            f"DELETE FROM snapshot_schedule WHERE status IN {_ACTIVE} AND ("
            f"{own}({other} AND started_at < ?)) RETURNING {_SCHEDULE_COLUMNS}",
            (
                *(v for t, bound in kept for v in (t.value, bound)),
                *(t.value for t, _ in kept),
                before_ms,
            ),
        )
        return sorted((_schedule(r) for r in rows), key=lambda r: r.id)

    @bridged
    async def pending_counts_by_window(
        self, from_ms: Ms, to_ms: Ms, window_ms: Ms
    ) -> dict[Ms, int]:
        # Windows w with from <= w < to hold exactly the rows with ceil(from) <= t < ceil(to).
        w_ms = int(window_ms)
        rows = await self._all(
            f"SELECT started_at - started_at % {w_ms} AS w, count(*) FROM snapshot_schedule "
            f"WHERE status = {_PENDING} AND started_at >= ? AND started_at < ? "
            "GROUP BY w ORDER BY w",
            (_ceil_window(from_ms, w_ms), _ceil_window(to_ms, w_ms)),
        )
        return {int(w): int(n) for w, n in rows}

    @bridged
    async def earliest_pending_ms(self, types: Sequence[ScheduleType]) -> Ms | None:
        if not types:
            return None
        # One min() per type, so each is one probe of the (status, type, started_at) index.
        rows = await self._all(
            " UNION ALL ".join(
                "SELECT min(started_at) FROM snapshot_schedule "
                f"WHERE status = {_PENDING} AND type = ?"
                for _ in types
            ),
            tuple(t.value for t in types),
        )
        present = [int(r[0]) for r in rows if r[0] is not None]
        return min(present) if present else None

    @bridged
    async def earliest_active_ms(self) -> Ms | None:
        row = await self._one(
            f"SELECT min(started_at) FROM snapshot_schedule WHERE status IN {_ACTIVE}"
        )
        return None if row is None or row[0] is None else int(row[0])

    @bridged
    async def aids_with_active_schedule(self, type: ScheduleType) -> set[int]:
        rows = await self._all(
            f"SELECT DISTINCT aid FROM snapshot_schedule WHERE type = ? AND status IN {_ACTIVE}",
            (type.value,),
        )
        return {int(r[0]) for r in rows}

    @bridged
    async def songs_without_active_schedule(self, type: ScheduleType) -> list[int]:
        # getVideosWithoutActiveSnapshotScheduleByType (reference §11.7, §13b).
        rows = await self._all(
            "SELECT s.aid FROM songs s WHERE NOT EXISTS (SELECT 1 FROM snapshot_schedule ss "
            f"WHERE ss.aid = s.aid AND ss.type = ? AND ss.status IN {_ACTIVE}) ORDER BY s.aid",
            (type.value,),
        )
        return [int(r[0]) for r in rows]

    @bridged
    async def non_songs_without_active_schedule(self, type: ScheduleType) -> list[int]:
        rows = await self._all(
            "SELECT b.aid FROM bilibili_metadata b "
            "WHERE NOT EXISTS (SELECT 1 FROM songs s WHERE s.aid = b.aid) "
            "AND NOT EXISTS (SELECT 1 FROM snapshot_schedule ss WHERE ss.aid = b.aid "
            f"AND ss.type = ? AND ss.status IN {_ACTIVE}) ORDER BY b.aid",
            (type.value,),
        )
        return [int(r[0]) for r in rows]

    # -- SnapshotStore (reference §2.2-§2.6, §11) -----------------------------------------------
    @bridged
    async def add_video(self, aid: int, published_ms: Ms) -> None:
        await self._run(
            "INSERT INTO bilibili_metadata (aid, published_at) VALUES (?, ?) "
            "ON CONFLICT (aid) DO NOTHING",
            (aid, published_ms),
        )

    _INSERT_SONG = (
        # songs.published_at: the video's when the video is known (the memory store keeps one
        # published column per video; every caller passes the same value anyway).
        "INSERT INTO songs (aid, published_at) VALUES (?, COALESCE("
        "(SELECT published_at FROM bilibili_metadata WHERE aid = ?), ?)) "
        "ON CONFLICT (aid) DO NOTHING"
    )

    @bridged
    async def add_song(self, aid: int, published_ms: Ms) -> bool:
        return await self._run(self._INSERT_SONG, (aid, aid, published_ms)) > 0

    @bridged
    async def load_catalog(
        self, aids: Sequence[int], published_ms: Sequence[Ms], is_song: Sequence[bool]
    ) -> None:
        rows = list(zip(aids, published_ms, strict=True))
        async with self._tx():
            await self._many(
                "INSERT INTO bilibili_metadata (aid, published_at) VALUES (?, ?) "
                "ON CONFLICT (aid) DO NOTHING",
                rows,
            )
            songs = [(a, a, p) for (a, p), song in zip(rows, is_song, strict=True) if song]
            await self._many(self._INSERT_SONG, songs)

    _INSERT_SNAPSHOT = (
        "INSERT INTO video_snapshot (aid, created_at, views) VALUES (?, ?, ?) "
        "ON CONFLICT (aid, created_at) DO NOTHING"
    )
    _UPSERT_LATEST = (
        "INSERT INTO latest_video_snapshot (aid, created_at, views) VALUES (?, ?, ?) "
        "ON CONFLICT (aid) DO UPDATE SET created_at = excluded.created_at, "
        "views = excluded.views WHERE excluded.created_at > latest_video_snapshot.created_at"
    )

    @bridged
    async def load_snapshots(
        self, aids: Sequence[int], times_ms: Sequence[Ms], views: Sequence[int]
    ) -> int:
        rows = list(zip(aids, times_ms, views, strict=True))
        if not rows:
            return 0
        async with self._tx():
            stored = await self._many(self._INSERT_SNAPSHOT, rows)
            # A duplicate (aid, t) has the time of a stored row, so "strictly later" skips it.
            await self._many(self._UPSERT_LATEST, rows)
        return stored

    @bridged
    async def song_aids(self) -> list[int]:
        return [int(r[0]) for r in await self._all("SELECT aid FROM songs ORDER BY aid")]

    @bridged
    async def video_aids(self) -> list[int]:
        rows = await self._all("SELECT aid FROM bilibili_metadata ORDER BY aid")
        return [int(r[0]) for r in rows]

    @bridged
    async def song_published_ms(self, aid: int) -> Ms | None:
        row = await self._one("SELECT published_at FROM songs WHERE aid = ?", (aid,))
        return None if row is None else int(row[0])

    @bridged
    async def video_status(self, aid: int) -> int:
        row = await self._one("SELECT status FROM bilibili_metadata WHERE aid = ?", (aid,))
        return 0 if row is None else int(row[0])

    @bridged
    async def set_video_status(self, aid: int, code: int) -> None:
        await self._run("UPDATE bilibili_metadata SET status = ? WHERE aid = ?", (code, aid))

    @bridged
    async def insert_snapshot(self, aid: int, t_ms: Ms, views: int) -> bool:
        async with self._tx():
            if not await self._run(self._INSERT_SNAPSHOT, (aid, t_ms, views)):
                return False  # unique (aid, t): idempotent writes (seeds 003/004)
            await self._run(self._UPSERT_LATEST, (aid, t_ms, views))
        return True

    @bridged
    async def latest_snapshot(self, aid: int) -> Snapshot | None:
        return await self._latest(aid)

    async def _latest(self, aid: int) -> Snapshot | None:
        row = await self._one(
            "SELECT created_at, views FROM latest_video_snapshot WHERE aid = ?", (aid,)
        )
        return None if row is None else Snapshot(int(row[0]), int(row[1]))

    async def closest_snapshot(self, aid: int, t_ms: Ms) -> Snapshot | None:
        return (await self._closest(aid, [t_ms]))[0]

    async def lookback_snapshots(
        self, aid: int, now_ms: Ms, backs_ms: Sequence[Ms]
    ) -> list[Snapshot | None]:
        return await self._closest(aid, [now_ms - back for back in backs_ms])

    @bridged
    async def eta_inputs(
        self, aids: Sequence[int], now_ms: Ms, backs_ms: Sequence[Ms], reader: int = 0
    ) -> EtaInputs:
        # The per-candidate statements, in one bridge: asked only on the virtual clock, where
        # nothing runs between them anyway (a load run keeps the deployed one call per query).
        times_ms = [now_ms - back for back in backs_ms]
        latest_ms: list[Ms | None] = []
        latest_views: list[int] = []
        lookbacks: list[Sequence[Snapshot | None]] = []
        for aid in aids:
            snap = await self._latest(aid)
            latest_ms.append(None if snap is None else snap.created_at_ms)
            latest_views.append(0 if snap is None else snap.views)
            lookbacks.append([] if snap is None else await self._closest_rows(aid, times_ms))
        return EtaInputs(latest_ms, latest_views, lookbacks, list(aids), 0)

    async def settle_eta_inputs(self, aids: Sequence[int], now_ms: Ms, reader: int) -> None:
        """No marks here: a table of them would cost a write per settled candidate, more than
        the two reads it saves (``SettledEtaInputs``); every aid is answered."""
        return None

    @bridged
    async def _closest(self, aid: int, times_ms: Sequence[Ms]) -> list[Snapshot | None]:
        return await self._closest_rows(aid, times_ms)

    async def _closest_rows(self, aid: int, times_ms: Sequence[Ms]) -> list[Snapshot | None]:
        if not times_ms:
            return []
        # findClosestSnapshot (reference §11.3) for every target in one round trip: per target,
        # the latest row at/before it and the earliest at/after it.
        parts, params = [], []
        for k, t in enumerate(times_ms):
            for side, op, direction in ((0, "<=", "DESC"), (1, ">=", "ASC")):
                parts.append(
                    f"SELECT {k} AS k, {side} AS side, created_at, views FROM "
                    f"(SELECT created_at, views FROM video_snapshot WHERE aid = ? AND "
                    f"created_at {op} ? ORDER BY created_at {direction} LIMIT 1) AS q{k}_{side}"
                )
                params += [aid, t]
        found: dict[tuple[int, int], Snapshot] = {}
        for k, side, t, v in await self._all(" UNION ALL ".join(parts), params):
            found[int(k), int(side)] = Snapshot(int(t), int(v))
        out: list[Snapshot | None] = []
        for k, t in enumerate(times_ms):
            before, after = found.get((k, 0)), found.get((k, 1))
            if before is None or after is None:
                out.append(before or after)
            else:  # a tie goes to the earlier row (§19.7)
                near = t - before.created_at_ms <= after.created_at_ms - t
                out.append(before if near else after)
        return out

    @bridged
    async def snapshot_before(self, aid: int, t_ms: Ms) -> Snapshot | None:
        row = await self._one(
            "SELECT created_at, views FROM video_snapshot WHERE aid = ? AND created_at <= ? "
            "ORDER BY created_at DESC LIMIT 1",
            (aid, t_ms),
        )
        return None if row is None else Snapshot(int(row[0]), int(row[1]))

    @bridged
    async def upsert_eta(self, row: EtaRow) -> None:
        await self._run(
            "INSERT INTO eta (aid, eta, speed, current_views, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (aid) DO UPDATE SET eta = excluded.eta, speed = excluded.speed, "
            "current_views = excluded.current_views, updated_at = excluded.updated_at",
            tuple(row),
        )

    @bridged
    async def get_eta(self, aid: int) -> EtaRow | None:
        row = await self._one(
            "SELECT aid, eta, speed, current_views, updated_at FROM eta WHERE aid = ?", (aid,)
        )
        if row is None:
            return None
        return EtaRow(int(row[0]), float(row[1]), float(row[2]), int(row[3]), int(row[4]))

    @bridged
    async def milestone_candidates(
        self, wide: bool, eta_below_h: float, ladder: MilestoneLadder
    ) -> list[int]:
        # getVideosNearMilestone (reference §11.1); the predicate is
        # sim.cvsa.milestones.milestone_candidate, spelled in SQL (the deployed query's
        # literals are the ladder's: 90000, 100000, 1000000, 60000).
        first, m = int(ladder.first), int(ladder.step)
        next_step = f"((l.views + {m - 1}) / {m} * {m})"
        near = (
            f"(l.views >= {first - int(ladder.near_first)} AND l.views < {first}) OR "
            f"(l.views >= {next_step} - {int(ladder.near_step)} AND l.views < {next_step}) OR "
            f"(e.eta IS NOT NULL AND e.eta < {float(eta_below_h)!r})"
        )
        if wide:
            near += (
                " OR (s.aid IS NOT NULL AND "
                f"((l.views >= {first - int(ladder.wide_near_first)} AND l.views < {first}) "
                f"OR l.views > {m}))"
            )
        rows = await self._all(
            "SELECT l.aid FROM latest_video_snapshot l "
            "LEFT JOIN songs s ON s.aid = l.aid LEFT JOIN eta e ON e.aid = l.aid "
            f"WHERE {near} ORDER BY l.aid"
        )
        return [int(r[0]) for r in rows]
