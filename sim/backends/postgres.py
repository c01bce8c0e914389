"""The store on PostgreSQL, through psycopg 3 (``--store postgresql://USER@HOST:PORT/DB``).

The queries are :class:`sim.backends.sql.SqlStore`'s and
:class:`sim.backends.sql_jobs.SqlJobTable`'s; this file owns the connections, the schema and
seed 001's executor lock (a ``pg_try_advisory_lock`` on a dedicated connection per holder).
psycopg's async connection runs on asyncio, so it is reached through trio-asyncio (libraries.md
§8); the engine waits for each answer, so virtual runs stay deterministic and give the memory
store's event log.

Schema: every table lives in its own PostgreSQL schema (``[backends] schema``, default ``sim``),
never in ``public``, with a ``sim_owner`` table marking it as sim's. Opening

* takes a session advisory lock on the schema name, so two runs can never share one schema
  (the second is refused with a clear message; the lock goes with the connection);
* refuses a schema sim did not create, and one holding an earlier run, unless ``reset``;
* with ``reset``: drops the schema when it is sim's, or only sim's table names in it when not.

Connect to ``127.0.0.1`` rather than ``localhost`` (see :mod:`sim.backends.redis`: a host name
costs a resolver thread per connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
import zlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import psycopg
import psycopg.waiting
import trio
import trio_asyncio
from psycopg import sql as pgsql

from sim.backends.errors import BackendError, redact
from sim.backends.sql import OWNER_MARKER, OWNER_TABLE, TABLES, Row, bridged
from sim.backends.sql_jobs import SqlJobTable

# trio-asyncio replaces asyncio.get_running_loop when it is imported; psycopg.waiting binds the
# function by name when *it* is imported, so if psycopg came first it keeps the original, which
# does not see trio-asyncio's loop ("no running event loop" on connect). Rebind it to the
# patched one, whatever the import order was.
psycopg.waiting.get_running_loop = asyncio.get_running_loop  # type: ignore[attr-defined]

CONNECT_TIMEOUT_S = 5
POOL_SIZE = 10
"""Connections a run may open besides the owner's (postgres.js' default ``max``); concurrent
port calls (``sim load``) beyond this wait for one to come back."""
SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
EXECUTOR_LOCK_CLASS = 1970107507
"""The first key of seed 001's executor lock: the ``classid`` its "排查" section looks up in
``pg_locks`` (the two-key form, ``objsubid = 2``)."""


def start_hint(url: str) -> str:
    """How to start a PostgreSQL server where ``url`` points (its port)."""
    try:
        port = urlsplit(url).port or 5432
    except ValueError:
        port = 5432
    return (
        f"start one with `sudo pg_ctlcluster 15 main start` (Debian) or "
        f"`docker run -d -p {port}:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`"
    )


def server_answer(reason: str) -> str | None:
    """What the server answered, from a failed connection's message (libpq puts the server's
    ``FATAL:`` after the address), or None when no server answered (refused, timed out)."""
    m = re.search(r"\b(?:FATAL|ERROR):\s+(.*)", reason)
    if m:
        return m.group(1).strip()
    if "no password supplied" in reason:  # the server asked for one
        return "a password is required"
    return None


def refusal_hint(answer: str, url: str) -> str:
    """What to do about the server's ``answer``: create what is missing, or fix the URL."""
    try:
        parts = urlsplit(url)
        user, db = parts.username or "USER", parts.path.lstrip("/") or "DB"
    except ValueError:
        user, db = "USER", "DB"
    if re.search(r'role ".*" does not exist', answer):
        return (
            f"create the role (`createuser {user}`, or CREATE ROLE {user} LOGIN as a superuser) "
            "or name an existing one in the URL"
        )
    if re.search(r'database ".*" does not exist', answer):
        return f"create it (`createdb -O {user} {db}`) or name an existing database in the URL"
    if "password" in answer:
        return "give the right password in the URL (postgresql://USER:PASSWORD@HOST:PORT/DB)"
    if "pg_hba.conf" in answer:
        return "allow this host, user and database in the server's pg_hba.conf, or use another"
    if "permission denied" in answer:
        return f"grant {user} CONNECT on the database (GRANT CONNECT ON DATABASE {db} TO {user})"
    return "fix the URL, or the server's settings"


def to_format_style(statement: str) -> str:
    """A statement in sqlite3's "qmark" parameter style rewritten in psycopg's "format" style:
    each ``?`` parameter marker becomes ``%s``, and a literal ``%`` (the modulo operator) is
    doubled, as psycopg requires. The shared queries hold no literal question marks."""
    return statement.replace("%", "%%").replace("?", "%s")


def executor_lock_key(schema: str) -> int:
    """The second key of the executor lock: ``schema``'s CRC-32 as a signed int4, so runs in
    different schemas (a test's, a benchmark's) never contend for one lock."""
    key = zlib.crc32(schema.encode())
    return key - (1 << 32) if key >= 1 << 31 else key


class PostgresStore(SqlJobTable):
    """The schedule and snapshot stores and seed 001's job table in schema ``schema`` of the
    database at ``url``."""

    REAL = "DOUBLE PRECISION"  # PostgreSQL's REAL is 4 bytes: ETAs would not round-trip
    ID_COLUMN = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    FOR_UPDATE = " FOR UPDATE"
    LOCK_SCHEMA = ""  # the executor lock is an advisory lock here, not a row

    def __init__(self, url: str, *, schema: str = "sim", reset: bool = False) -> None:
        if not SCHEMA_NAME.match(schema):
            raise BackendError(
                f"PostgreSQL schema must match {SCHEMA_NAME.pattern} (got {schema!r})"
            )
        if schema == "public":
            raise BackendError("sim keeps its tables out of the public schema: choose another")
        self.spec = url
        self.schema = schema
        self.reset = reset
        self._conn: psycopg.AsyncConnection[Any] | None = None
        """The owner connection: holds the schema lock; serves the lifecycle statements."""
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._slots: asyncio.Semaphore | None = None
        self._current: contextvars.ContextVar[psycopg.AsyncConnection[Any] | None] = (
            contextvars.ContextVar("sim_pg_connection", default=None)
        )
        self._statements: dict[str, bytes] = {}
        self._lockers: dict[str, psycopg.AsyncConnection[Any]] = {}
        """Seed 001's executor lock: the dedicated connection of each holder that tried it."""
        self._locking: asyncio.Lock | None = None
        """One lock call at a time: two must never open two connections for one holder."""
        self._t_open = trio_asyncio.aio_as_trio(self._aio_open)
        self._t_close = trio_asyncio.aio_as_trio(self._aio_close)
        self._t_drop = trio_asyncio.aio_as_trio(self._aio_drop)

    @property
    def url(self) -> str:
        return redact(self.spec)

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r}, schema={self.schema!r})"

    # -- lifecycle ------------------------------------------------------------------------
    async def open(self) -> None:
        """Connect, lock the schema, check ownership, create the tables. Raises
        :class:`BackendError` for an unreachable server or a schema that is not sim's to use."""
        try:
            with trio.CancelScope(shield=True):
                await self._t_open()
        except BaseException as exc:
            with trio.CancelScope(shield=True):
                await self.close()
            if isinstance(exc, psycopg.OperationalError):
                reason = " ".join(str(exc).split()) or type(exc).__name__
                answer = server_answer(reason)
                if answer is not None:  # reachable: the server said no, starting it won't help
                    raise BackendError(
                        f"PostgreSQL at {self.url} refused the connection: {answer}; "
                        f"{refusal_hint(answer, self.spec)}"
                    ) from None
                raise BackendError(
                    f"PostgreSQL is not reachable at {self.url} ({reason}); {start_hint(self.spec)}"
                ) from None
            if isinstance(exc, psycopg.Error):
                reason = " ".join(str(exc).split()) or type(exc).__name__
                raise BackendError(f"PostgreSQL at {self.url} refused sim ({reason})") from None
            raise

    async def close(self) -> None:
        """Disconnect (which releases the schema lock); safe after a failed open. Data stays."""
        if self._conn is not None:
            with trio.CancelScope(shield=True):
                await self._t_close()

    async def drop(self) -> None:
        """Drop the schema and everything in it; for tests and benchmarks."""
        with trio.CancelScope(shield=True):
            await self._t_drop()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        return await psycopg.AsyncConnection.connect(
            self.spec, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        )

    async def _aio_open(self) -> None:
        self._slots = asyncio.Semaphore(POOL_SIZE)
        self._locking = asyncio.Lock()
        self._conn = await self._connect()
        conn = self._conn
        got = await (
            await conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (self._lock_name,))
        ).fetchone()
        if not (got and got[0]):
            raise BackendError(
                f"PostgreSQL at {self.url}: another sim run is using schema {self.schema!r}; "
                f"wait for it, or give this run another schema ([backends] schema)"
            )
        if self.reset:
            await self._drop_for_reset()
        else:
            await self._check_ownership()
        schema = pgsql.Identifier(self.schema)
        async with conn.transaction():
            await conn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
            await conn.execute(pgsql.SQL("SET search_path TO {}").format(schema))
            for statement in self.schema_statements():
                await conn.execute(statement.encode())
            await conn.execute(
                f"INSERT INTO {OWNER_TABLE} (marker) VALUES (%s) ON CONFLICT DO NOTHING",
                (OWNER_MARKER,),
            )

    @property
    def _lock_name(self) -> str:
        return f"sim schema {self.schema}"

    async def _tables(self) -> set[str]:
        rows = await self._all(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
            (self.schema,),
        )
        return {r[0] for r in rows}

    async def _check_ownership(self) -> None:
        names = await self._tables()
        if not names:
            return
        q = pgsql.Identifier(self.schema)
        marker = None
        if OWNER_TABLE in names:
            cur = await self._connection().execute(
                pgsql.SQL("SELECT marker FROM {}.{} LIMIT 1").format(
                    q, pgsql.Identifier(OWNER_TABLE)
                )
            )
            marker = await cur.fetchone()
        if marker is None or marker[0] != OWNER_MARKER:
            raise BackendError(
                f"PostgreSQL at {self.url}: schema {self.schema!r} holds tables sim did not "
                f"create ({', '.join(sorted(names))}); refusing to touch it: choose another "
                f"schema ([backends] schema), or pass --reset to drop sim's table names in it"
            )
        counts = []
        for table in ("snapshot_schedule", "bilibili_metadata"):
            cur = await self._connection().execute(
                pgsql.SQL("SELECT count(*) FROM {}.{}").format(q, pgsql.Identifier(table))
            )
            row = await cur.fetchone()
            counts.append(int(row[0]) if row else 0)
        if any(counts):
            raise BackendError(
                f"PostgreSQL at {self.url}: schema {self.schema!r} holds an earlier run "
                f"({counts[0]} schedules, {counts[1]} videos); pass --reset to start afresh"
            )

    async def _drop_for_reset(self) -> None:
        names = await self._tables()
        conn = self._connection()
        q = pgsql.Identifier(self.schema)
        if OWNER_TABLE in names or not names:
            await conn.execute(pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(q))
            return
        async with conn.transaction():  # somebody else's schema: only sim's table names
            for table in TABLES:
                await conn.execute(
                    pgsql.SQL("DROP TABLE IF EXISTS {}.{} CASCADE").format(
                        q, pgsql.Identifier(table)
                    )
                )

    async def _aio_drop(self) -> None:
        if self._conn is None:
            return
        await self._conn.execute(
            pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(pgsql.Identifier(self.schema))
        )

    async def _aio_close(self) -> None:
        conns, self._idle = self._idle, []
        lockers, self._lockers = list(self._lockers.values()), {}
        owner, self._conn = self._conn, None
        for conn in [*conns, *lockers, *([owner] if owner is not None else [])]:
            await conn.close()

    # -- primitives (asyncio side) ------------------------------------------------------------
    def _connection(self) -> psycopg.AsyncConnection[Any]:
        """The connection of the port call in progress (the owner outside of one)."""
        conn = self._current.get()
        if conn is not None:
            return conn
        if self._conn is None:
            raise RuntimeError(f"{self!r} is not open")
        return self._conn

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        """A pooled connection for one port call (the deployed code's postgres.js pool): a
        connection that broke is closed, not returned."""
        if self._slots is None or self._conn is None:
            raise RuntimeError(f"{self!r} is not open")
        async with self._slots:
            conn = self._idle.pop() if self._idle else await self._pooled()
            token = self._current.set(conn)
            try:
                yield
            finally:
                self._current.reset(token)
                if conn.broken or conn.closed:
                    await conn.close()
                else:
                    self._idle.append(conn)

    async def _pooled(self) -> psycopg.AsyncConnection[Any]:
        conn = await self._connect()
        await conn.execute(pgsql.SQL("SET search_path TO {}").format(pgsql.Identifier(self.schema)))
        return conn

    def _text(self, statement: str) -> bytes:
        text = self._statements.get(statement)
        if text is None:
            text = self._statements[statement] = to_format_style(statement).encode()
        return text

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cur = await self._connection().execute(self._text(sql), tuple(params))
        return [tuple(r) for r in await cur.fetchall()]

    async def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        cur = await self._connection().execute(self._text(sql), tuple(params))
        return max(cur.rowcount, 0)

    async def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        if not rows:
            return 0
        async with self._connection().cursor() as cur:
            await cur.executemany(self._text(sql), [tuple(r) for r in rows])
            return max(cur.rowcount, 0)

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[None]:
        async with self._connection().transaction():
            yield

    # -- SchedulerLock (seed 001 "组成": pg_try_advisory_lock on a dedicated connection) --------
    @bridged
    async def try_lock(self, holder: str) -> bool:
        if self._locking is None:
            raise RuntimeError(f"{self!r} is not open")
        async with self._locking:
            conn = self._lockers.get(holder)
            if conn is None or conn.closed or conn.broken:
                if conn is not None:
                    await conn.close()
                conn = self._lockers[holder] = await self._connect()
            try:
                # Taking it again on the same session only counts it up: closing the
                # connection releases every count at once (drop_lock, close).
                cur = await conn.execute(
                    "SELECT pg_try_advisory_lock(%s::integer, %s::integer)",
                    (EXECUTOR_LOCK_CLASS, executor_lock_key(self.schema)),
                )
                row = await cur.fetchone()
            except psycopg.OperationalError:
                # The connection broke, and a lock it held went with it; the next try reconnects.
                del self._lockers[holder]
                await conn.close()
                return False
        return bool(row and row[0])

    @bridged
    async def drop_lock(self, holder: str) -> None:
        # A process that dies loses the lock with its connection (seed 001 "组成").
        if self._locking is None:
            raise RuntimeError(f"{self!r} is not open")
        async with self._locking:
            conn = self._lockers.pop(holder, None)
            if conn is not None:
                # The server frees a session's locks when its backend exits, a moment after the
                # client hangs up; a try at once (the next virtual instant is no wall time
                # later) could still find it held, and the log would depend on that race.
                # Unlocking first makes the death visible before anyone tries again.
                with contextlib.suppress(psycopg.OperationalError):
                    await conn.execute("SELECT pg_advisory_unlock_all()")
                await conn.close()
