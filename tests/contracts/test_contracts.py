"""One contract, every backend (README "Design rules" 2).

Every check of ``sim.testing.CHECKS`` runs against every adapter of its port: memory (the
optimised store), reference (the plain one), SQLite and fakeredis always; PostgreSQL and Redis
when the servers are reachable (they skip otherwise, and fail instead under
``SIM_REQUIRE_SERVICES=1``, which CI sets). Each case gets a fresh, empty adapter: its own
SQLite file (stdlib sqlite3 and aiosqlite), its own PostgreSQL schema, its own Redis key
prefix, dropped after.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import pytest
import redis

from sim.backends import (
    Backends,
    MemoryStore,
    MemoryWindowCounter,
    ReferenceStore,
    ReferenceWindowCounter,
    open_backends,
)
from sim.backends.memory.jobs import MemoryJobTable
from sim.backends.memory.marks import MemoryMessageMarks
from sim.backends.postgres import PostgresStore
from sim.backends.redis import RedisWindowCounter
from sim.backends.redis_marks import RedisMessageMarks
from sim.backends.sqlite import SqliteStore
from sim.testing import CHECKS
from tests.backends.redis_support import keys_under, require_redis, unique_prefix
from tests.backends.sql_support import require_postgres, schemas_like, unique_schema

Factory = Callable[[Path], Any]
"""Builds a fresh adapter (not yet opened) in a test's temporary directory. An adapter with a
``drop()`` method (Redis) has it called after the check: it deletes what the adapter wrote."""


def _redis_counter(spec: str | None, reservation: Literal["loop", "lua"]) -> Factory:
    """A Redis counter under its own key prefix: ``spec`` None means the real server."""

    def make(tmp: Path) -> RedisWindowCounter:
        url = spec or require_redis()
        return RedisWindowCounter(
            url, key_prefix=unique_prefix("contract"), reservation=reservation
        )

    return make


STORES: dict[str, Factory] = {
    "memory": lambda tmp: MemoryStore(),
    "reference": lambda tmp: ReferenceStore(),
    "sqlite": lambda tmp: SqliteStore(tmp / "contract.sqlite"),
    "aiosqlite": lambda tmp: SqliteStore(tmp / "contract.sqlite", driver="aiosqlite"),
    "postgres": lambda tmp: PostgresStore(require_postgres(), schema=unique_schema("contract")),
}
COUNTERS: dict[str, Factory] = {
    "memory": lambda tmp: MemoryWindowCounter(),
    "reference": lambda tmp: ReferenceWindowCounter(),
    "fakeredis-loop": _redis_counter("fakeredis", "loop"),
    "fakeredis-lua": _redis_counter("fakeredis", "lua"),
    "redis-loop": _redis_counter(None, "loop"),
    "redis-lua": _redis_counter(None, "lua"),
}
SERVICES = {"redis-loop", "redis-lua", "postgres", "redis"}
"""Backends that need a server (marked ``services``: skip when absent, fail in CI)."""


def _redis_marks(spec: str | None) -> Factory:
    """Markers on a Redis counter's connection, under the counter's own prefix."""

    def make(tmp: Path) -> RedisMessageMarks:
        return RedisMessageMarks(_redis_counter(spec, "loop")(tmp))

    return make


MARKS: dict[str, Factory] = {
    "memory": lambda tmp: MemoryMessageMarks(),
    "fakeredis": _redis_marks("fakeredis"),
    "redis": _redis_marks(None),
}

JOB_TABLES: dict[str, Factory] = {
    "memory": lambda tmp: MemoryJobTable(),  # the memory and reference stores' job table
    "sqlite": STORES["sqlite"],
    "aiosqlite": STORES["aiosqlite"],
    "postgres": STORES["postgres"],
}

PORT_FACTORIES: dict[str, dict[str, Factory]] = {
    "schedule_store": STORES,
    "snapshot_store": STORES,
    "store": STORES,
    "window_counter": COUNTERS,
    "locks": COUNTERS,  # the dispatcher locks live on the window counter's Redis
    "job_table": JOB_TABLES,  # seed 001's tables live in the store's database
    "marks": MARKS,  # seed 004's markers live on the window counter's Redis
}

CASES = [
    pytest.param(
        port,
        backend,
        check,
        id=f"{port}-{backend}-{check.__name__}",
        marks=[pytest.mark.services] if backend in SERVICES else [],
    )
    for port, checks in CHECKS.items()
    for backend in PORT_FACTORIES[port]
    for check in checks
]


@pytest.fixture
def adapter(port: str, backend: str, tmp_path: Path) -> Any:
    """The fresh adapter, built before the (async) test: a missing service skips here, with its
    reason in the report."""
    return PORT_FACTORIES[port][backend](tmp_path)


@pytest.mark.parametrize(("port", "backend", "check"), CASES)
async def test_contract(
    port: str, backend: str, check: Callable[[Any], Awaitable[None]], adapter: Any
) -> None:
    if port == "marks":
        counter = adapter.counter if isinstance(adapter, RedisMessageMarks) else None
        pair = Backends(MemoryStore(), counter or MemoryWindowCounter(), marks=adapter)
    elif port in ("window_counter", "locks"):
        pair = Backends(MemoryStore(), adapter)
    elif isinstance(adapter, MemoryJobTable):
        pair = Backends(MemoryStore(), MemoryWindowCounter(), adapter)
    else:
        pair = Backends(adapter, MemoryWindowCounter())
    async with open_backends(pair):
        try:
            await check(adapter)
        finally:
            if hasattr(adapter, "drop"):
                await adapter.drop()
            if isinstance(adapter, RedisMessageMarks):
                await adapter.counter.drop()
    if isinstance(adapter, PostgresStore):
        assert schemas_like(adapter.schema) == [], "schema left on the server"
    counter = adapter.counter if isinstance(adapter, RedisMessageMarks) else adapter
    if isinstance(counter, RedisWindowCounter) and counter.spec != "fakeredis":
        client = redis.Redis.from_url(counter.spec)
        try:
            assert keys_under(client, counter.key_prefix) == [], "keys left on the server"
        finally:
            client.close()
