"""Backends: adapters behind the ports of :mod:`sim.ports`, one file each (httpx transports)."""

from sim.backends.memory import MemoryStore, MemoryUpstream, MemoryWindowCounter

__all__ = ["MemoryStore", "MemoryUpstream", "MemoryWindowCounter"]
