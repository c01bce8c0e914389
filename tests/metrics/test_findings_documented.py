"""Every finding a run writes is documented in docs/report.md, and a documented finding with
thresholds has them in the scenario's ``[findings]`` table."""

from __future__ import annotations

import re
from pathlib import Path

from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scenario.thresholds import FindingsSection
from sim.scheduler import build_cvsa_model

ROOT = Path(__file__).resolve().parents[2]


def test_every_finding_of_a_run_is_documented_and_its_thresholds_are_scenario_keys() -> None:
    # The findings of mechanisms that are off by default (seed 003's write path and modes, the
    # stalled check) are only written for runs that use them: switched on here, so that every
    # finding runs.
    scenario = load_scenario(
        ROOT / "tests" / "data" / "small.toml",
        overrides=[
            'duration="1h"',
            "write_path.enabled=true",
            "modes.enabled=true",
            "delivery.stalled_check=true",
        ],
    )
    metrics = run_scenario(scenario, build_cvsa_model).metrics
    ran = {k.split(".")[1] for k in metrics if k.startswith("findings.")}
    doc = (ROOT / "docs" / "report.md").read_text()
    documented = set(re.findall(r"^### Finding `([a-z_]+)`$", doc, re.MULTILINE))
    assert ran == documented
    assert set(FindingsSection.model_fields) <= ran  # no table for a finding that is not run
    for fid in ran:
        severity = metrics[f"findings.{fid}.severity"]
        assert severity in ("ok", "info", "warn", "fail")
        assert metrics[f"findings.{fid}.sentence"].endswith(".")
