"""The event log: canonical serialisation, fingerprint, the saved format and its reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.events import Chunk, EventLog, FileSink, SavedLog, read_events
from sim.events import log as log_module
from sim.events.engine_kinds import JobAdded, JobStarted, RunEnded
from sim.testing import Recorder


def _fill(log: EventLog, n: int) -> None:
    emit_added = log.emitter(JobAdded)
    emit_started = log.emitter(JobStarted)
    for i in range(n):
        q = log.name("q")
        job_name = log.name(f"job{i % 3}")
        emit_added(i * 10, q, i, job_name, -1, i * 10 + 5)
        if i % 2:
            emit_started(i * 10 + 5, q, i, job_name, i * 10 + 5)


def test_records_round_trip_through_a_saved_file(tmp_path: Path) -> None:
    path = tmp_path / "events.simlog"
    rec = Recorder()
    log = EventLog([FileSink(path), rec])
    log.name("q")
    log.open()
    _fill(log, 7)
    fp = log.close()
    events = list(read_events(path))
    assert events == rec.events()
    assert events[0] == JobAdded(0, 0, 0, 0, 1, -1, 5)
    assert events[2] == JobStarted(2, 15, 0, 1, 2, 15)
    with SavedLog(path) as saved:
        chunks = list(saved.chunks())
        assert saved.complete
        assert saved.partial is False
        assert saved.fingerprint() == fp == saved.stored_fingerprint
        assert saved.names == ["q", "job0", "job1", "job2"]
    assert sum(c.n_events for c in chunks) == 7 + 3


def test_chunks_are_cut_by_count_and_the_fingerprint_does_not_depend_on_sinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "CHUNK_EVENTS", 4)
    a = EventLog([FileSink(tmp_path / "a.simlog")])
    b = EventLog([])
    for log in (a, b):
        log.open()
        _fill(log, 9)
    assert a.close() == b.close()
    with SavedLog(tmp_path / "a.simlog") as saved:
        sizes = [c.n_events for c in saved.chunks()]
    assert sizes == [4, 4, 4, 1]


def test_a_truncated_file_reads_up_to_its_last_complete_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "CHUNK_EVENTS", 4)
    path = tmp_path / "cut.simlog"
    log = EventLog([FileSink(path)])
    log.open()
    _fill(log, 9)
    log.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 60])
    with SavedLog(path) as saved:
        n = sum(c.n_events for c in saved.chunks())
        assert not saved.complete
    assert 0 < n < 13


def test_canonical_bytes_decode_to_the_same_chunk() -> None:
    table = np.array([[0, 10, 1, 2, 3, -1, 15], [1, 20, 1, 3, 4, 2, 25]], dtype=np.int64)
    chunk = Chunk(0, 2, {3: table}, [(5, "名字")])
    again = Chunk.from_bytes(chunk.to_bytes(), 0)
    assert np.array_equal(again.tables[3], table)
    assert again.new_names == [(5, "名字")]
    assert again.events() == [JobAdded(*table[0].tolist()), JobAdded(*table[1].tolist())]


@pytest.mark.parametrize("bad", [0.5, 2**63, "7"])
def test_a_field_that_is_not_an_int64_is_caught(bad: object) -> None:
    """A float must fail, not be truncated into the log; an int beyond int64 must fail, not
    wrap around (compiled or not)."""
    log = EventLog([])
    log.open()
    with pytest.raises(RuntimeError, match="RunEnded: a record had a field that is not an integer"):
        log.emit(RunEnded, 5, bad)


def test_a_record_with_the_wrong_number_of_fields_is_caught() -> None:
    log = EventLog([])
    log.open()
    log.emit(RunEnded, 5, 0, 99)  # one field too many
    with pytest.raises(RuntimeError, match="wrong number of fields"):
        log.close()
