"""Scenario files: the validated model, loading with clear errors, overrides."""

from sim.scenario.load import ScenarioError, load_scenario, parse_scenario, scenario_sha256
from sim.scenario.model import EngineSection, Scenario

__all__ = [
    "EngineSection",
    "Scenario",
    "ScenarioError",
    "load_scenario",
    "parse_scenario",
    "scenario_sha256",
]
