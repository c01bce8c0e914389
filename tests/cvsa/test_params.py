"""The design's numbers: one Params object, documented, and no number left as a module constant."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from sim.cvsa.params import DEFAULT_PARAMS, FactorCoefficients, Params
from sim.cvsa.profile import PARAM_NAMES, PROFILE_PARAMS, PROFILES, UnknownSwitch, params_of
from sim.scenario.profile_doc import render_markdown

SIM = Path(__file__).resolve().parents[2] / "sim"

ALLOWED_CONSTANTS = {
    # 1970-01-01 was a Thursday: a fact of the calendar, not of the design.
    ("cvsa/calendar.py", "_EPOCH_WEEKDAY"),
    # Codes and sentinels, not numbers of the design.
    ("scheduler/context.py", "NEVER"),
    ("scheduler/feed.py", "_DISCOVER"),
    ("scheduler/feed.py", "_CLASSIFY"),
    ("scheduler/metering.py", "READ"),
    ("scheduler/metering.py", "WRITE"),
    ("scheduler/metering.py", "REDIS"),
    # A unit: the rate factor at full rate, in permille (issue 28).
    ("cvsa/throttle.py", "FULL"),
    # How many videos the simulator hands the store at once while loading (memory, issue 30).
    ("scheduler/feed.py", "LOAD_CHUNK"),
}


def test_every_number_is_documented_and_cited() -> None:
    for f in dataclasses.fields(Params):
        assert f.metadata["doc"].strip(), f.name
        cite = f.metadata["cite"]
        assert "§" in cite or "seed" in cite, f.name


def test_units_are_in_the_names() -> None:
    for f in dataclasses.fields(Params):
        value = getattr(DEFAULT_PARAMS, f.name)
        if f.name.endswith("_ms"):
            items = value if isinstance(value, tuple) else (value,)
            assert all(isinstance(v, int) or v is None for v in items), f.name


# The numbers on which the note and the deployed code differ, (design, cvsa-2026) (§16).
DIFFERING = {
    "window_cap": (1000, 3000),
    "window_refresh_every_ms": (None, 300_000),
    "single_tick_lookback_ms": (None, 60_000),
    "bulk_tick_lookback_ms": (None, 120_000),
    "archive_bulk_priority": (2, 3),
    "new_speed_floor_after_ms": (0, 7_200_000),
}


def test_the_profiles_differ_only_in_the_numbers_of_section_16() -> None:
    assert set(PROFILE_PARAMS) == set(PROFILES)
    design, deployed = params_of("design"), params_of("cvsa-2026")
    assert design == Params()
    differ = {
        f.name: (getattr(design, f.name), getattr(deployed, f.name))
        for f in dataclasses.fields(Params)
        if getattr(design, f.name) != getattr(deployed, f.name)
    }
    assert differ == DIFFERING
    for name in DIFFERING:  # why design has its value
        assert dataclasses.fields(Params)[PARAM_NAMES.index(name)].metadata["basis"], name
    assert (design.forward_search_windows, design.backward_search_windows) == (4032, 6)
    assert design.bulk_batch_size == 30


def test_both_profiles_share_the_numbers_of_the_note() -> None:
    p = DEFAULT_PARAMS
    assert (p.window_ms, p.bulk_tick_limit, p.single_tick_limit) == (300_000, 1000, 10)
    assert (p.cleanup_overdue_ms, p.milestone_eta_limit_h) == (120_000, 144.0)
    assert (p.milestone_delay_min_ms, p.milestone_delay_max_ms) == (2_000, 4_320_000)
    assert p.milestone_factor == FactorCoefficients(1.054, 4.5, 100.0, 0.601, 455, 4.5)
    with pytest.raises(UnknownSwitch, match="known profiles"):
        params_of("cvsa")


def test_the_doc_lists_every_number() -> None:
    text = render_markdown()
    for f in dataclasses.fields(Params):
        assert f"| `{f.name}` |" in text, f.name


def _module_numbers(path: Path) -> list[str]:
    """Names bound at module level to a number (or a tuple of numbers)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if not isinstance(target, ast.Name) or value is None:
            continue
        nodes = list(ast.walk(value))
        consts = [n.value for n in nodes if isinstance(n, ast.Constant)]
        numbers = consts and all(isinstance(c, int | float) for c in consts)
        if numbers and not any(isinstance(n, ast.Call | ast.Dict) for n in nodes):
            names.append(target.id)
    return names


def test_no_number_of_the_design_is_a_module_constant() -> None:
    found = {
        (str(path.relative_to(SIM)), name)
        for package in ("cvsa", "scheduler")
        for path in sorted((SIM / package).glob("*.py"))
        for name in _module_numbers(path)
    }
    assert found - ALLOWED_CONSTANTS == set(), "put design numbers in sim.cvsa.params.Params"


def test_the_guard_finds_a_constant(tmp_path: Path) -> None:
    module = tmp_path / "rule.py"
    module.write_text(
        "LIMIT = 10\nLOOKBACKS: tuple[int, ...] = (1, 2)\nTICK_MS = 15 * SECOND_MS\nX = f(3)\n"
    )
    assert _module_numbers(module) == ["LIMIT", "LOOKBACKS", "TICK_MS"]
