"""The metric catalogue declares every metric a run writes, exactly once (issue 29): a new
metric without a declaration fails here; docs/report.md's table of names is the catalogue's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sim.events import cvsa_kinds as K
from sim.metrics.catalogue import (
    CATALOGUE,
    Good,
    concrete_names,
    good_direction,
    specs_for,
    unknown_metric,
    with_table,
)
from sim.metrics.wall_timing import LoadMetrics
from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from tests.metrics.loglib import T0, chunks_of, reduce

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
RUNS = {
    # every mechanism of issue 28 on: the write path, modes, throttling, retries, a crash
    "small-operations": (DATA / "small-operations.toml", []),
    # the default mechanisms, with videos near a milestone so that captures have latencies
    "small": (
        DATA / "small.toml",
        ['duration="6h"', "curves.weights.approacher=0.002", "upstream.errors.timeout=0.01"],
    ),
    # a second deployment (``#2`` names, the dispatcher lock) and the job table's runner
    "two-instances": (
        DATA / "small.toml",
        [
            'duration="3h"',
            'faults=[{kind="second_instance", start="1h", duration="1h", phase="0.5s"}]',
        ],
    ),
    "small-table": (DATA / "small-table.toml", []),
}


@pytest.fixture(scope="module")
def written() -> dict[str, dict[str, Any]]:
    """The metrics of each run in :data:`RUNS`, and of the load harness's reducer."""
    out = {}
    for name, (path, sets) in RUNS.items():
        scenario = load_scenario(path, overrides=sets)
        out[name] = run_scenario(scenario, build_cvsa_model).metrics
    records = [
        K.PortCall(0, T0, 0, 1_000),
        K.JobTimed(1, T0, 1, -1, 2_000, 12_000, 10_000),
    ]
    names = ["store.due_schedules", "snapshotTick"]
    out["load"] = reduce(LoadMetrics(), chunks_of(records), names)
    return out


def test_every_metric_a_run_writes_is_declared_exactly_once(
    written: dict[str, dict[str, Any]],
) -> None:
    seen = {name for metrics in written.values() for name in metrics}
    assert any(n.startswith("findings.") for n in seen)
    assert any("#2" in n for n in seen)  # the second deployment ran
    assert any(n.startswith("load.") for n in seen)
    assert any(n.startswith("milestones.capture_latency.p99") for n in seen)
    undeclared = sorted(n for n in seen if not specs_for(n))
    assert undeclared == [], "declare these in sim/metrics/catalogue.py"
    twice = {n: [s.name for s in specs_for(n)] for n in seen if len(specs_for(n)) > 1}
    assert twice == {}


def test_placeholders_come_from_the_vocabularies() -> None:
    names = set(concrete_names())
    for word in K.SNAPSHOT_TYPE.words:
        assert f"lateness.{word}.p99_s" in names
    for word in K.UPSTREAM_ERROR.words:
        assert f"upstream.failed.{word}" in names
    assert "periodic.scheduleCleanup.missed_slots" in names
    assert "queries.bulkSnapshotVideo.reads" in names
    assert "events.by_kind.SnapshotTaken" in names
    assert specs_for("periodic.snapshotTick#2.iterations")  # a second deployment
    assert specs_for("findings.executed_load.requests.any-proxy.peak")  # proxies are open
    assert not specs_for("lateness.nonsense.p99_s")
    assert not specs_for("periodic.noSuchJob.iterations")


def test_directions() -> None:
    assert good_direction("lateness.new.p99_s") is Good.LOWER
    assert good_direction("milestones.captured") is Good.HIGHER
    assert good_direction("snapshots.total") is Good.NEITHER
    assert good_direction("windows.placement.forward") is Good.NEITHER
    assert good_direction("windows.placement.exhausted") is Good.LOWER
    assert good_direction("no.such_metric") is None


def test_unknown_names_say_what_is_closest() -> None:
    assert unknown_metric("lateness.new.p99_s") is None
    assert unknown_metric("lateness.*.p99_s") is None
    assert unknown_metric("findings.*.severity") is None
    assert unknown_metric("snapshot.total") == (
        "no run writes a metric named snapshot.total; did you mean snapshots.total, "
        "snapshots.normal or snapshots.new?"
    )
    assert unknown_metric("wat.*") == (
        "the pattern wat.* matches no metric a run writes; docs/report.md lists every name "
        "under 'Metric names'"
    )
    assert unknown_metric("my.own", extra=["my.own"]) is None  # a name the runs have


def test_the_docs_list_the_catalogue() -> None:
    doc = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    assert with_table(doc) == doc, "run: python -m sim.metrics.catalogue docs/report.md"
    for spec in CATALOGUE:
        assert f"| `{spec.name}` | {spec.good.value} |" in doc
