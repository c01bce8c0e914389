"""Profiles and switches: the exact table, overrides, the scenario table and the generated doc."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from sim._native import source_path
from sim.cvsa.profile import (
    CVSA_2026,
    DESIGN,
    PROFILES,
    SWITCH_NAMES,
    Switches,
    UnknownSwitch,
    resolve,
)
from sim.scenario import ScenarioError, parse_scenario
from sim.scenario.design import NONE_WORDS
from sim.scenario.document import Scenario
from sim.scenario.profile_doc import render_markdown
from sim.scenario.switches import SwitchOverrides

DOC = Path(__file__).resolve().parents[2] / "docs" / "profiles.md"

# The table, (design, cvsa-2026), plus the additions found in reference §16.
EXPECTED = {
    "fallback_bare_window_start": (False, True),
    "cleanup_decrements": (True, False),
    "single_tick_takes_archive": (False, True),
    "bulk_aids_as_ids_bug": (False, True),
    "new_successors_forced": (False, True),
    "new_stop_at_bounds": (True, False),
    "collect_songs_fallback": (True, True),
    "piecewise_factor": (False, True),
    "wide_milestone_candidates": (False, True),
    "milestone_reeta_clamped": (True, False),
    "milestone_move_processing": (False, True),
    "regular_target_from_last_snapshot": (False, True),
    "bulk_reschedules_normal": (False, True),
    "dispatch_time_caps": (False, True),
    "dispatcher_locks": (True, True),
    "lock_release_bug": (False, True),
    "archive_keeps_time_of_day": (False, True),
    "bulk_failure_archive_to_normal": (False, True),
    "bili_error_blocks_aid": (True, True),
    "milestone_reached_strict": (False, True),
    "retry_policy": ("backoff", "cvsa"),
}


def test_profile_values_are_the_specified_table() -> None:
    assert set(SWITCH_NAMES) == set(EXPECTED)
    for name, (design, deployed) in EXPECTED.items():
        assert getattr(DESIGN, name) == design, name
        assert getattr(CVSA_2026, name) == deployed, name
        # bool and int compare equal in Python; the types must match too.
        assert type(getattr(DESIGN, name)) is type(design), name


def test_profile_names_match_the_scenario_literal() -> None:
    literal = typing.get_args(Scenario.model_fields["profile"].annotation)
    assert tuple(PROFILES) == literal
    assert PROFILES["design"] is DESIGN
    assert PROFILES["cvsa-2026"] is CVSA_2026


def test_every_switch_is_documented_and_cited() -> None:
    for f in dataclasses.fields(Switches):
        assert f.metadata["doc"].strip(), f.name
        assert f.metadata["basis"].strip(), f.name
        cite = f.metadata["cite"]
        assert "§" in cite or "seed" in cite, f.name


def _optional_fields(module: str, name: str) -> set[str]:
    """Fields of class ``name`` annotated ``... | None``, read from the source: compiled
    (sim._native), the class's own annotations are mypyc's erased types, without the ``None``."""
    source = source_path(module).read_text(encoding="utf-8")
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    return {
        node.target.id
        for node in cls.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and "None" in ast.unparse(node.annotation).split(" | ")
    }


def test_overrides_table_has_exactly_the_switches() -> None:
    assert set(SwitchOverrides.model_fields) == set(SWITCH_NAMES)
    assert set(typing.get_type_hints(Switches)) == set(SWITCH_NAMES)
    assert _optional_fields("sim.cvsa.profile", "Switches") == set()
    # The numbers that can be "no value" (a look-back, the refresh) have a word for it.
    assert _optional_fields("sim.cvsa.params", "Params") == set(NONE_WORDS)


@pytest.mark.parametrize("name", SWITCH_NAMES)
def test_each_switch_can_be_overridden_to_the_other_profile(name: str) -> None:
    value = getattr(CVSA_2026, name)
    expected = dataclasses.replace(DESIGN, **{name: value})
    assert resolve("design", checked({name: value})) == expected
    back = getattr(DESIGN, name)
    expected = dataclasses.replace(CVSA_2026, **{name: back})
    assert resolve("cvsa-2026", checked({name: back})) == expected


def test_resolve_without_overrides_is_the_profile() -> None:
    assert resolve("design", {}) == DESIGN
    assert resolve("cvsa-2026", {}) == CVSA_2026


def checked(overrides: dict[str, object]) -> dict[str, object]:
    """A ``[switches]`` table as the scenario layer validates it for :func:`resolve`."""
    return SwitchOverrides.model_validate(overrides).values()


def test_resolve_rejects_unknown_names_listing_the_known_ones() -> None:
    with pytest.raises(UnknownSwitch, match="known switches: fallback_bare_window_start, clean"):
        resolve("design", {"window_capp": 3})
    with pytest.raises(UnknownSwitch, match="known profiles: design, cvsa-2026"):
        resolve("cvsa", {})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("cleanup_decrements", 1),
        ("fallback_bare_window_start", "yes"),
        ("retry_policy", "exponential"),
    ],
)
def test_resolve_rejects_bad_values(name: str, value: object) -> None:
    with pytest.raises(ValidationError):
        resolve("design", checked({name: value}))


SCENARIO = """\
name = "switches"
duration = "1h"
profile = "cvsa-2026"

[switches]
fallback_bare_window_start = false
piecewise_factor = false
"""


def test_scenario_switches_table_and_set_override() -> None:
    s = parse_scenario(SCENARIO, overrides=["switches.cleanup_decrements=true"])
    assert s.switches.as_overrides() == {
        "fallback_bare_window_start": False,
        "piecewise_factor": False,
        "cleanup_decrements": True,
    }
    sw = resolve(s.profile, s.switches.values())
    assert sw == dataclasses.replace(
        CVSA_2026, fallback_bare_window_start=False, piecewise_factor=False, cleanup_decrements=True
    )


def test_scenario_without_switches_has_no_overrides() -> None:
    s = parse_scenario('name = "x"\nduration = "1h"\n')
    assert s.switches.as_overrides() == {}
    assert resolve(s.profile, s.switches.values()) == DESIGN


def test_scenario_switch_errors_name_file_line_key_and_known_keys() -> None:
    text = SCENARIO.replace("piecewise_factor = false", 'piecewise_factor = "no"\npiecewise = 3')
    with pytest.raises(ScenarioError) as err:
        parse_scenario(text, source="s.toml")
    problems = err.value.problems
    assert problems[0] == "s.toml:7: switches.piecewise_factor must be true or false (got 'no')"
    assert problems[1].startswith(
        "s.toml:8: switches.piecewise is not a known key (known keys: archive_keeps_time_of_day, "
    )


def test_a_number_written_as_a_switch_is_told_where_it_moved() -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(SCENARIO + "window_cap = 1500\n", source="s.toml")
    assert err.value.problems == [
        "s.toml:8: switches.window_cap is a number of the design: write it as "
        "design.window_cap (got switches.window_cap = 1500)"
    ]


def test_committed_doc_matches_the_generated_one() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/profiles.md is stale: run `python -m sim.scenario.profile_doc docs/profiles.md`"
    )


def test_doc_shows_values_as_a_scenario_writes_them() -> None:
    text = render_markdown()
    assert '| `single_tick_lookback_ms` | "unbounded" | "1m" |' in text
    assert '| `new_speed_floor_after_ms` | 0 | "2h" |' in text
    assert '| `retry_policy` | "backoff" | "cvsa" |' in text
    assert "| `window_cap` | 1000 | 3000 |" in text
    assert '| `new_initial_offsets_ms` | ["90s", "3m", "5m", "10m"] | same |' in text
    assert "| `regular_interval_bands` | [[6.0, 36], [120.0, 24], [320.0, 12]] | same |" in text
    assert (
        '| `new_interval_ladder` | [[1000.0, "15m"], [100.0, "1h"], [50.0, "2h"]] | same |' in text
    )
