"""``[design]``: every number of the rule book is a scenario key, checked by the book's rules."""

from __future__ import annotations

import dataclasses

import pytest

from sim.cvsa.param_rules import check_params
from sim.cvsa.params import CVSA_2026_PARAMS, DESIGN_PARAMS, FactorCoefficients, Params
from sim.cvsa.profile import InvalidParams, params_of
from sim.scenario import ScenarioError, parse_scenario
from sim.scenario.design import DesignOverrides
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS

HEAD = 'name = "knobs"\nduration = "1h"\n'


def scenario(design: str, profile: str = "design") -> str:
    return HEAD + f'profile = "{profile}"\n\n[design]\n{design}\n'


def test_every_number_of_the_book_is_a_key() -> None:
    assert list(DesignOverrides.model_fields) == [f.name for f in dataclasses.fields(Params)]


def test_a_scenario_without_design_runs_the_profile_numbers() -> None:
    assert parse_scenario(HEAD).params is DESIGN_PARAMS
    assert parse_scenario(HEAD + 'profile = "cvsa-2026"\n').params is CVSA_2026_PARAMS


def test_keys_take_the_scenario_spellings() -> None:
    s = parse_scenario(
        scenario(
            "window_cap = 250\n"
            'cleanup_overdue_ms = "5m"\n'
            "single_tick_limit = 40\n"
            'single_tick_lookback_ms = "unbounded"\n'
            'window_refresh_every_ms = "10m"\n'
            "milestone_eta_limit_h = 200\n"
            'eta_lookbacks_ms = ["3m", "1h", 86400000]\n'
            "regular_interval_bands = [[10, 48], [200, 12]]\n"
            'new_interval_ladder = [[500, "30m"]]\n'
            "milestone_factor.offset = 0.7\n",
            profile="cvsa-2026",
        )
    )
    p = s.params
    assert (p.window_cap, p.cleanup_overdue_ms, p.single_tick_limit) == (250, 5 * MINUTE_MS, 40)
    assert p.single_tick_lookback_ms is None  # cvsa-2026's 1 min, lifted
    assert p.window_refresh_every_ms == 10 * MINUTE_MS
    assert p.milestone_eta_limit_h == 200.0
    assert p.eta_lookbacks_ms == (3 * MINUTE_MS, HOUR_MS, 24 * HOUR_MS)
    assert p.regular_interval_bands == ((10.0, 48), (200.0, 12))
    assert p.new_interval_ladder == ((500.0, 30 * MINUTE_MS),)
    assert p.milestone_factor == FactorCoefficients(1.054, 4.5, 100.0, 0.7, 455, 4.5)
    # What the table leaves alone is the profile's.
    assert p.bulk_tick_lookback_ms == CVSA_2026_PARAMS.bulk_tick_lookback_ms == 2 * MINUTE_MS
    assert p.snapshot_tick_every_ms == SECOND_MS


def test_set_reaches_a_design_key() -> None:
    s = parse_scenario(HEAD, overrides=["design.window_cap=20", 'design.window_ms="10m"'])
    assert (s.params.window_cap, s.params.window_ms) == (20, 10 * MINUTE_MS)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('window_ms = "7m"', 's.toml:6: design.window_ms must divide a day (got "7m")'),
        (
            'milestone_delay_min_ms = "2h"',
            "s.toml:6: design.milestone_delay_min_ms must be below milestone_delay_max_ms (72m) "
            '(got "2h")',
        ),
        (
            "regular_interval_bands = [[120, 24], [6, 36]]",
            "s.toml:6: design.regular_interval_bands must have thresholds > 0 that ascend "
            "(got [[120.0, 24], [6.0, 36]])",
        ),
        (
            'new_interval_ladder = [[50, "2h"], [1000, "15m"]]',
            "s.toml:6: design.new_interval_ladder must have thresholds that descend (the "
            'fastest band first) (got [[50.0, "2h"], [1000.0, "15m"]])',
        ),
        ("window_cap = 0", "s.toml:6: design.window_cap must be > 0 (got 0)"),
        (
            "single_tick_limit = 2.5",
            "s.toml:6: design.single_tick_limit must be an integer (got 2.5)",
        ),
        (
            'window_refresh_every_ms = "unbounded"',
            "s.toml:6: design.window_refresh_every_ms must be a duration such as '90s' or '2h', "
            "or an integer number of milliseconds, or 'never' (got 'unbounded')",
        ),
        (
            "archive_song_weekday = 7",
            "s.toml:6: design.archive_song_weekday must be a weekday 0-6 (0 = Sunday) (got 7)",
        ),
        (
            "milestone_factor.floor = 200",
            "s.toml:6: design.milestone_factor must have floor below ceiling "
            "(got {base = 1.054, numerator = 4.5, ceiling = 100.0, offset = 0.601, knee = 455, "
            "floor = 200.0})",
        ),
    ],
)
def test_errors_name_file_line_key_rule_and_value(line: str, problem: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(scenario(line), source="s.toml")
    assert err.value.problems == [problem]


def test_an_error_from_set_names_the_flag() -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(HEAD, source="s.toml", overrides=['design.window_ms="7m"'])
    assert err.value.problems == [
        's.toml: design.window_ms must divide a day (got "7m") [from --set design.window_ms="7m"]'
    ]


def test_cross_field_rules_hold_against_the_profile_values() -> None:
    # The max alone is fine for design (2 s min) but not below the min.
    assert parse_scenario(scenario('milestone_delay_max_ms = "3s"')).params.milestone_delay_max_ms
    with pytest.raises(ScenarioError, match="milestone_delay_min_ms must be below"):
        parse_scenario(scenario('milestone_delay_max_ms = "1s"'))


def test_the_book_checks_its_own_numbers() -> None:
    assert check_params(DESIGN_PARAMS) == check_params(CVSA_2026_PARAMS) == []
    bad = dataclasses.replace(DESIGN_PARAMS, window_ms=7 * MINUTE_MS, bulk_batch_size=0)
    assert [(p.name, p.rule) for p in check_params(bad)] == [
        ("bulk_batch_size", "must be > 0"),
        ("window_ms", "must divide a day"),
    ]
    with pytest.raises(InvalidParams, match="window_ms must divide a day"):
        params_of("design", {"window_ms": 7 * MINUTE_MS})
