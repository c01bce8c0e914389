"""The store on a SQLite file (``--store sqlite:PATH``).

The queries are :class:`sim.backends.sql.SqlStore`'s and
:class:`sim.backends.sql_jobs.SqlJobTable`'s (seed 001's executor lock is a row here); this file
opens the connection and owns the file. Two drivers, one set of queries, the same event log
(tests/backends/test_sql_equivalence.py):

* ``sqlite3`` (virtual-clock runs, the default there): the stdlib module, called inline. A
  statement blocks the trio loop for microseconds, which costs nothing when time is virtual, and
  no thread is involved, so nothing can leak virtual time (libraries.md §9).
* ``aiosqlite`` (real-clock runs: ``--speed``, ``sim load``): each statement runs on aiosqlite's
  worker thread and answers through asyncio, reached through trio-asyncio, so other tasks keep
  running meanwhile, as beside a real database. Each port method costs one thread hop per
  statement (far more than the work itself, feasibility.md §3e); the engine waits for every
  answer before it runs anything else, so this driver gives the same log under a virtual clock
  too, only slower.

Durability: WAL with ``synchronous=NORMAL`` (feasibility.md §3e): a crash can lose the last
transactions but never corrupts the file; the simulator's runs are reproducible anyway.

Ownership: a file sim created holds a ``sim_owner`` table. Opening refuses a file with tables
of somebody else's and a file holding an earlier run's rows, unless ``reset``; ``reset`` drops
sim's tables (by name) and nothing else. ``sqlite::memory:`` gives a private in-memory database.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import aiosqlite
import trio
import trio_asyncio

from sim.backends.errors import BackendError
from sim.backends.sql import OWNER_MARKER, OWNER_TABLE, TABLES, Row
from sim.backends.sql_jobs import SqlJobTable

Driver = Literal["sqlite3", "aiosqlite"]


class SqliteStore(SqlJobTable):
    """The schedule and snapshot stores and seed 001's job table in the SQLite database at
    ``path``, through ``driver`` (see the module docstring)."""

    def __init__(
        self, path: str | Path, *, reset: bool = False, driver: Driver = "sqlite3"
    ) -> None:
        if driver not in ("sqlite3", "aiosqlite"):
            raise ValueError(f"driver must be 'sqlite3' or 'aiosqlite' (got {driver!r})")
        self.path = str(path)
        self.reset = reset
        self.driver: Driver = driver
        self.needs_asyncio = driver == "aiosqlite"
        self._db: aiosqlite.Connection | None = None
        self._sync: sqlite3.Connection | None = None
        self._lock: asyncio.Lock | None = None
        """aiosqlite: one connection, one port call at a time (SQLite has one writer anyway)."""

    async def _lifecycle(self, step: Callable[[], Awaitable[None]]) -> None:
        with trio.CancelScope(shield=True):
            if self.needs_asyncio:
                await trio_asyncio.aio_as_trio(step)()
            else:
                await step()

    @property
    def url(self) -> str:
        return f"sqlite:{self.path}"

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r}, driver={self.driver!r})"

    # -- lifecycle ------------------------------------------------------------------------
    async def open(self) -> None:
        """Open (creating the file and tables when absent), check ownership. Raises
        :class:`BackendError` for a file that cannot be opened or is not sim's to use."""
        try:
            await self._lifecycle(self._aio_open)
        except BaseException as exc:
            with trio.CancelScope(shield=True):
                await self.close()
            if isinstance(exc, sqlite3.Error):
                reason = " ".join(str(exc).split()) or type(exc).__name__
                parent = Path(self.path).parent
                raise BackendError(
                    f"cannot open the SQLite database {self.path} ({reason}); check that "
                    f"{parent} exists and is writable and that the file is a SQLite database"
                ) from None
            raise

    async def close(self) -> None:
        """Close the connection; safe after a failed open and when called twice."""
        if self._db is not None or self._sync is not None:
            await self._lifecycle(self._aio_close)

    async def drop(self) -> None:
        """Drop sim's tables (what ``reset`` drops); for tests and benchmarks."""
        await self._lifecycle(self._aio_drop)

    async def _aio_open(self) -> None:
        # A file that cannot be opened, or is no database, fails here, in this thread: aiosqlite's
        # worker thread would report a failed connect to the event loop after stopping, possibly
        # once the loop has closed (an exception in a stray thread instead of a clear message).
        probe = sqlite3.connect(self.path)
        try:
            probe.execute("PRAGMA schema_version")
        finally:
            probe.close()
        # isolation_level=None: autocommit; transactions are explicit (BEGIN IMMEDIATE).
        if self.needs_asyncio:
            self._lock = asyncio.Lock()
            self._db = await aiosqlite.connect(self.path, isolation_level=None)
        else:
            self._sync = sqlite3.connect(self.path, isolation_level=None)
        await self._all("PRAGMA journal_mode=WAL")
        await self._run("PRAGMA synchronous=NORMAL")
        if self.reset:
            await self._aio_drop()
        else:
            await self._check_ownership()
        async with self._tx():
            for statement in self.schema_statements():
                await self._run(statement)
            await self._run(
                f"INSERT INTO {OWNER_TABLE} (marker) VALUES (?) ON CONFLICT DO NOTHING",
                (OWNER_MARKER,),
            )

    async def _check_ownership(self) -> None:
        names = {r[0] for r in await self._all("SELECT name FROM sqlite_master WHERE type='table'")}
        names.discard("sqlite_sequence")
        if not names:
            return
        marker = None
        if OWNER_TABLE in names:
            marker = await self._one(f"SELECT marker FROM {OWNER_TABLE} LIMIT 1")
        if marker is None or marker[0] != OWNER_MARKER:
            raise BackendError(
                f"the SQLite database {self.path} holds tables sim did not create "
                f"({', '.join(sorted(names))}); refusing to touch it: use another file, or "
                f"pass --reset to drop sim's table names in it"
            )
        row = await self._one("SELECT count(*) FROM snapshot_schedule")
        videos = await self._one("SELECT count(*) FROM bilibili_metadata")
        if (row and row[0]) or (videos and videos[0]):
            raise BackendError(
                f"the SQLite database {self.path} holds an earlier run "
                f"({row[0] if row else 0} schedules, {videos[0] if videos else 0} videos); "
                f"pass --reset to start afresh"
            )

    async def _aio_drop(self) -> None:
        if self._db is None and self._sync is None:
            return
        async with self._tx():
            for table in TABLES:
                await self._run(f"DROP TABLE IF EXISTS {table}")

    async def _aio_close(self) -> None:
        db, self._db = self._db, None
        sync, self._sync = self._sync, None
        if db is not None:
            await db.close()
        if sync is not None:
            sync.close()

    # -- primitives (asyncio side; inline with sqlite3) ------------------------------------------
    # aiosqlite: one thread hop per statement (execute_fetchall; rows changed are read from the
    # connection's total_changes, which needs no hop), never a separate hop to close a cursor.
    def _conn(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError(f"{self!r} is not open")
        return self._db

    def _sync_conn(self) -> sqlite3.Connection:
        if self._sync is None:
            raise RuntimeError(f"{self!r} is not open")
        return self._sync

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        if self._sync is not None:
            return self._sync.execute(sql, tuple(params)).fetchall()
        return [tuple(r) for r in await self._conn().execute_fetchall(sql, tuple(params))]

    async def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        if self._sync is not None:
            return max(self._sync.execute(sql, tuple(params)).rowcount, 0)
        db = self._conn()
        before = db.total_changes
        await db.execute_fetchall(sql, tuple(params))
        return db.total_changes - before

    async def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        if not rows:
            return 0
        if self._sync is not None:
            before = self._sync.total_changes
            self._sync.executemany(sql, rows)
            return self._sync.total_changes - before
        db = self._conn()
        before = db.total_changes
        await db.executemany(sql, [tuple(r) for r in rows])
        return db.total_changes - before

    def _session(self) -> AbstractAsyncContextManager[Any]:
        return self._lock if self._lock is not None else contextlib.nullcontext()

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[None]:
        await self._run("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            await self._run("ROLLBACK")
            raise
        await self._run("COMMIT")
