"""Query counts follow from the port protocols: every port method is counted once, as what its
protocol says it is (a read, a write, a Redis round trip)."""

from __future__ import annotations

import inspect

from sim.ports import (
    JobReads,
    JobTable,
    JobWrites,
    LockManager,
    ScheduleReads,
    SchedulerLock,
    ScheduleStore,
    ScheduleWrites,
    SettledEtaInputs,
    SnapshotReads,
    SnapshotStore,
    SnapshotWrites,
    WindowCounter,
)
from sim.scheduler.metering import CHARGED_BY_ANSWER, KINDS, READ, REDIS, WRITE, port_methods


def _methods(protocol: type) -> set[str]:
    return {n for n, v in inspect.getmembers(protocol) if callable(v) and not n.startswith("_")}


def test_every_port_method_is_counted_as_its_protocol_says() -> None:
    # Marks the milestone pass leaves with the store are no deployed query: never counted.
    marks = set(port_methods(SettledEtaInputs))
    assert marks == {"settle_eta_inputs"}
    stores = (_methods(ScheduleStore) | _methods(SnapshotStore)) - marks
    redis = _methods(WindowCounter) | _methods(LockManager)
    jobs = _methods(JobTable)
    assert set(KINDS) == stores | redis | jobs
    assert not marks & (set(KINDS) | set(CHARGED_BY_ANSWER))
    reads = {
        *port_methods(ScheduleReads),
        *port_methods(SnapshotReads),
        *port_methods(JobReads),
        *port_methods(SchedulerLock),  # SELECT pg_try_advisory_lock(...)
    }
    writes = {
        *port_methods(ScheduleWrites),
        *port_methods(SnapshotWrites),
        *port_methods(JobWrites),
    }
    assert reads | writes == stores | jobs
    assert not reads & writes
    assert {KINDS[n] for n in reads} == {READ}
    assert {KINDS[n] for n in writes} == {WRITE}
    assert {KINDS[n] for n in redis} == {REDIS}


def test_the_deployed_statements_are_where_they_belong() -> None:
    assert KINDS["due_schedules"] == READ
    assert KINDS["insert_schedule"] == KINDS["set_schedule_status"] == WRITE
    assert KINDS["upsert_eta"] == KINDS["insert_snapshot"] == WRITE
    assert KINDS["incr"] == KINDS["acquire_lock"] == REDIS
    # Two calls cost what their answer says: the probes of a reservation (one HINCRBY each, and
    # one more per full window) and the per-candidate reads a batch stands for.
    assert CHARGED_BY_ANSWER["reserve"][0] == REDIS
    assert CHARGED_BY_ANSWER["eta_inputs"][0] == READ
