"""Property: whatever bytes a scenario file holds, loading it gives a scenario or one-line
errors naming the file (exit 2 on the command line), never another exception (issue 29).

The inputs are random bytes and random mutations of every scenario in ``scenarios/``: a line
deleted or duplicated, a value replaced by a random TOML value (string, integer, huge integer,
float, nan, inf, boolean, array, table), a key renamed, the file truncated, bytes inserted.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.cli.common import load_or_exit
from sim.scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from tests.conftest import ROOT

SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
FUZZ = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
_PYDANTIC_WORDING = re.compile(
    r"Input should|Input tag|String should|Unable to extract|Field required|Value error|"
    r"Assertion failed|should be a valid|should have at|Extra inputs"
)
"""pydantic's own sentences, which must never reach a user (sim/scenario/messages.py)."""
_ASSIGNMENT = re.compile(r"^(\s*)([A-Za-z0-9_.\"'-]+)(\s*=\s*)(.*)$")

toml_scalars = st.one_of(
    # The edge values first: hypothesis shrinks towards, and tries early, the first strategies.
    st.sampled_from(["nan", "inf", "-inf", "1e308", "1e-320", "-0.0", "1e12", "0", "-1"]),
    st.sampled_from(['"7d"', '"-30s"', '"1h30m"', '"2031-01-01T00:00:00Z"', '"UTC+8"', '""']),
    st.text(max_size=12).map(json.dumps),
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.integers(min_value=2**63, max_value=10**30).map(str),  # beyond TOML's range
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.booleans().map(lambda b: str(b).lower()),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), inner, max_size=3).map(
            lambda d: "{" + ", ".join(f"{k} = {v}" for k, v in d.items()) + "}"
        ),
    ),
    max_leaves=6,
)
key_names = st.one_of(
    st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    st.sampled_from(["kind", "at", "start", "duration", "seed", "name", "songs", "per_day"]),
)


@st.composite
def mutated(draw: st.DrawFn, text: str) -> bytes:
    """``text`` with one to three random edits."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        edit = draw(st.sampled_from(["delete", "duplicate", "value", "rename", "cut", "bytes"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0))) if lines else 0
        if edit == "delete" and lines:
            del lines[i]
        elif edit == "duplicate" and lines:
            lines.insert(i, lines[i])
        elif edit in ("value", "rename") and lines:
            assignments = [j for j, line in enumerate(lines) if _ASSIGNMENT.match(line)]
            if not assignments:
                continue
            j = draw(st.sampled_from(assignments))
            m = _ASSIGNMENT.match(lines[j])
            assert m is not None
            indent, key, eq, value = m.groups()
            if edit == "value":
                value = draw(toml_values)
            else:
                key = draw(key_names)
            lines[j] = f"{indent}{key}{eq}{value}"
        elif edit == "cut":
            joined = "\n".join(lines)
            lines = joined[: draw(st.integers(0, len(joined)))].splitlines()
        elif edit == "bytes":
            joined = "\n".join(lines).encode()
            at = draw(st.integers(0, len(joined)))
            junk = draw(st.binary(min_size=1, max_size=8))
            return joined[:at] + junk + joined[at:]
    return "\n".join(lines).encode()


def _loads_or_says_why(path: Path, data: bytes) -> None:
    """The property, through the library and through the commands' load path."""
    path.write_bytes(data)
    outcome: Scenario | ScenarioError
    try:
        outcome = load_scenario(path)
    except ScenarioError as exc:
        outcome = exc
    if isinstance(outcome, ScenarioError):
        assert outcome.problems
        for problem in outcome.problems:
            assert "\n" not in problem, problem
            assert problem.startswith(str(path)), problem
            assert not _PYDANTIC_WORDING.search(problem), problem
    err = io.StringIO()
    # A machine with plenty of memory: the fuzzed sizes then reach the world's pin checks.
    plenty = mock.patch("sim.scenario.footprint.available_bytes", return_value=2**62)
    status = 0
    with plenty, contextlib.redirect_stderr(err):
        try:
            load_or_exit(path, (), None)
        except SystemExit as exit_:
            status = int(exit_.code or 0)
    printed = err.getvalue().splitlines()
    if isinstance(outcome, ScenarioError):
        assert status == 2
    assert status in (0, 2)
    assert bool(printed) == (status == 2)
    assert all(line.startswith(f"error: {path}") for line in printed), printed


@pytest.mark.parametrize("source", SCENARIOS, ids=[p.stem for p in SCENARIOS])
@FUZZ
@given(data=st.data())
def test_mutated_scenarios_load_or_say_why(
    source: Path, tmp_path: Path, data: st.DataObject
) -> None:
    edited = data.draw(mutated(source.read_text(encoding="utf-8")))
    _loads_or_says_why(tmp_path / "fuzzed.toml", edited)


@settings(FUZZ, max_examples=60)
@given(blob=st.binary(max_size=200))
def test_random_bytes_load_or_say_why(tmp_path: Path, blob: bytes) -> None:
    _loads_or_says_why(tmp_path / "random.toml", blob)


def test_the_scenarios_themselves_load() -> None:
    """The unmutated library loads (the property's other side is not vacuous)."""
    assert len(SCENARIOS) >= 20
    for source in SCENARIOS:
        assert isinstance(load_scenario(source), Scenario)


EDGE_VALUES = ("nan", "-inf", "1e308", "99999999999999999999", '""', '"x"', "[]", "{}", "true")
"""Values that have crashed converters before (an infinite duration: OverflowError)."""


@pytest.mark.parametrize("source", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_key_of_every_scenario_takes_any_edge_value(source: Path) -> None:
    """Exhaustive beside the random search: each assignment of the file, one at a time, set to
    each edge value; the loader answers with a scenario or one-line errors naming the file."""
    lines = source.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        m = _ASSIGNMENT.match(line)
        if not m:
            continue
        indent, key, eq, _ = m.groups()
        for value in EDGE_VALUES:
            edited = [*lines[:i], f"{indent}{key}{eq}{value}", *lines[i + 1 :]]
            problems: list[str] = []
            try:
                parse_scenario("\n".join(edited), source=str(source))
            except ScenarioError as exc:
                problems = exc.problems
            bad = [
                p
                for p in problems
                if "\n" in p or not p.startswith(str(source)) or _PYDANTIC_WORDING.search(p)
            ]
            assert not bad, (key, value, bad)
