"""One scheduler, many backends: a run on SQL gives the memory store's event log, byte for byte.

The engine waits for every store answer before it runs anything else, so the order of events
cannot depend on I/O latency; the SQL store returns what the memory store returns (the contract
suite), so the log, its fingerprint and every metric must be identical. A difference here means
a store answers some query differently from the memory store, which the contract suite missed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sim.backends import BackendSpec
from sim.runner import RunOptions, run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from tests.backends.redis_support import require_redis, unique_prefix
from tests.backends.sql_support import require_postgres, schemas_like, unique_schema
from tests.conftest import DATA

SHORT = [
    "duration=12h",
    "catalog.songs=60",
    "catalog.non_songs=300",
    "arrivals.per_day=150",
    "design.window_cap=4",  # small windows: reservations probe several of them
]
"""Half a day of a small world: new, milestone and normal snapshots, both ticks, every
dispatcher, in seconds of wall time even where each query is a network round trip."""


def _run(overrides: list[str], spec: BackendSpec) -> tuple[str, dict[str, Any]]:
    scenario = load_scenario(DATA / "small.toml", overrides=overrides)
    result = run_scenario(scenario, build_cvsa_model, RunOptions(backends=spec))
    return result.manifest["event_log_sha256"], result.metrics


@pytest.fixture(scope="module")
def memory_day() -> tuple[str, dict[str, Any]]:
    return _run([], BackendSpec())


@pytest.fixture(scope="module")
def memory_short() -> tuple[str, dict[str, Any]]:
    sha, metrics = _run(SHORT, BackendSpec())
    for kind in ("new", "milestone", "normal"):
        assert metrics[f"snapshots.{kind}"] > 0, f"the short run must take {kind} snapshots"
    assert metrics["windows.probes.total"] > metrics["windows.placement.forward"], "probes > 1"
    return sha, metrics


def test_a_day_on_sqlite_and_fakeredis_is_the_day_in_memory(
    tmp_path: Path, memory_day: tuple[str, dict[str, Any]]
) -> None:
    spec = BackendSpec(store=f"sqlite:{tmp_path / 'day.sqlite'}", counter="fakeredis")
    assert _run([], spec) == memory_day


def test_aiosqlite_gives_the_same_log(
    tmp_path: Path, memory_short: tuple[str, dict[str, Any]]
) -> None:
    spec = BackendSpec(store=f"sqlite:{tmp_path / 'short.sqlite'}", sqlite_driver="aiosqlite")
    assert _run(SHORT, spec) == memory_short


@pytest.mark.services
def test_postgres_and_redis_give_the_same_log(memory_short: tuple[str, dict[str, Any]]) -> None:
    schema, prefix = unique_schema("equiv"), unique_prefix("equiv")
    spec = BackendSpec(
        store=require_postgres(), counter=require_redis(), schema=schema, key_prefix=prefix
    )
    try:
        assert _run(SHORT, spec) == memory_short
    finally:
        _drop(schema, prefix)
    assert schemas_like(schema) == []


@pytest.fixture(scope="module")
def memory_table() -> tuple[str, dict[str, Any]]:
    """``small-table``: seed 001's job table with a crash, a takeover, a second deployment
    contending for the lock, a "run now" and a "skip"."""
    sha, metrics = _run_file("small-table.toml", BackendSpec())
    for kind in ("ExecutorLockLost", "JobRunInterrupted", "JobRunRequested", "JobRunSkipped"):
        assert metrics[f"events.by_kind.{kind}"] >= 1, f"the table run must log {kind}"
    return sha, metrics


def _run_file(name: str, spec: BackendSpec) -> tuple[str, dict[str, Any]]:
    result = run_scenario(load_scenario(DATA / name), build_cvsa_model, RunOptions(backends=spec))
    return result.manifest["event_log_sha256"], result.metrics


def test_the_job_table_on_sqlite_is_the_job_table_in_memory(
    tmp_path: Path, memory_table: tuple[str, dict[str, Any]]
) -> None:
    spec = BackendSpec(store=f"sqlite:{tmp_path / 'table.sqlite'}")
    assert _run_file("small-table.toml", spec) == memory_table


@pytest.mark.services
def test_the_job_table_on_postgres_is_the_job_table_in_memory(
    memory_table: tuple[str, dict[str, Any]],
) -> None:
    """PostgreSQL's executor lock is a real advisory lock on a connection per deployment."""
    schema, prefix = unique_schema("equivtable"), unique_prefix("equivtable")
    spec = BackendSpec(
        store=require_postgres(), counter=require_redis(), schema=schema, key_prefix=prefix
    )
    try:
        assert _run_file("small-table.toml", spec) == memory_table
    finally:
        _drop(schema, prefix)
    assert schemas_like(schema) == []


def _drop(schema: str, prefix: str) -> None:
    import psycopg
    import redis

    with psycopg.connect(require_postgres(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    client = redis.Redis.from_url(require_redis())
    try:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(scope="module")
def memory_operations() -> tuple[str, dict[str, Any]]:
    """``small-operations``: every mechanism of issue 28 (seeds 003, 004) at work."""
    sha, metrics = _run_file("small-operations.toml", BackendSpec())
    for kind in (
        "BackpressureChanged",
        "ModeChanged",
        "DispatchHeldBack",
        "RateFactorChanged",
        "RetryAfterHonoured",
        "JobAbandoned",
        "JobRedelivered",
        "JobRetried",
        "JobDropped",
    ):
        assert metrics[f"events.by_kind.{kind}"] >= 1, f"the operations run must log {kind}"
    return sha, metrics


def test_seed_003_and_004_on_sqlite_are_the_same_in_memory(
    tmp_path: Path, memory_operations: tuple[str, dict[str, Any]]
) -> None:
    spec = BackendSpec(store=f"sqlite:{tmp_path / 'operations.sqlite'}", counter="fakeredis")
    assert _run_file("small-operations.toml", spec) == memory_operations


@pytest.mark.services
def test_seed_003_and_004_on_postgres_and_redis_are_the_same_in_memory(
    memory_operations: tuple[str, dict[str, Any]],
) -> None:
    """The write path's flushes, cleanup's kept rows and the dedupe marks on real servers."""
    schema, prefix = unique_schema("equivops"), unique_prefix("equivops")
    spec = BackendSpec(
        store=require_postgres(), counter=require_redis(), schema=schema, key_prefix=prefix
    )
    try:
        assert _run_file("small-operations.toml", spec) == memory_operations
    finally:
        _drop(schema, prefix)
    assert schemas_like(schema) == []
