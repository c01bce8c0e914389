"""Seeding trio's scheduler (feasibility.md §2a, §5; anchors.md A.2).

trio shuffles each batch of runnable tasks with a module-level ``random.Random`` (``_r``), and
orders wake-ups by ``id()`` unless ``_ALLOW_DETERMINISTIC_SCHEDULING`` is set, which sorts each
batch by task creation counter before the (now seeded) shuffle. Both names are private: trio is
pinned to 0.35.* in pyproject.toml and a test (tests/engine/test_clocks.py,
``test_trio_private_scheduler_names_exist``) fails if they vanish.

The flag is set *explicitly* for every run because importing hypothesis flips it process-wide
(trio's hypothesis plugin): runs under pytest and from the CLI must schedule the same way.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import trio._core._run as _trio_run

from sim.rng import derive_seed


@contextmanager
def deterministic_trio(seed: int) -> Iterator[None]:
    """Within the block, ``trio.run`` schedules tasks as a pure function of ``seed``."""
    saved_state = _trio_run._r.getstate()
    saved_flag = _trio_run._ALLOW_DETERMINISTIC_SCHEDULING
    _trio_run._r.seed(derive_seed(seed, "trio-scheduler"))
    _trio_run._ALLOW_DETERMINISTIC_SCHEDULING = True  # type: ignore[misc]
    try:
        yield
    finally:
        _trio_run._ALLOW_DETERMINISTIC_SCHEDULING = saved_flag  # type: ignore[misc]
        _trio_run._r.setstate(saved_state)


def trio_private_names_present() -> bool:
    """True when the private trio names this module relies on still exist with the right types."""
    return isinstance(getattr(_trio_run, "_r", None), random.Random) and isinstance(
        getattr(_trio_run, "_ALLOW_DETERMINISTIC_SCHEDULING", None), bool
    )
