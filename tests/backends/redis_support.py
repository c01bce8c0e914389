"""Redis targets for tests: fakeredis always, the real server when reachable.

Every test uses its own key prefix (:func:`unique_prefix`) and deletes the keys under it
afterwards: the server persists between tests and runs. The real server is
``$SIM_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``); when it is unreachable the test skips,
or fails under ``SIM_REQUIRE_SERVICES=1`` (tests/conftest.py).
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import fakeredis
import redis

from sim.backends import Backends, MemoryStore, open_backends
from sim.backends.redis import RedisWindowCounter
from tests.conftest import skip_or_fail

REDIS_URL = os.environ.get("SIM_REDIS_URL", "redis://127.0.0.1:6379/0")


def unique_prefix(tag: str = "t") -> str:
    """A key prefix nobody else uses: ``simtest:<tag>:<hex>:``."""
    return f"simtest:{tag}:{uuid.uuid4().hex}:"


@functools.cache
def _unreachable_reason() -> str | None:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=5)
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        return " ".join(str(exc).split())
    finally:
        client.close()
    return None


def require_redis() -> str:
    """The real server's URL; skips (or fails in CI) when it does not answer."""
    reason = _unreachable_reason()
    if reason is not None:
        skip_or_fail(f"Redis is not reachable at {REDIS_URL} ({reason})")
    return REDIS_URL


def keys_under(client: Any, prefix: str) -> list[str]:
    """Every key whose name starts with ``prefix`` (SCAN, so safe on a shared server)."""
    return sorted(k.decode() for k in client.scan_iter(match=f"{prefix}*", count=1000))


@dataclass
class Target:
    """One Redis (fake or real) seen through the adapter and through a plain sync client."""

    spec: str
    prefix: str
    sync: Any
    """A sync redis-py client on the same data (bytes replies), to plant and inspect keys."""
    fake_server: fakeredis.FakeServer | None = None
    extra_keys: list[str] = field(default_factory=list)
    """Keys outside the prefix that a test created; deleted at teardown."""

    def counter(self, **kwargs: Any) -> RedisWindowCounter:
        return RedisWindowCounter(
            self.spec, key_prefix=self.prefix, fake_server=self.fake_server, **kwargs
        )

    def cleanup(self) -> None:
        keys = keys_under(self.sync, self.prefix) + self.extra_keys
        if keys:
            self.sync.delete(*keys)
        self.sync.close()


def make_target(kind: str, tag: str = "t") -> Target:
    """``fakeredis`` (a fresh server) or ``redis`` (the real one; skips when absent)."""
    prefix = unique_prefix(tag)
    if kind == "fakeredis":
        server = fakeredis.FakeServer(version=(7,))
        return Target("fakeredis", prefix, fakeredis.FakeRedis(server=server), server)
    url = require_redis()
    return Target(url, prefix, redis.Redis.from_url(url, socket_timeout=5))


@asynccontextmanager
async def opened(counter: RedisWindowCounter) -> AsyncIterator[RedisWindowCounter]:
    """Open ``counter`` the way a run does (trio-asyncio loop, composition root)."""
    async with open_backends(Backends(MemoryStore(), counter)):
        yield counter
