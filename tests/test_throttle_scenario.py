"""``throttle-adaptive`` with and without the adaptive response (issue 28): slowing down lowers
the throttled share in the storm and spares videos their -412 status; and the keys' refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scenario.parse import ScenarioError
from sim.scheduler import build_cvsa_model

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "throttle-adaptive.toml"


def _finding(*overrides: str) -> dict[str, object]:
    scenario = load_scenario(SCENARIO, overrides=['duration="2h"', *overrides])
    metrics = run_scenario(scenario, build_cvsa_model).metrics
    return {k.split(".", 2)[2]: v for k, v in metrics.items() if k.startswith("findings.throttle.")}


def test_the_adaptive_response_lowers_the_throttled_share_of_the_storm() -> None:
    on, off = _finding(), _finding("upstream.adaptive.enabled=false")
    assert on["rate_drops"] >= 1  # type: ignore[operator]
    assert "rate_drops" not in off
    assert on["storm_throttled_share"] < off["storm_throttled_share"] - 0.1  # type: ignore[operator]
    assert on["blocked_412"] < off["blocked_412"]  # type: ignore[operator]
    assert on["held_back"] > off["held_back"] == 0  # type: ignore[operator]
    assert on["http_4xx_retried"] == off["http_4xx_retried"] == 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("upstream.risk_control.enabled=false", "risk_control_storm fault needs"),
        ("upstream.adaptive.restore_below=0.5", "restore_below must be <= threshold"),
        ("upstream.errors.http_4xx=0.999", "error rates must sum to <= 1"),
    ],
)
def test_bad_keys_are_refused_in_one_line(override: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        load_scenario(SCENARIO, overrides=[override])
