"""One contract, every backend (DEVELOPERS.md, non-negotiable 2).

Every check of ``sim.testing.CHECKS`` runs against every adapter of its port: memory, SQLite and
fakeredis always; PostgreSQL and Redis when the servers are reachable (they skip otherwise, and
fail instead under ``SIM_REQUIRE_SERVICES=1``, which CI sets). Each case gets a fresh, empty
adapter: its own SQLite file, its own PostgreSQL schema, its own Redis key prefix, dropped after.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from sim.backends import Backends, MemoryStore, MemoryWindowCounter, open_backends
from sim.testing import CHECKS

Factory = Callable[[Path], Any]
"""Builds a fresh adapter (not yet opened) in a test's temporary directory."""

STORES: dict[str, Factory] = {"memory": lambda tmp: MemoryStore()}
COUNTERS: dict[str, Factory] = {"memory": lambda tmp: MemoryWindowCounter()}

PORT_FACTORIES: dict[str, dict[str, Factory]] = {
    "schedule_store": STORES,
    "snapshot_store": STORES,
    "store": STORES,
    "window_counter": COUNTERS,
}

CASES = [
    pytest.param(port, backend, check, id=f"{port}-{backend}-{check.__name__}")
    for port, checks in CHECKS.items()
    for backend in PORT_FACTORIES[port]
    for check in checks
]


@pytest.mark.parametrize(("port", "backend", "check"), CASES)
async def test_contract(
    port: str, backend: str, check: Callable[[Any], Awaitable[None]], tmp_path: Path
) -> None:
    adapter = PORT_FACTORIES[port][backend](tmp_path)
    pair = (
        Backends(MemoryStore(), adapter)
        if port == "window_counter"
        else Backends(adapter, MemoryWindowCounter())
    )
    async with open_backends(pair):
        await check(adapter)
