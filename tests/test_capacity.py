"""``sim capacity``: the probe sequence (exact lists of probed values) and the command."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sim.cli import cli
from sim.scenario.frontier import Find, FrontierSearch
from tests.conftest import DATA


def search(
    find: Find, start: float, integer: bool, holds: Callable[[float], bool], **kw: float
) -> tuple[list[float], float | None, float | None]:
    s = FrontierSearch(find, start, integer, **kw)  # type: ignore[arg-type]
    probed = []
    while (value := s.next_value()) is not None:
        probed.append(value)
        s.record(value, holds(value))
    f = s.frontier()
    return probed, f.holds.value if f.holds else None, f.fails.value if f.fails else None


def test_a_resource_halves_from_the_scenario_value_then_bisects() -> None:
    probed, good, bad = search("min", 1000, True, lambda v: v >= 12)
    assert probed == [1000, 500, 250, 125, 63, 32, 16, 8, 12, 10, 11]
    assert (good, bad) == (12, 11)


def test_a_load_doubles_then_bisects_to_the_precision() -> None:
    probed, good, bad = search("max", 100_000, True, lambda v: v <= 1_234_567)
    assert probed[:6] == [100_000, 200_000, 400_000, 800_000, 1_600_000, 1_200_000]
    assert good is not None
    assert bad is not None
    assert good <= 1_234_567 < bad
    assert bad - good <= 0.01 * good


def test_a_bracket_costs_no_probe_of_its_own() -> None:
    # 2x bracket, 1 %: 7 bisections; the ends are never probed when the frontier is inside.
    probed, good, bad = search(
        "max", 1, True, lambda v: v <= 1_234_567, low=1_000_000, high=2_000_000
    )
    assert len(probed) <= 8
    assert 1_000_000 not in probed
    assert 2_000_000 not in probed
    assert good is not None
    assert bad is not None
    assert good <= 1_234_567 < bad
    assert search("min", 1000, True, lambda v: v >= 12, low=8, high=16)[0] == [12, 10, 11]


def test_an_end_that_contradicts_the_bracket_is_probed_and_reported() -> None:
    probed, good, bad = search("max", 1, True, lambda v: v <= 3, low=1_000, high=2_000)
    assert probed[-1] == 1_000
    assert (good, bad) == (None, 1_000)
    probed, good, bad = search("max", 1, True, lambda v: True, low=1_000, high=2_000)
    assert probed[-1] == 2_000
    assert (good, bad) == (2_000, None)


def test_a_number_key_bisects_to_a_relative_precision() -> None:
    probed, good, bad = search("max", 1.5, False, lambda v: v <= 0.37, precision=0.05)
    assert probed[:3] == [1.5, 0.75, 0.375]
    assert good is not None
    assert bad is not None
    assert good <= 0.37 < bad <= good * 1.05


def guided(
    find: Find, start: float, gates: dict[str, Callable[[float], float]], **kw: float
) -> tuple[list[float], float | None, float | None]:
    """A search whose probes report margins: each gate maps the value to its log margin."""
    s = FrontierSearch(find, start, True, **kw)  # type: ignore[arg-type]
    probed = []
    while (value := s.next_value()) is not None and len(probed) < 60:
        probed.append(value)
        margins = {name: gate(value) for name, gate in gates.items()}
        s.record(value, min(margins.values()) >= 0, margins)
    f = s.frontier()
    return probed, f.holds.value if f.holds else None, f.fails.value if f.fails else None


def test_margins_find_a_proportional_frontier_in_a_few_probes() -> None:
    # A load whose gated number scales with it: the first guess lands half a precision inside.
    probed, good, bad = guided("max", 100_000, {"p99": lambda v: math.log(1_234_567 / v)})
    assert probed == [100_000, 1_228_440, 1_240_724]
    assert good is not None
    assert bad is not None
    assert good <= 1_234_567 < bad <= good * 1.01
    # A fixed part plus a proportional one (the rows other videos book, and the songs'), from
    # above: the secant of two failing probes is exact.
    share = {"share": lambda v: -math.log(0.92 + v * 0.08 / 17_500)}
    probed, good, bad = guided("max", 200_000, share)
    assert (len(probed), good, bad) == (4, 17_413, 17_587)
    # A resource (a cap) against a share that falls as 1/cap: the unit, in three probes.
    probed, good, bad = guided("min", 1000, {"share": lambda v: math.log(0.8 / (2.7 / v))})
    assert (probed, good, bad) == ([1000, 4, 3], 4, 3)


def test_a_gate_that_does_not_move_has_no_frontier() -> None:
    flat = {"flat": lambda v: 0.3, "p99": lambda v: math.log(50_000 / v)}
    probed, good, bad = guided("max", 1_000, flat)
    assert good is not None
    assert bad is not None
    assert good <= 50_000 < bad <= good * 1.01
    assert len(probed) <= 6


def test_unhelpful_margins_still_end_at_the_precision() -> None:
    step = {"step": lambda v: 2.3 if v < 5_000 else -2.3}  # says nothing of where it steps
    probed, good, bad = guided("max", 100, step)
    assert good is not None
    assert bad is not None
    assert good < 5_000 <= bad <= good * 1.01
    assert len(probed) <= 16
    quadratic = {"q": lambda v: math.log(1_234.5 / (10 * (v / 1_000) ** 2))}
    probed, good, bad = guided("max", 1_000, quadratic)
    assert good is not None
    assert bad is not None
    assert good <= 11_111 < bad <= good * 1.01
    assert len(probed) <= 8


def test_margins_that_contradict_the_verdict_are_ignored() -> None:
    s = FrontierSearch("max", 100, True)
    s.record(100, True, {"gate": -1.0})
    s.record(200, False, {"gate": 0.5})
    assert [p.margins for p in s.probes] == [None, None]


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="--low must be below --high"):
        FrontierSearch("max", 1, True, low=5, high=5)


SMALL = [str(DATA / "small.toml"), "--set", 'duration="12h"', "-q", "--no-plots"]
GATE = ["--set", 'expect."findings.capacity.severity"="<= info"']


def test_the_smallest_cap_that_holds(tmp_path: Path) -> None:
    args = ["capacity", *SMALL, *GATE, "--vary", "design.window_cap", "--low", "1"]
    r = CliRunner().invoke(cli, [*args, "--high", "8", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "capacity.json").read_text())
    assert (doc["holds"], doc["fails"], doc["find"]) == (4, 3, "min")
    # The middle, then where the capacity finding's score (its peak share against the warn
    # share) puts the frontier, on its passing side, then the confirmation one below.
    assert [p["value"] for p in doc["probes"]] == [5, 4, 3]
    assert "The smallest design.window_cap at which every gate holds is 4; at 3 " in r.output
    assert "findings.capacity.severity was warn (needs <= info)" in r.output
    for p in doc["probes"]:  # every probe is a normal run with its report
        assert (Path(p["run"]) / "summary.json").is_file()


def test_the_plot_is_drawn(tmp_path: Path) -> None:
    args = ["capacity", *SMALL[:-1], *GATE, "--vary", "design.window_cap", "--low", "2"]
    r = CliRunner().invoke(cli, [*args, "--high", "5", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "capacity.png").stat().st_size > 10_000


def test_no_value_holds_exits_99(tmp_path: Path) -> None:
    args = ["capacity", *SMALL, *GATE, "--vary", "design.window_cap", "--low", "1"]
    r = CliRunner().invoke(cli, [*args, "--high", "2", "--out", str(tmp_path)])
    assert r.exit_code == 99, r.output
    assert "No probed value of design.window_cap holds every gate" in r.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--vary", "design.window_cap"], "has no [expect] thresholds"),
        ([*GATE, "--vary", "design.no_such"], "design.no_such is not a key of the scenario"),
        ([*GATE, "--vary", "profile"], "profile is not a number"),
        ([*GATE, "--vary", "design.window_cap", "--precision", "5x"], "'--precision'"),
    ],
)
def test_usage_errors_name_what_is_wrong(extra: list[str], message: str) -> None:
    scenario = DATA / "small.toml"
    no_expect = ["--set", "expect={}"] if "[expect]" in message else []
    r = CliRunner().invoke(cli, ["capacity", str(scenario), *no_expect, *extra])
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_with_seeds_a_value_holds_only_under_every_seed(tmp_path: Path) -> None:
    args = ["capacity", *SMALL, *GATE, "--vary", "design.window_cap", "--low", "1", "--high", "8"]
    r = CliRunner().invoke(cli, [*args, "--seeds", "1-3", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "capacity.json").read_text())
    assert doc["seeds"] == [1, 2, 3]
    for probe in doc["probes"]:
        assert probe["holds"] == all(s["holds"] for s in probe["seeds"])
        assert probe["held_in"] == sum(s["holds"] for s in probe["seeds"])
        for s in probe["seeds"]:
            assert (Path(s["run"]) / "summary.json").is_file()
    assert "every gate holds under all 3 seeds is" in r.output
