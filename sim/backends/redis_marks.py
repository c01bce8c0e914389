"""Seed 004's processed-message markers on Redis (:class:`sim.ports.MessageMarks`).

Keys ``<prefix>msg:<id>`` on the window counter's Redis, through its connection (the
counter's ``key_prefix``, one per run): the marker store shares the Redis that holds the window
counts and the dispatcher locks, as the seed's ``redis`` does. The value is the expiry instant
in the run's time (see the port), not ``EX``: fakeredis and a real server would expire on the
wall clock.

Opening (after the counter, which checks that the prefix is sim's) deletes the markers an
earlier run left under the prefix: a run starts with no message processed. :meth:`drop` does
the same, for tests.
"""

from __future__ import annotations

import trio
import trio_asyncio

from sim.backends.redis import RedisWindowCounter
from sim.units import Ms

MSG_KEY = "msg:"
"""The seed's key prefix (``msg:${messageId}``; :func:`sim.cvsa.delivery.dedupe_key` writes
it), after the run's ``key_prefix``: what opening deletes."""


class RedisMessageMarks:
    """The markers, on ``counter``'s Redis connection (open the counter first)."""

    needs_asyncio = True

    def __init__(self, counter: RedisWindowCounter) -> None:
        self.counter = counter
        self.key_prefix = counter.key_prefix
        aio = trio_asyncio.aio_as_trio
        self._t_get = aio(self._aio_get)
        self._t_set = aio(self._aio_set)
        self._t_drop = aio(self._aio_drop)

    def __repr__(self) -> str:
        return f"RedisMessageMarks({self.counter!r})"

    async def open(self) -> None:
        """Delete markers left under the prefix by an earlier run."""
        await self.drop()

    async def close(self) -> None:
        """Nothing to close: the counter owns the connection."""

    async def drop(self) -> None:
        with trio.CancelScope(shield=True):
            await self._t_drop()

    async def is_marked(self, key: str, now_ms: Ms) -> bool:
        expires = await self._t_get(self.key_prefix + key)
        return expires is not None and int(expires) > now_ms

    async def mark(self, key: str, expires_ms: Ms) -> None:
        with trio.CancelScope(shield=True):
            await self._t_set(self.key_prefix + key, expires_ms)

    async def _aio_get(self, key: str) -> str | None:
        value = await self.counter._redis().get(key)
        return None if value is None else str(value)  # decode_responses=True

    async def _aio_set(self, key: str, expires_ms: Ms) -> None:
        await self.counter._redis().set(key, expires_ms)

    async def _aio_drop(self) -> None:
        r = self.counter._redis()
        keys = [k async for k in r.scan_iter(match=f"{self.key_prefix}{MSG_KEY}*", count=1000)]
        if keys:
            await r.delete(*keys)
