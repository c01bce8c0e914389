"""The in-memory backend, the optimised store: the default, and a *fake* (not a mock): it passes
the same contract suite as SQLite, PostgreSQL and Redis (``sim.testing``, tests/contracts/).
Hand-tuned for speed and memory (docs/performance.md "A columnar memory store") and compiled
by mypyc; its plain-Python twin, to check a result against, is :mod:`sim.backends.reference`."""

from sim.backends.memory.counter import MemoryWindowCounter
from sim.backends.memory.store import MemoryStore

__all__ = ["MemoryStore", "MemoryWindowCounter"]
