"""Seed 004's processed-message markers in memory (:class:`sim.ports.MessageMarks`).

A dict of key -> expiry instant: what the Redis adapter (:mod:`sim.backends.redis_marks`) keeps
as ``<prefix>msg:<id>`` strings. Expired markers stay until overwritten, as a GET of an expired
Redis key answers nothing either way; a run marks each message at most a few times."""

from __future__ import annotations

from sim.units import Ms


class MemoryMessageMarks:
    """The markers of one run."""

    def __init__(self) -> None:
        self.expires_ms: dict[str, Ms] = {}

    async def is_marked(self, key: str, now_ms: Ms) -> bool:
        expires = self.expires_ms.get(key)
        return expires is not None and expires > now_ms

    async def mark(self, key: str, expires_ms: Ms) -> None:
        self.expires_ms[key] = expires_ms
