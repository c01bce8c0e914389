"""The in-memory backend: the default, and a *fake* (not a mock): it passes the same contract
suite as SQLite, PostgreSQL and Redis (``sim.testing``, tests/contracts/)."""

from sim.backends.memory.counter import MemoryUpstream, MemoryWindowCounter
from sim.backends.memory.store import MemoryStore

__all__ = ["MemoryStore", "MemoryUpstream", "MemoryWindowCounter"]
