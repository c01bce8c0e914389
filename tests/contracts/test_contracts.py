"""One contract, every backend (DEVELOPERS.md, non-negotiable 2)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from sim.backends import MemoryStore, MemoryWindowCounter
from sim.testing import CHECKS

FACTORIES: dict[str, dict[str, Callable[[], Any]]] = {
    "schedule_store": {"memory": MemoryStore},
    "snapshot_store": {"memory": MemoryStore},
    "window_counter": {"memory": MemoryWindowCounter},
    "store": {"memory": MemoryStore},
}

CASES = [
    pytest.param(port, backend, check, id=f"{port}-{backend}-{check.__name__}")
    for port, checks in CHECKS.items()
    for backend in FACTORIES[port]
    for check in checks
]


@pytest.mark.parametrize(("port", "backend", "check"), CASES)
async def test_contract(port: str, backend: str, check: Callable[[Any], Awaitable[None]]) -> None:
    instance = FACTORIES[port][backend]()
    await check(instance)
