"""Reducers in a second process (``[engine] reducers = "process"``): the same metrics and report
as inline, bit for bit; a failing or vanished child is a clear error, never a hang."""

from __future__ import annotations

import select
import weakref
from pathlib import Path
from typing import Any

import pytest

from sim.events.engine_kinds import RunEnded
from sim.events.log import MAGIC, header_bytes
from sim.metrics import ReducerSink, engine_reducers
from sim.metrics.remote import ProcessReducerSink, ReducerProcessError, merged_result
from sim.runner import RunOptions, run_scenario
from sim.scenario import Scenario, load_scenario
from sim.scheduler import build_cvsa_model
from tests.conftest import DATA
from tests.metrics.loglib import NAMES, Log


def _with_reducers(scenario: Scenario, where: str) -> Scenario:
    engine = scenario.engine.model_copy(update={"reducers": where})
    return scenario.model_copy(update={"engine": engine})


def test_a_run_reports_the_same_metrics_and_tables_either_way(tmp_path: Path) -> None:
    scenario = load_scenario(DATA / "small.toml")
    outputs: dict[str, dict[str, bytes]] = {}
    for where in ("inline", "process"):
        out = tmp_path / where
        options = RunOptions(out_dir=out, report=True, plots=False)
        result = run_scenario(_with_reducers(scenario, where), build_cvsa_model, options)
        assert result.manifest["reducers"]["where"] == where
        outputs[where] = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix == ".csv"}
        outputs[where]["summary.json"] = (out / "summary.json").read_bytes()
    assert len(outputs["inline"]) > 5  # the report's tables, and the summary
    assert outputs["process"] == outputs["inline"]


def test_auto_runs_a_big_catalogue_in_a_second_process() -> None:
    from sim.runner import _in_process

    small = load_scenario(DATA / "small.toml")
    big = small.model_copy(
        update={"catalog": small.catalog.model_copy(update={"non_songs": 200_000})}
    )
    assert _in_process(small) is False
    assert _in_process(big) is True
    assert _in_process(_with_reducers(big, "inline")) is False
    assert _in_process(_with_reducers(small, "process")) is True


def _records() -> Log:
    log = Log()
    for i in range(40):
        log.add(RunEnded, 1_000 * i, 0)
    return log


class Explodes:
    """A reducer that fails on the chunk holding its ``at``-th event (imported by the child)."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.seen = 0

    def feed(self, chunk: Any, names: Any) -> None:
        self.seen += chunk.n_events
        if self.seen > self.at:
            raise ValueError(f"boom after {self.seen} events")

    def result(self) -> dict[str, Any]:
        return {"explodes.seen": self.seen}


def _feed(sink: ProcessReducerSink | ReducerSink, log: Log, cuts: list[int]) -> None:
    sink.open(MAGIC + header_bytes(NAMES))
    for chunk in log.chunks(cuts):
        sink.write(chunk, chunk.to_bytes())
    sink.close("", False)


def test_the_sink_gives_the_inline_results_for_any_chunking() -> None:
    log = _records()
    inline = ReducerSink(engine_reducers())
    _feed(inline, log, [])
    remote = ProcessReducerSink()
    remote.add(engine_reducers(), merged_result)
    remote.add([Explodes(at=10**9)], merged_result)
    _feed(remote, log, [3, 17, 18])
    assert remote.outcomes == [inline.result(), {"explodes.seen": 40}]
    assert remote.child_peak_kb > 0


def test_once_the_log_opens_this_process_lets_the_reducers_go() -> None:
    # The child computes them: copies kept here would hold the run's truth for the whole run.
    remote = ProcessReducerSink()
    reducer = Explodes(at=10**9)
    remote.add([reducer], merged_result)
    gone = weakref.ref(reducer)
    del reducer
    assert gone() is not None  # the sink holds it until it has sent it
    _feed(remote, _records(), [7])
    assert gone() is None
    assert remote.outcomes == [{"explodes.seen": 40}]


def test_a_failing_reducer_is_an_error_with_the_childs_traceback() -> None:
    remote = ProcessReducerSink()
    remote.add([Explodes(at=5)], merged_result)

    def feed_and_read() -> None:
        # Raised by a write once the child's answer is there, else when the outcomes are read.
        _feed(remote, _records(), [10, 20, 30])
        _ = remote.outcomes

    with pytest.raises(ReducerProcessError, match=r"(?s)failed.*ValueError: boom after 10 events"):
        feed_and_read()
    assert remote._proc.poll() is not None  # the child is gone


def test_a_child_that_dies_is_an_error_not_a_hang() -> None:
    remote = ProcessReducerSink()
    remote.add(engine_reducers(), merged_result)
    remote.open(MAGIC + header_bytes(NAMES))
    remote._proc.kill()
    remote._proc.wait()
    chunk = _records().chunks([10])[0]
    with pytest.raises(ReducerProcessError, match="exited with code -9 without an answer"):
        remote.write(chunk, chunk.to_bytes())


def test_the_answer_is_read_when_the_outcomes_are_asked_for() -> None:
    """Closing the log neither waits for the child nor sets it computing: the run's process
    frees its model first, then asks. A child ended before it answered is an error, not a hang."""
    log = _records()
    remote = ProcessReducerSink()
    remote.add([Explodes(at=10**9)], merged_result)
    _feed(remote, log, [7])
    assert remote._outcomes is None  # closed, not yet read
    # Not told of the end yet, it does not answer (it computes once asked, after the model is
    # gone); a child told at close answers within the wait (it starts and answers in ~1 s).
    assert select.select([remote._from], [], [], 3.0)[0] == []
    assert remote.outcomes == [{"explodes.seen": 40}]
    ended = ProcessReducerSink()
    ended.add([Explodes(at=10**9)], merged_result)
    _feed(ended, log, [])
    ended.terminate()
    with pytest.raises(ReducerProcessError, match="ended before it answered"):
        _ = ended.outcomes


def test_terminate_before_the_log_opens_ends_the_child() -> None:
    remote = ProcessReducerSink()
    remote.terminate()
    assert remote._proc.poll() is not None
    remote.terminate()  # idempotent
