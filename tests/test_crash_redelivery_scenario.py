"""scenarios/crash-redelivery.toml and its "lost" twin: the crash's running jobs are delivered
again by the stalled check, or lost without it (issue 28; docs/redelivery.md)."""

from __future__ import annotations

from pathlib import Path

from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "crash-redelivery.toml"
# A smaller world and a shorter run (the faults at 12:00 still fall inside it).
SMALL = ["catalog.songs=300", "catalog.non_songs=2700", 'duration="12h5m"']


def _delivery(overrides: list[str]) -> dict[str, object]:
    metrics = run_scenario(load_scenario(SCENARIO, overrides=SMALL + overrides), build_cvsa_model)
    p = "findings.delivery."
    return {k.removeprefix(p): v for k, v in metrics.metrics.items() if k.startswith(p)}


def test_crash_jobs_are_redelivered_and_finish() -> None:
    d = _delivery([])
    assert d["severity"] == "ok"
    assert d["lost"] == 0
    assert d["abandoned"] > 0
    assert d["redelivered_stalled"] == d["stalled"] == d["abandoned"]
    assert d["redelivered_finished"] == d["abandoned"]
    assert d["dropped_stalled_limit"] == 0
    assert str(d["sentence"]).startswith("No job was given up: crashes abandoned")


def test_the_lost_twin_loses_them() -> None:
    on, off = _delivery([]), _delivery(["delivery.stalled_check=false"])
    assert off["lost"] == on["abandoned"]
    assert off["abandoned"] == off["stalled"] == 0
    assert "`JobLost`), never delivered again" in str(off["sentence"])
