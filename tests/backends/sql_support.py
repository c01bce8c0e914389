"""SQL targets for tests: SQLite always (a file in the test's tmp dir), PostgreSQL when reachable.

Every PostgreSQL test uses its own schema (:func:`unique_schema`) and drops it afterwards: the
server persists between tests and runs. The server is ``$SIM_POSTGRES_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``); when it is unreachable the test skips, or fails
under ``SIM_REQUIRE_SERVICES=1`` (tests/conftest.py).
"""

from __future__ import annotations

import functools
import os
import uuid

import psycopg

from tests.conftest import skip_or_fail

POSTGRES_URL = os.environ.get("SIM_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def unique_schema(tag: str = "t") -> str:
    """A schema name nobody else uses: ``simtest_<tag>_<hex>``."""
    return f"simtest_{tag}_{uuid.uuid4().hex[:12]}"


@functools.cache
def _unreachable_reason() -> str | None:
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return " ".join(str(exc).split())
    return None


def require_postgres() -> str:
    """The real server's URL; skips (or fails in CI) when it does not answer."""
    reason = _unreachable_reason()
    if reason is not None:
        skip_or_fail(f"PostgreSQL is not reachable at {POSTGRES_URL} ({reason})")
    return POSTGRES_URL


def schemas_like(prefix: str) -> list[str]:
    """Schemas on the server whose name starts with ``prefix`` (leftover checks)."""
    with psycopg.connect(require_postgres()) as conn:
        rows = conn.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE %s",
            (prefix + "%",),
        ).fetchall()
    return sorted(r[0] for r in rows)
