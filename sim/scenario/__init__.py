"""Scenario files: the validated model, loading with clear errors, overrides."""

from sim.scenario.document import EngineSection, Scenario
from sim.scenario.parse import ScenarioError, load_scenario, parse_scenario, scenario_sha256

__all__ = [
    "EngineSection",
    "Scenario",
    "ScenarioError",
    "load_scenario",
    "parse_scenario",
    "scenario_sha256",
]
