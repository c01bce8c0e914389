"""Tick bounds, orders, batches and priorities (reference §7, §8, §12, §19.9, §19.10)."""

from __future__ import annotations

from sim.cvsa.params import CVSA_2026_PARAMS, DESIGN_PARAMS
from sim.cvsa.params import DEFAULT_PARAMS as P
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.cvsa.ticks import (
    BULK_TYPES,
    batches,
    bulk_priority,
    bulk_tick_bounds,
    bulk_tick_sort_key,
    cleanup_cutoff_ms,
    in_bounds,
    single_priority,
    single_tick_bounds,
    single_tick_sort_key,
    single_tick_types,
)
from sim.cvsa.vocabulary import ScheduleType

T = 1_924_992_000_000
MS, NEW, NORMAL, ARCHIVE = (
    ScheduleType.MILESTONE,
    ScheduleType.NEW,
    ScheduleType.NORMAL,
    ScheduleType.ARCHIVE,
)


def test_single_tick_bounds_are_inclusive() -> None:
    assert single_tick_bounds(T, CVSA_2026_PARAMS) == (T - 60_000, T + 1_000)
    assert single_tick_bounds(T, DESIGN_PARAMS) == (None, T + 1_000)
    bounds = single_tick_bounds(T, CVSA_2026_PARAMS)
    assert [in_bounds(t, bounds) for t in (T - 60_001, T - 60_000, T + 1_000, T + 1_001)] == [
        False,
        True,
        True,
        False,
    ]
    assert in_bounds(T - 10**9, single_tick_bounds(T, DESIGN_PARAMS))


def test_bulk_tick_bounds() -> None:
    assert bulk_tick_bounds(T, CVSA_2026_PARAMS) == (T - 120_000, T + 15_000)
    assert bulk_tick_bounds(T, DESIGN_PARAMS) == (None, T + 15_000)


def test_tick_types() -> None:
    assert single_tick_types(DESIGN) == (NEW, MS)
    # Deployed: type <> 'normal', so every other type of the vocabulary (reference §7.1).
    assert single_tick_types(CVSA_2026) == tuple(t for t in ScheduleType if t is not NORMAL)
    assert single_tick_types(CVSA_2026) == (NEW, MS, ARCHIVE)
    assert BULK_TYPES == (NORMAL, ARCHIVE)


def test_orders() -> None:
    rows = [(ARCHIVE, T, 1), (NORMAL, T + 5, 2), (NORMAL, T + 5, 0), (ARCHIVE, T - 9, 3)]
    ordered = sorted(rows, key=lambda r: bulk_tick_sort_key(*r))
    assert ordered == [(NORMAL, T + 5, 0), (NORMAL, T + 5, 2), (ARCHIVE, T - 9, 3), (ARCHIVE, T, 1)]
    # Any other type after both, as the SQL CASE ranks it (the bulk tick never asks for one).
    others = sorted([(NEW, T - 99, 1), (ARCHIVE, T, 2)], key=lambda r: bulk_tick_sort_key(*r))
    assert others == [(ARCHIVE, T, 2), (NEW, T - 99, 1)]
    single = sorted([(T + 1, 5), (T, 9), (T + 1, 2)], key=lambda r: single_tick_sort_key(*r))
    assert single == [(T, 9), (T + 1, 2), (T + 1, 5)]


def test_batches_of_thirty() -> None:
    rows = list(range(1000))
    groups = batches(rows, 30)
    assert len(groups) == 34
    assert [len(g) for g in groups[-2:]] == [30, 10]
    assert groups[1] == list(range(30, 60))
    assert batches([], 30) == []


def test_priorities() -> None:
    assert [single_priority(t, P) for t in (MS, NEW, ARCHIVE)] == [1, 3, 3]
    assert bulk_priority([NORMAL] * 30, DESIGN_PARAMS) == 3
    assert bulk_priority([NORMAL, ARCHIVE], DESIGN_PARAMS) == 2
    assert bulk_priority([ARCHIVE] * 30, DESIGN_PARAMS) == 2
    assert bulk_priority([ARCHIVE] * 30, CVSA_2026_PARAMS) == 3


def test_cleanup_cutoff() -> None:
    assert cleanup_cutoff_ms(T, P) == T - 120_000
