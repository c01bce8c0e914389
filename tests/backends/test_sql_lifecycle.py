"""Opening the SQL stores: ownership, leftovers, reset, the schema lock, and the error a user
sees when the database is missing or not sim's to use (README "Design rules" 5)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sim.backends import (
    BackendError,
    Backends,
    BackendSpec,
    MemoryWindowCounter,
    make_store,
    open_backends,
)
from sim.backends.postgres import PostgresStore, redact, start_hint
from sim.backends.sqlite import SqliteStore
from sim.cvsa.vocabulary import ScheduleType
from tests.backends.sql_support import require_postgres, schemas_like, unique_schema
from tests.conftest import DATA, wait_for_progress

T0 = 1_924_992_000_000


@asynccontextmanager
async def opened(store: Any) -> AsyncIterator[Any]:
    """Open ``store`` the way a run does (composition root, trio-asyncio when needed)."""
    async with open_backends(Backends(store, MemoryWindowCounter())):
        yield store


async def refused(store: Any) -> str:
    with pytest.raises(BackendError) as info:
        async with opened(store):
            pass
    message = str(info.value)
    assert "\n" not in message
    return message


# -- SQLite ---------------------------------------------------------------------------------
@pytest.fixture(params=["sqlite3", "aiosqlite"])
def driver(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_sqlite_creates_the_file_and_reopens_an_empty_one(
    tmp_path: Path, driver: Any
) -> None:
    path = tmp_path / "new.sqlite"
    async with opened(SqliteStore(path, driver=driver)) as store:
        assert await store.video_aids() == []
    async with opened(SqliteStore(path, driver=driver)) as store:  # sim's, and empty: fine
        await store.add_video(1, T0)
    assert path.exists()


async def test_sqlite_refuses_an_earlier_run_unless_reset(tmp_path: Path, driver: Any) -> None:
    path = tmp_path / "run.sqlite"
    async with opened(SqliteStore(path, driver=driver)) as store:
        await store.add_video(1, T0)
        await store.insert_schedule(1, ScheduleType.NORMAL, T0, T0)
    message = await refused(SqliteStore(path, driver=driver))
    assert message == (
        f"the SQLite database {path} holds an earlier run (1 schedules, 1 videos); "
        "pass --reset to start afresh"
    )
    async with opened(SqliteStore(path, driver=driver, reset=True)) as store:
        assert await store.video_aids() == []
        assert await store.insert_schedule(2, ScheduleType.NEW, T0, T0) == 1, (
            "ids count from 1 again"
        )


async def test_sqlite_refuses_a_foreign_file_and_reset_drops_only_sims_tables(
    tmp_path: Path, driver: Any
) -> None:
    path = tmp_path / "foreign.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
        conn.execute("CREATE TABLE songs (title TEXT)")
        conn.execute("INSERT INTO users VALUES ('ana')")
    message = await refused(SqliteStore(path, driver=driver))
    assert message == (
        f"the SQLite database {path} holds tables sim did not create (songs, users); refusing "
        "to touch it: use another file, or pass --reset to drop sim's table names in it"
    )
    with sqlite3.connect(path) as conn:  # refused means untouched
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert names == {"users", "songs"}
    async with opened(SqliteStore(path, driver=driver, reset=True)) as store:
        await store.add_song(3, T0)
        assert await store.song_aids() == [3]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT name FROM users").fetchall() == [("ana",)]


async def test_sqlite_that_cannot_be_opened_names_the_path(tmp_path: Path, driver: Any) -> None:
    path = tmp_path / "no-such-dir" / "x.sqlite"
    message = await refused(SqliteStore(path, driver=driver))
    assert message.startswith(f"cannot open the SQLite database {path} (")
    assert f"check that {path.parent} exists and is writable" in message
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("this is not a database, but long enough to have a header " * 4)
    message = await refused(SqliteStore(not_sqlite, driver=driver))
    assert message.startswith(f"cannot open the SQLite database {not_sqlite} (file is not a")


def test_the_composition_root_picks_the_sqlite_driver_by_clock() -> None:
    spec = BackendSpec(store="sqlite:/tmp/x.sqlite", reset=True)
    virtual, real = make_store(spec), make_store(spec, real_clock=True)
    assert (virtual.driver, virtual.needs_asyncio, virtual.reset) == ("sqlite3", False, True)
    assert (real.driver, real.needs_asyncio) == ("aiosqlite", True)
    forced = make_store(BackendSpec(store="sqlite:/tmp/x.sqlite", sqlite_driver="aiosqlite"))
    assert forced.driver == "aiosqlite"
    assert not Backends(virtual, MemoryWindowCounter()).needs_asyncio
    with pytest.raises(ValueError, match="driver"):
        SqliteStore("/tmp/x.sqlite", driver="odbc")  # type: ignore[arg-type]


# -- PostgreSQL -----------------------------------------------------------------------------
async def test_postgres_unreachable_names_the_url_and_how_to_start_it() -> None:
    message = await refused(PostgresStore("postgresql://postgres@127.0.0.1:1/test"))
    assert message.startswith(
        "PostgreSQL is not reachable at postgresql://postgres@127.0.0.1:1/test ("
    )
    assert message.endswith(
        "); start one with `sudo pg_ctlcluster 15 main start` (Debian) or "
        "`docker run -d -p 1:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`"
    )
    assert "-p 5432:5432" in start_hint("postgresql://u@localhost/db")


async def test_postgres_passwords_never_appear_in_messages() -> None:
    assert redact("postgresql://u:s3cret@h:5/db") == "postgresql://u:***@h:5/db"
    message = await refused(PostgresStore("postgresql://u:s3cret@127.0.0.1:1/test"))
    assert "s3cret" not in message
    assert "postgresql://u:***@127.0.0.1:1/test" in message


def test_postgres_schema_names_are_checked() -> None:
    with pytest.raises(BackendError, match="schema must match"):
        PostgresStore("postgresql://u@h/db", schema="Robert'); DROP TABLE students;--")
    with pytest.raises(BackendError, match="out of the public schema"):
        PostgresStore("postgresql://u@h/db", schema="public")


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A schema name of this test's own, dropped afterwards whatever the test left in it."""
    url = require_postgres()
    schema = unique_schema("life")
    yield schema
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    assert schemas_like(schema) == []


def _sql(statement: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(require_postgres(), autocommit=True) as conn:
        cur = conn.execute(statement.encode())
        return cur.fetchall() if cur.description else []


@pytest.mark.services
async def test_postgres_refuses_an_earlier_run_unless_reset(pg_schema: str) -> None:
    url = require_postgres()
    async with opened(PostgresStore(url, schema=pg_schema)) as store:
        await store.add_video(1, T0)
        await store.insert_schedule(1, ScheduleType.NORMAL, T0, T0)
    message = await refused(PostgresStore(url, schema=pg_schema))
    assert message == (
        f"PostgreSQL at {url}: schema {pg_schema!r} holds an earlier run (1 schedules, "
        "1 videos); pass --reset to start afresh"
    )
    async with opened(PostgresStore(url, schema=pg_schema, reset=True)) as store:
        assert await store.video_aids() == []
        assert await store.insert_schedule(2, ScheduleType.NEW, T0, T0) == 1, (
            "ids count from 1 again"
        )


@pytest.mark.services
async def test_postgres_refuses_a_foreign_schema_and_reset_drops_only_sims_tables(
    pg_schema: str,
) -> None:
    url = require_postgres()
    q = f'"{pg_schema}"'
    _sql(
        f"CREATE SCHEMA {q}; CREATE TABLE {q}.users (name text); "
        f"CREATE TABLE {q}.songs (title text); INSERT INTO {q}.users VALUES ('ana')"
    )
    message = await refused(PostgresStore(url, schema=pg_schema))
    assert message == (
        f"PostgreSQL at {url}: schema {pg_schema!r} holds tables sim did not create (songs, "
        "users); refusing to touch it: choose another schema ([backends] schema), or pass "
        "--reset to drop sim's table names in it"
    )
    async with opened(PostgresStore(url, schema=pg_schema, reset=True)) as store:
        await store.add_song(3, T0)
        assert await store.song_aids() == [3]
    assert _sql(f'SELECT name FROM "{pg_schema}".users') == [("ana",)]


@pytest.mark.services
async def test_two_runs_never_share_a_schema(pg_schema: str) -> None:
    url = require_postgres()
    async with opened(PostgresStore(url, schema=pg_schema)):
        message = await refused(PostgresStore(url, schema=pg_schema, reset=True))
        assert message == (
            f"PostgreSQL at {url}: another sim run is using schema {pg_schema!r}; wait for it, "
            "or give this run another schema ([backends] schema)"
        )
    async with opened(PostgresStore(url, schema=pg_schema)):  # the lock went with the first
        pass


# -- Ctrl-C -------------------------------------------------------------------------------------
def _schedules_in_the_log(out: Path) -> int:
    """Schedule rows the saved log says exist: created minus deleted by cleanup. Each port call
    is one transaction and the first Ctrl-C stops between events, so the database must agree."""
    from sim.events import read_events
    from sim.events.cvsa_kinds import ScheduleCreated, ScheduleDeleted

    counts = {ScheduleCreated: 0, ScheduleDeleted: 0}
    for record in read_events(out / "events.simlog"):
        if type(record) in counts:
            counts[type(record)] += 1
    assert counts[ScheduleCreated] > 0, "interrupted after the run had scheduled something"
    return counts[ScheduleCreated] - counts[ScheduleDeleted]


def _interrupt_a_run(tmp_path: Path, *backend_args: str) -> dict[str, Any]:
    """``sim run`` on the given backends, Ctrl-C once it is under way; the manifest."""
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "sim", "run", str(DATA / "small.toml"), "--out", str(out)),
            *("--no-plots", "--save-events", "--set", 'duration="30d"', *backend_args),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for_progress(proc, timeout_s=240)  # the run is under way: virtual time has moved
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err.decode()
    manifest: dict[str, Any] = json.loads((out / "manifest.json").read_text())
    assert manifest["partial"] is True
    return manifest


async def test_ctrl_c_leaves_the_sqlite_file_whole_and_sims(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    _interrupt_a_run(tmp_path, "--store", f"sqlite:{path}", "--counter", "fakeredis")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        videos = conn.execute("SELECT count(*) FROM bilibili_metadata").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM snapshot_schedule").fetchone()[0]
    assert videos >= 5_500, "the catalogue was committed before the run began"
    assert rows == _schedules_in_the_log(tmp_path / "run"), "the database agrees with the log"
    message = await refused(SqliteStore(path))
    assert "holds an earlier run" in message, "still marked as sim's: --reset will take it"
    async with opened(SqliteStore(path, reset=True)) as store:
        assert await store.video_aids() == []


@pytest.mark.services
async def test_ctrl_c_leaves_postgres_and_redis_consistent(tmp_path: Path, pg_schema: str) -> None:
    from tests.backends.redis_support import keys_under, require_redis, unique_prefix

    url, redis_url, prefix = require_postgres(), require_redis(), unique_prefix("ctrlc")
    args = ("--store", url, "--counter", redis_url)
    try:
        _interrupt_a_run(
            tmp_path,
            *args,
            "--set",
            f'backends.schema="{pg_schema}"',
            "--set",
            f'backends.key_prefix="{prefix}"',
        )
        active = _sql("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'")
        assert active == [(0,)], "no transaction left open"
        rows = _sql(f'SELECT count(*) FROM "{pg_schema}".snapshot_schedule')
        assert rows == [(_schedules_in_the_log(tmp_path / "run"),)], "database agrees with log"
        message = await refused(PostgresStore(url, schema=pg_schema))
        assert "holds an earlier run" in message
    finally:
        import redis

        client = redis.Redis.from_url(redis_url)
        try:
            keys = keys_under(client, prefix)
            if keys:
                client.delete(*keys)
        finally:
            client.close()
