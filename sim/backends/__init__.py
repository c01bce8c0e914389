"""Backends: adapters behind the ports of :mod:`sim.ports`, one file each (httpx transports), and
the one place that chooses them (style-anchors R4).

A backend is named by a spec string, on the command line (``--store``, ``--counter``) or in a
scenario's ``[backends]`` table:

* store: ``memory`` (default) | ``reference`` | ``sqlite:PATH`` |
  ``postgresql://USER@HOST:PORT/DB``
* counter: ``memory`` (default) | ``reference`` | ``fakeredis`` | ``redis://HOST:PORT/DB``

``memory`` is the optimised in-memory store and counter (:mod:`sim.backends.memory`, compiled by
mypyc); ``reference`` is the same in plain Python (:mod:`sim.backends.reference`: dicts, sorted
lists, ``bisect``), to rerun a result on code that reads like the ports. The two names are
chosen independently, as for every backend, so that a difference can be pinned on one of them:
``--store reference --counter reference`` is the whole reference run.

Adapters are built without I/O; :func:`open_backends` connects them (inside the run, under
trio-asyncio when an asyncio driver is involved), checks that they hold no foreign data, and
closes them however the run ends.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

from sim.backends.errors import BackendError, redact
from sim.backends.memory import MemoryStore, MemoryWindowCounter
from sim.backends.memory.jobs import MemoryJobTable
from sim.backends.memory.marks import MemoryMessageMarks
from sim.backends.reference import ReferenceStore, ReferenceWindowCounter
from sim.ports import Counter, JobTable, MessageMarks, Store
from sim.units import Ms

Reservation = Literal["loop", "lua"]
SqliteDriver = Literal["auto", "sqlite3", "aiosqlite"]


class Lifecycle(Protocol):
    """What an adapter that does I/O offers besides its port (the in-memory ones have nothing to
    open: :func:`open_backends` opens and closes the adapters that have these)."""

    needs_asyncio: bool
    """Its driver is asyncio-only (aiosqlite, psycopg, redis.asyncio): run it via trio-asyncio."""

    async def open(self) -> None:
        """Connect, create the schema or keys when absent, refuse foreign data (unless reset)."""

    async def close(self) -> None:
        """Disconnect; safe to call after a failed open."""


@dataclass(frozen=True)
class BackendSpec:
    """Which backends a run uses."""

    store: str = "memory"
    counter: str = "memory"
    reset: bool = False
    """Drop what a previous run left in the schema / under the key prefix (never foreign data
    unless this is set)."""
    schema: str = "sim"
    """PostgreSQL schema that holds the tables."""
    key_prefix: str = "sim:"
    """Prefix of every Redis key (the hash is ``<prefix>cvsa:snapshot_window_counts``)."""
    reservation: Reservation = "loop"
    """Window reservation on Redis: the deployed client-side loop (one round trip per probe) or
    one Lua script."""
    sqlite_driver: SqliteDriver = "auto"
    """``auto``: stdlib sqlite3 on the virtual clock, aiosqlite on the real one."""

    @property
    def is_memory(self) -> bool:
        return self.store == "memory" and self.counter == "memory"


STORE_CHOICES = "memory, reference, sqlite:PATH or postgresql://USER@HOST:PORT/DB"
COUNTER_CHOICES = "memory, reference, fakeredis or redis://HOST:PORT/DB"


def store_problem(store: str) -> str | None:
    """Why ``store`` names no store (an unknown scheme, an empty path), or None."""
    schemes = ("sqlite:", "postgresql://", "postgres://")
    if store in ("memory", "reference") or any(
        store.startswith(s) and len(store) > len(s) for s in schemes
    ):
        return None
    return f"unknown store {store!r}: use {STORE_CHOICES}"


def counter_problem(counter: str) -> str | None:
    """Why ``counter`` names no window counter, or None."""
    schemes = ("redis://", "rediss://", "unix://")
    if counter in ("memory", "reference", "fakeredis") or any(
        counter.startswith(s) and len(counter) > len(s) for s in schemes
    ):
        return None
    return f"unknown counter {counter!r}: use {COUNTER_CHOICES}"


def make_store(
    spec: BackendSpec, *, real_clock: bool = False, snapshot_reach_ms: Ms | None = None
) -> Store:
    """The schedule-and-snapshot store named by ``spec.store`` (not yet connected). SQLite is
    driven by stdlib sqlite3 inline under the virtual clock and by aiosqlite on the real clock
    (:mod:`sim.backends.sqlite`). The memory store keeps only the snapshots within
    ``snapshot_reach_ms`` of a video's latest (None: all of them); the others keep every row,
    as the deployed tables do."""
    s = spec.store
    if s == "memory":
        return MemoryStore(snapshot_reach_ms)
    if s == "reference":
        return ReferenceStore()
    if s.startswith("sqlite:"):
        from sim.backends.sqlite import SqliteStore

        driver: SqliteDriver = spec.sqlite_driver
        if driver == "auto":
            driver = "aiosqlite" if real_clock else "sqlite3"
        return SqliteStore(s.removeprefix("sqlite:"), reset=spec.reset, driver=driver)
    if s.startswith(("postgresql://", "postgres://")):
        from sim.backends.postgres import PostgresStore

        return PostgresStore(s, schema=spec.schema, reset=spec.reset)
    raise BackendError(store_problem(s) or f"unknown store {s!r}")


def make_counter(spec: BackendSpec) -> Counter:
    """The window counter named by ``spec.counter`` (not yet connected)."""
    c = spec.counter
    if c == "memory":
        return MemoryWindowCounter()
    if c == "reference":
        return ReferenceWindowCounter()
    if c == "fakeredis" or c.startswith(("redis://", "rediss://", "unix://")):
        from sim.backends.redis import RedisWindowCounter

        return RedisWindowCounter(
            c, key_prefix=spec.key_prefix, reservation=spec.reservation, reset=spec.reset
        )
    raise BackendError(counter_problem(c) or f"unknown counter {c!r}")


def make_marks(counter: Counter) -> MessageMarks:
    """Seed 004's processed-message markers beside ``counter``: on its Redis when it is one
    (:mod:`sim.backends.redis_marks`), else in memory (issue 28)."""
    redis_module = sys.modules.get("sim.backends.redis")
    if redis_module is not None and isinstance(counter, redis_module.RedisWindowCounter):
        from sim.backends.redis_marks import RedisMessageMarks

        return RedisMessageMarks(counter)
    return MemoryMessageMarks()


def make_job_table(store: Store) -> JobTable:
    """Seed 001's job table beside ``store``: in its database when it is an SQL store (the
    tables and the executor lock live there, :mod:`sim.backends.sql_jobs`), else in memory."""
    if hasattr(store, "start_run"):
        return cast(JobTable, store)
    return MemoryJobTable()


@dataclass
class Backends:
    """A run's store, counter and job table (the job table defaults to the store's)."""

    store: Store
    counter: Counter
    jobs: JobTable | None = None
    marks: MessageMarks | None = None
    """Seed 004's message markers (defaults to the counter's Redis, :func:`make_marks`)."""

    def __post_init__(self) -> None:
        if self.jobs is None:
            self.jobs = make_job_table(self.store)
        if self.marks is None:
            self.marks = make_marks(self.counter)

    @property
    def message_marks(self) -> MessageMarks:
        assert self.marks is not None  # set by __post_init__
        return self.marks

    @property
    def job_table(self) -> JobTable:
        assert self.jobs is not None  # set by __post_init__
        return self.jobs

    @property
    def needs_asyncio(self) -> bool:
        return bool(
            getattr(self.store, "needs_asyncio", False)
            or getattr(self.counter, "needs_asyncio", False)
        )


def make_backends(
    spec: BackendSpec, *, real_clock: bool = False, snapshot_reach_ms: Ms | None = None
) -> Backends:
    """The adapters ``spec`` names, for a run on the virtual clock or (``real_clock``) a scaled
    real one; ``snapshot_reach_ms`` as :func:`make_store` takes it."""
    store = make_store(spec, real_clock=real_clock, snapshot_reach_ms=snapshot_reach_ms)
    return Backends(store, make_counter(spec))


@asynccontextmanager
async def open_backends(backends: Backends) -> AsyncIterator[Backends]:
    """Connect both adapters for the duration of the block (under trio-asyncio if needed)."""
    if backends.needs_asyncio:
        import trio_asyncio

        try:
            async with trio_asyncio.open_loop(), _opened(backends):
                yield backends
        except BaseExceptionGroup as group:
            # The loop's nursery wraps whatever the block raises in (nested) groups; a single
            # error comes out as itself, as it does without asyncio (a BackendError stays one
            # line, an engine error keeps its type).
            leaf = _only_leaf(group)
            if leaf is None:
                raise
            raise leaf from None
    else:
        async with _opened(backends):
            yield backends


def _only_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside ``group`` and its nested groups, or None if there are more."""
    if len(group.exceptions) != 1:
        return None
    (inner,) = group.exceptions
    return _only_leaf(inner) if isinstance(inner, BaseExceptionGroup) else inner


@asynccontextmanager
async def _opened(backends: Backends) -> AsyncIterator[None]:
    opened: list[Any] = []
    try:
        # The markers after the counter: on Redis they use its connection.
        adapters: tuple[Any, ...] = (backends.store, backends.counter, backends.marks)
        for adapter in adapters:
            if hasattr(adapter, "open"):
                await adapter.open()
                opened.append(adapter)
        yield
    finally:
        for adapter in reversed(opened):
            await adapter.close()


__all__ = [
    "BackendError",
    "BackendSpec",
    "Backends",
    "Counter",
    "Lifecycle",
    "MemoryJobTable",
    "MemoryMessageMarks",
    "MemoryStore",
    "MemoryWindowCounter",
    "ReferenceStore",
    "ReferenceWindowCounter",
    "Store",
    "counter_problem",
    "make_backends",
    "make_counter",
    "make_job_table",
    "make_marks",
    "make_store",
    "open_backends",
    "redact",
    "store_problem",
]
