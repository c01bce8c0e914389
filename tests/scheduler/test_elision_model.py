"""Tick elision leaves the CVSA model's log byte-identical, in both profiles."""

from __future__ import annotations

import pytest

from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from tests.conftest import DATA


@pytest.mark.parametrize("profile", ["design", "cvsa-2026"])
def test_elision_on_and_off_give_the_same_log(profile: str) -> None:
    runs = {}
    for elide in (True, False):
        scenario = load_scenario(
            DATA / "small.toml",
            overrides=[
                f'profile="{profile}"',
                f"engine.elide_idle_ticks={str(elide).lower()}",
                'duration="6h"',
            ],
        )
        runs[elide] = run_scenario(scenario, build_cvsa_model)
    on, off = runs[True], runs[False]
    assert on.manifest["event_log_sha256"] == off.manifest["event_log_sha256"]
    assert on.metrics["snapshots.total"] > 50  # the model did real work
    assert on.engine.processed * 5 < off.engine.processed  # and elision skipped most ticks
