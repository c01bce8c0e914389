"""Finding ``staleness``: no available song waits longer than the interval bound; songs that were
deleted, hidden or under review during a long gap are counted apart, by their code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.base import ReducerSink
from sim.metrics.findings import Finding, Severity, Staleness, findings_in
from sim.metrics.invariants import RunTruth, SongBaselines, StaleSongs, Unavailability
from sim.metrics.invariants.songs import NoCrossings
from sim.units import HOUR_MS
from tests.metrics.loglib import T0, Log

TZ = 8 * HOUR_MS
NEVER = np.iinfo(np.int64).max
BOUND = 74 * HOUR_MS
A, B, C, D, E = 11, 22, 33, 44, 55


def _unavailable(rows: Sequence[tuple[int, int, int, int]]) -> Unavailability:
    """(aid, from, until, code), sorted by aid."""
    cols = zip(*sorted(rows), strict=True) if rows else ((), (), (), ())
    return Unavailability(*(np.array(c, np.int64) for c in cols))


def _truth(songs: Mapping[int, int], unavailable: Unavailability) -> RunTruth:
    empty = np.empty(0, bool)
    return RunTruth(NoCrossings(), empty, empty, SongBaselines.of(songs), unavailable)


def _finding(
    log: Log, truth: RunTruth, fail_stale_songs: int = 1, slack: int = 2 * HOUR_MS
) -> Finding:
    reducer = Staleness(
        truth, TZ, max_interval=72 * HOUR_MS, slack=slack, fail_stale_songs=fail_stale_songs
    )
    (f,) = findings_in(log.reduce(reducer, cuts=(2, 5)))
    return f


def _fail_log() -> tuple[Log, RunTruth]:
    # D was under review for 10 h long before its gap: the gap is its scheduler's, not the API's.
    # E, classified during the run, is under review during its whole (open) gap: excused.
    review = _unavailable([(D, T0 + HOUR_MS, T0 + 11 * HOUR_MS, 62004), (E, T0, NEVER, 62004)])
    truth = _truth({B: T0, A: T0, D: T0}, review)  # not in aid order: the baselines sort them
    log = Log()
    log.taken(T0 + 12 * HOUR_MS, D, type="normal")
    log.taken(T0 + 10 * HOUR_MS, A, type="normal")
    log.classified(T0 + 11 * HOUR_MS, E)
    log.taken(T0 + 10 * HOUR_MS + BOUND + 1, A, type="milestone")  # closed gap, 1 ms over
    log.taken(T0 + 100 * HOUR_MS, D, type="normal")  # 88 h after its previous one
    log.taken(T0 + 50 * HOUR_MS, B, type="normal")
    log.ended(T0 + 150 * HOUR_MS)  # B: 100 h open at the end
    return log, truth


def test_ok_when_every_available_song_is_snapshotted_within_the_bound() -> None:
    gone = _unavailable([(C, T0 + HOUR_MS, NEVER, -404), (D, T0 - HOUR_MS, NEVER, 62002)])
    truth = _truth({A: T0, B: T0, C: T0, D: T0}, gone)
    log = Log()
    for k in range(1, 4):
        log.taken(T0 + k * 70 * HOUR_MS, A, type="normal")
        log.taken(T0 + k * 60 * HOUR_MS, B, type="normal")
    log.taken(T0 + 200 * HOUR_MS, B, type="normal")  # B: 20 h since its last at 180 h
    log.ended(T0 + 210 * HOUR_MS)  # C deleted, D hidden: never snapshotted, not counted
    f = _finding(log, truth)
    assert f.severity is Severity.OK
    assert f.numbers["songs"] == 4
    assert (f.numbers["stale_songs"], f.numbers["stale_gaps"]) == (0, 0)
    assert f.numbers["longest_gap_h"] == 70.0
    assert f.numbers["unavailable_songs"] == 2
    assert (f.numbers["unavailable.deleted"], f.numbers["unavailable.hidden"]) == (1, 1)
    assert f.sentence == (
        "No available song went longer than 74h without a snapshot (longest 70h, 4 songs); 2 "
        "songs went longer while deleted, hidden or under review and are not counted (deleted "
        "-404: 1, hidden 62002: 1)."
    )
    assert f.examples == ()
    # The invariant agrees: what it verified and what it excused.
    out = log.reduce(StaleSongs(truth.songs, unavailable=truth.unavailable))
    assert out["invariants.stale_songs.violations"] == 0
    assert out["invariants.stale_songs.unavailable"] == 2
    assert out["invariants.stale_songs.max_gap_s"] == 70 * 3600


def test_fails_on_an_available_song_over_the_bound() -> None:
    log, truth = _fail_log()
    f = _finding(log, truth)
    assert f.severity is Severity.FAIL
    assert (f.numbers["stale_songs"], f.numbers["stale_gaps"]) == (3, 3)
    assert f.numbers["longest_gap_h"] == 100.0
    assert f.numbers["unavailable_songs"] == 1
    assert f.numbers["unavailable.under_review"] == 1
    assert f.sentence == (
        "3 of 4 songs went longer than 74h without a snapshot while available (longest 100h; "
        "3 gaps); 1 song went longer while deleted, hidden or under review and is not "
        "counted (under review 62004: 1)."
    )
    assert [(e["aid"], e["gap"], e["open"], e["ended_by"]) for e in f.examples] == [
        (B, "4.2d", True, None),
        (D, "3.7d", False, "normal"),
        (A, "3.1d", False, "milestone"),
    ]
    assert f.examples[0]["from"] == "2031-01-08T02:00:00+08:00"
    assert _finding(log, truth, fail_stale_songs=4).severity is Severity.WARN
    out = log.reduce(StaleSongs(truth.songs, unavailable=truth.unavailable))
    assert out["invariants.stale_songs.violations"] == 3
    assert out["invariants.stale_songs.unavailable"] == 1
    assert [e["aid"] for e in out["invariants.stale_songs.examples"]] == [A, D, B]


def _with_monitor(
    log: Log, truth: RunTruth, slack: int, fed: list[int] | None = None
) -> tuple[Finding, Staleness, StaleSongs]:
    """The finding wired as a run wires it: after the invariant, in one group (``fed``: one item
    per chunk the invariant's gaps are fed)."""
    monitor = StaleSongs(truth.songs, unavailable=truth.unavailable)
    if fed is not None:
        gaps, feed = monitor.gaps, monitor.gaps.feed

        def counted(chunk: Chunk) -> None:
            fed.append(chunk.table(K.SnapshotTaken).shape[0])
            feed(chunk)

        gaps.feed = counted  # type: ignore[method-assign]
    finding = Staleness(
        truth,
        TZ,
        max_interval=72 * HOUR_MS,
        slack=slack,
        fail_stale_songs=1,
        monitor=monitor,
    )
    sink = ReducerSink([monitor, finding])
    for chunk in log.chunks(cuts=(2, 5)):
        sink.write(chunk, b"")
    (f,) = findings_in(sink.result())
    return f, finding, monitor


def test_the_finding_reads_the_invariants_gaps_when_the_bound_is_the_same() -> None:
    log, truth = _fail_log()
    alone = _finding(log, truth)
    fed: list[int] = []
    f, finding, monitor = _with_monitor(log, truth, slack=2 * HOUR_MS, fed=fed)
    assert finding.gaps is monitor.gaps  # one copy of the songs' arrays,
    assert len(fed) == len(log.chunks(cuts=(2, 5))) == 3  # fed once
    assert (f.sentence, f.numbers, f.examples) == (alone.sentence, alone.numbers, alone.examples)
    # Another bound (the finding's thresholds are the scenario's): its own gaps, fed by itself.
    alone = _finding(log, truth, slack=20 * HOUR_MS)
    f, finding, monitor = _with_monitor(log, truth, slack=20 * HOUR_MS)
    assert finding.gaps is not monitor.gaps
    assert (f.sentence, f.numbers, f.examples) == (alone.sentence, alone.numbers, alone.examples)
    assert f.numbers["stale_songs"] == 1  # B's 100 h only: the bound is 92 h
