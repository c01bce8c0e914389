"""Input that used to crash or mislead (issue 29): each case's exact message and exit status.

Nothing here runs a simulation but the memory warning's (an hour of ``small``, which a warning
does not stop): every error is found before anything is built.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sim.backends.postgres import refusal_hint, server_answer
from sim.cli import cli
from sim.scenario import ScenarioError, load_scenario, parse_scenario
from sim.scenario.footprint import OVER_ESTIMATE, MemoryVerdict, estimate, memory_check
from tests.conftest import DATA, ROOT

SMALL = DATA / "small.toml"
BASELINE = ROOT / "scenarios" / "baseline.toml"
FULL_SCALE = ROOT / "scenarios" / "full-scale.toml"
TEN_X = ROOT / "scenarios" / "full-scale-10x.toml"
MB = 2**20
GB = 2**30
KINDS = (
    "'upstream_outage', 'throttling_storm', 'risk_control_storm', 'latency_spike', "
    "'counter_loss', 'scheduler_restart', 'slow_database', 'clock_skew', 'second_instance'"
)


def sim(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def refuses(verdict: MemoryVerdict | None) -> bool | None:
    """None: the scenario fits; False: a warning and the run goes on; True: refused."""
    return None if verdict is None else verdict.refuse


def problems(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, source="f.toml")
    return caught.value.problems


# -- files that cannot be read ----------------------------------------------------------------


def test_a_file_that_is_not_utf8_is_one_line_with_the_byte_offset(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name="x"\nseed=1\n\xff\xfe')
    result = sim("run", bad, "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {bad}:3: not UTF-8 text: byte 0xff at offset 16 (column 1) cannot be "
        "decoded; save the file as UTF-8\n"
    )


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    marked = tmp_path / "bom.toml"
    marked.write_bytes(b'\xef\xbb\xbfname = "x"\nduration = "1h"\n')
    assert load_scenario(marked).name == "x"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p.mkdir(), "is a directory, not a scenario file"),
        (lambda p: None, "no such scenario file"),
    ],
    ids=["directory", "missing"],
)
def test_a_path_that_is_no_file_is_one_line(tmp_path: Path, make: object, says: str) -> None:
    path = tmp_path / "scenario.toml"
    make(path)  # type: ignore[operator]
    commands = (["run"], ["check"], ["capacity", "--vary", "catalog.songs"], ["load"],
                ["sweep"], ["curves"])  # fmt: skip
    for command in commands:
        result = sim(*command, path)
        assert result.exit_code == 2, command
        assert result.stderr == f"error: {path}: {says}\n", command


def test_a_file_that_is_not_toml_names_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nthis is not toml\n')
    result = sim("run", bad)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {bad}:2: not valid TOML: Expected '=' after a key in a key/value pair\n"
    )


def test_dev_zero_is_refused_without_reading_it_all() -> None:
    result = sim("run", "/dev/zero")
    assert result.exit_code == 2
    assert result.stderr == "error: /dev/zero: larger than 64 MiB: not a scenario file\n"


# -- flags name themselves ----------------------------------------------------------------------


def test_a_seed_too_large_is_blamed_on_the_flag() -> None:
    result = sim("run", BASELINE, "--seed", "99999999999999999999999")
    assert result.exit_code == 2
    assert (
        "Error: Invalid value for '--seed': 99999999999999999999999 is out of range: a seed is "
        "from 0 to 2^63-1 (9223372036854775807)" in result.stderr
    )
    assert "baseline.toml" not in result.stderr


@pytest.mark.parametrize("seed", ["abc", "_1", "-3", "1.5", "٣"])
def test_a_seed_that_is_not_a_number_says_so(seed: str) -> None:
    result = sim("check", BASELINE, "--seed", seed)
    assert result.exit_code == 2
    assert (
        f"Error: Invalid value for '--seed': {seed!r} is not a whole number from 0 to 2^63-1"
        in (result.stderr)
    )


def test_a_seed_may_be_written_with_underscores() -> None:
    from sim.cli.common import SEED

    assert SEED.convert("1_000", None, None) == 1000


def test_the_loader_blames_a_seed_it_was_given_on_the_flag() -> None:
    """Commands that take --seed as any integer (sweep, curves) reach the loader's check."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(BASELINE, seed=2**63)
    assert caught.value.problems == [
        f"{BASELINE}: seed must be < 9223372036854775808 (got 9223372036854775808) [from --seed]"
    ]


def test_a_set_value_is_blamed_on_the_flag_not_the_line_it_replaced() -> None:
    result = sim("run", BASELINE, "--set", "duration=0")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {BASELINE}: duration must be > 0 (got 0) [from --set duration=0]\n"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["run", SMALL, "--jobs", "x"],
            "Invalid value for '--jobs' / '-j': 'x' is not a valid whole number.",
        ),
        (
            ["capacity", SMALL, "--vary", "catalog.songs", "--low", "nan"],
            "Invalid value for '--low': 'nan' is not a finite number",
        ),
        (
            ["capacity", SMALL, "--vary", "catalog.songs", "--high", "abc"],
            "Invalid value for '--high': 'abc' is not a valid number.",
        ),
        (
            ["explain", ROOT, "--aid", "x"],
            "Invalid value for '--aid': 'x' is not a valid whole number.",
        ),
        (
            ["run", SMALL, "--speed", "nan"],
            "Invalid value for '--speed': 'nan' is not a finite number",
        ),
        (
            ["load", SMALL, "--speed", "inf"],
            "Invalid value for '--speed': 'inf' is not a finite number",
        ),
        (
            ["load", SMALL, "--ramp", "--step", "nan"],
            "Invalid value for '--step': 'nan' is not a finite number",
        ),
        (
            ["sweep", SMALL, "--seed", "abc"],
            "Invalid value for '--seed': 'abc' is not a whole number from 0 to 2^63-1",
        ),
        (
            ["curves", SMALL, "--seed", "abc"],
            "Invalid value for '--seed': 'abc' is not a whole number from 0 to 2^63-1",
        ),
    ],
    ids=[
        "jobs",
        "low",
        "high",
        "aid",
        "run-speed",
        "load-speed",
        "step",
        "sweep-seed",
        "curves-seed",
    ],
)
def test_numeric_flags_name_themselves(args: list[str | Path], says: str) -> None:
    result = sim(*args)
    assert result.exit_code == 2
    assert f"Error: {says}" in result.stderr


# -- backends -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        (
            "--store",
            "unknown store 'mysql://x': use memory, reference, sqlite:PATH or "
            "postgresql://USER@HOST:PORT/DB",
        ),
        (
            "--counter",
            "unknown counter 'mysql://x': use memory, reference, fakeredis or redis://HOST:PORT/DB",
        ),
    ],
)
def test_an_unknown_backend_scheme_is_a_usage_error(flag: str, says: str) -> None:
    result = sim("run", SMALL, flag, "mysql://x")
    assert result.exit_code == 2
    assert f"Error: Invalid value for '{flag}': {says}" in result.stderr


def test_an_unknown_backend_scheme_in_the_file_names_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = "1h"\n[backends]\nstore = "mysql://x"\n')
    result = sim("run", bad)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {bad}:4: backends.store must be one of memory, reference, sqlite:PATH or "
        "postgresql://USER@HOST:PORT/DB (got 'mysql://x')\n"
    )


def test_what_a_postgresql_server_answered_is_told_apart_from_no_server() -> None:
    refused = (
        'connection failed: connection to server at "127.0.0.1", port 5432 failed: FATAL: '
        'role "nosuchrole" does not exist'
    )
    assert server_answer(refused) == 'role "nosuchrole" does not exist'
    down = (
        'connection failed: connection to server at "127.0.0.1", port 5999 failed: Connection '
        "refused Is the server running on that host and accepting TCP/IP connections?"
    )
    assert server_answer(down) is None
    url = "postgresql://postgres@h:5432/nosuchdb"
    assert refusal_hint('database "nosuchdb" does not exist', url) == (
        "create it (`createdb -O postgres nosuchdb`) or name an existing database in the URL"
    )


def _postgres_or_skip() -> None:
    from tests.backends.sql_support import require_postgres

    require_postgres()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            "postgresql://nosuchrole@127.0.0.1:5432/test",
            'refused the connection: role "nosuchrole" does not exist; create the role '
            "(`createuser nosuchrole`, or CREATE ROLE nosuchrole LOGIN as a superuser) or name "
            "an existing one in the URL",
        ),
        (
            "postgresql://postgres@127.0.0.1:5432/nosuchdb",
            'refused the connection: database "nosuchdb" does not exist; create it '
            "(`createdb -O postgres nosuchdb`) or name an existing database in the URL",
        ),
    ],
    ids=["role", "database"],
)
def test_postgresql_refusing_says_what_it_answered(tmp_path: Path, url: str, says: str) -> None:
    _postgres_or_skip()
    result = sim("run", SMALL, "-q", "--no-plots", "--out", tmp_path, "--store", url)
    assert result.exit_code == 1
    assert result.stderr == f"error: PostgreSQL at {url} {says}\n"
    assert "not reachable" not in result.stderr


def test_an_unreachable_postgresql_still_says_start_one(tmp_path: Path) -> None:
    url = "postgresql://postgres@127.0.0.1:1/test"
    result = sim("run", SMALL, "-q", "--no-plots", "--out", tmp_path, "--store", url)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: PostgreSQL is not reachable at {url} (")
    assert "start one with" in result.stderr


def test_redis_refusing_a_database_index_says_what_to_do(tmp_path: Path) -> None:
    from tests.backends.redis_support import require_redis

    require_redis()
    url = "redis://127.0.0.1:6379/999"
    result = sim("run", SMALL, "-q", "--no-plots", "--out", tmp_path, "--counter", url)
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: Redis at {url} refused sim's commands (DB index is out of range); name a "
        "database the server has in the URL (0 to 15 unless its `databases` setting says more)\n"
    )


def test_redis_refusing_the_credentials_is_not_unreachable(tmp_path: Path) -> None:
    from tests.backends.redis_support import require_redis

    require_redis()
    result = sim(
        "run",
        SMALL,
        "-q",
        "--no-plots",
        "--out",
        tmp_path,
        "--counter",
        "redis://nosuchuser:secret@127.0.0.1:6379/0",
    )
    assert result.exit_code == 1
    assert result.stderr == (
        "error: Redis at redis://nosuchuser:***@127.0.0.1:6379/0 refused the credentials: "
        "invalid username-password pair or user is disabled; give the right user and password "
        "in the URL (redis://USER:PASSWORD@HOST:PORT/DB)\n"
    )


# -- the loader's own words ---------------------------------------------------------------------


def test_an_unknown_fault_kind_lists_the_kinds() -> None:
    assert problems('name="x"\nduration="1d"\n[[faults]]\nkind="meteor"\n') == [
        f"f.toml:4: faults[0].kind must be one of {KINDS} (got 'meteor')"
    ]


def test_a_fault_without_kind_lists_the_kinds() -> None:
    assert problems('name="x"\nduration="1d"\n[[faults]]\nstart="1h"\n') == [
        f"f.toml:3: faults[0].kind is required: one of {KINDS}"
    ]


def test_a_fault_key_is_named_without_the_validators_tag() -> None:
    text = 'name="x"\nduration="1d"\n[[faults]]\nkind="upstream_outage"\nstart="1h"\n'
    assert problems(text + 'duration="1h"\nerror="x"\n') == [
        "f.toml:7: faults[0].error must be one of 'http_5xx', 'timeout', 'fetch_error' (got 'x')"
    ]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (
            'name="x y"',
            "f.toml:1: name must use only letters, digits, '_', '.' and '-' (it names a "
            "directory) (got 'x y')",
        ),
        ('name=""', "f.toml:1: name must not be empty (got '')"),
    ],
)
def test_a_bad_name_says_what_a_name_may_hold(line: str, says: str) -> None:
    assert problems(f'{line}\nduration="1d"\n') == [says]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("nan", "f.toml:2: duration must be finite (got nan)"),
        ("inf", "f.toml:2: duration must be finite (got inf)"),
        (f'"{"9" * 400}s"', f"f.toml:2: duration must be finite (got '{'9' * 400}s')"),
    ],
    ids=["nan", "inf", "400-digits"],
)
def test_a_duration_that_is_not_finite_is_an_error_not_a_crash(value: str, says: str) -> None:
    assert problems(f'name="x"\nduration={value}\n') == [says]


def test_a_cross_key_rule_shows_no_table_as_its_value() -> None:
    assert problems('name="x"\nduration=1e300\n') == [
        "f.toml: start + duration is too far in the future"
    ]


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        (
            'kind="counter_loss"\nat="8d"',
            "f.toml:6: faults[0].at must fall before the run's end at 7d (got 8d)",
        ),
        (
            'kind="upstream_outage"\nstart="7d"\nduration="1h"',
            "f.toml:6: faults[0].start must fall before the run's end at 7d (got 7d)",
        ),
    ],
    ids=["at", "start"],
)
def test_a_fault_after_the_end_is_an_error(fault: str, says: str) -> None:
    assert problems(f'name="x"\nduration="7d"\n\n[[faults]]\n{fault}\n') == [says]


def test_a_fault_that_outlasts_the_run_is_fine() -> None:
    text = (
        'name="x"\nduration="7d"\n[[faults]]\nkind="upstream_outage"\nstart="6d"\nduration="2d"\n'
    )
    assert len(parse_scenario(text).faults) == 1


# -- memory -------------------------------------------------------------------------------------


def test_a_catalogue_beyond_the_machine_is_refused_before_anything_is_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("sim.scenario.footprint.available_bytes", lambda: 16 * GB)
    result = sim("run", BASELINE, "--set", "arrivals.per_day=1e12", "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {BASELINE}: needs about 2.0 PB of memory (at least 1.0 PB) and this machine "
        "has 16.0 GB available: 7,000,000,200,000 videos (catalog.songs 20,000 + "
        "catalog.non_songs 180,000 + arrivals.per_day 1,000,000,000,000 x 7 days of duration = "
        "7,000,000,000,000); lower those keys or use a larger machine\n"
    )
    assert not (tmp_path / "o").exists()


def test_a_run_whose_estimate_exceeds_the_machine_but_whose_floor_fits_warns_and_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # small for an hour: an estimate of 192 MB, a floor of 96 MB; the machine has 128 MB.
    monkeypatch.setattr("sim.scenario.footprint.available_bytes", lambda: 128 * MB)
    result = sim("run", SMALL, "--set", 'duration="1h"', "--out", tmp_path / "o", "--no-plots")
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {SMALL}: needs about 192 MB of memory (at least 95.8 MB) and this machine has "
        "128 MB available: 5,508 videos (catalog.songs 500 + catalog.non_songs 5,000 + "
        "arrivals.per_day 200 x 0.0416667 days of duration = 8); running, as the estimate runs "
        "high; if the run is killed or the machine swaps, free memory or lower those keys"
    ]
    assert (tmp_path / "o" / "summary.json").exists()


def test_the_floor_is_the_estimate_over_its_documented_margin() -> None:
    small = load_scenario(SMALL, overrides=['duration="1h"'])
    need = estimate(small).bytes
    assert OVER_ESTIMATE == 2  # docs/scenario.md says "half the estimate"
    for have, verdict in (
        (need, None),
        (need - 1, False),
        (math.ceil(need / OVER_ESTIMATE), False),
        (math.floor(need / OVER_ESTIMATE) - 1, True),
    ):
        assert refuses(memory_check(small, "f", available=have)) is verdict, have


def test_a_command_that_loads_a_scenario_twice_warns_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sweep or a capacity search loads (and checks) the scenario for every point and seed:
    one warning says it for all of them."""
    monkeypatch.setattr("sim.scenario.footprint.available_bytes", lambda: 128 * MB)
    result = sim("check", SMALL, SMALL, "--set", 'duration="1h"')
    assert result.exit_code in (0, 99), result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert [w.split(": needs about")[0] for w in warnings] == [f"warning: {SMALL}"]


@pytest.mark.parametrize("command", [["check"], ["sweep", "--set", "seed=1,2"], ["load"]])
def test_every_command_that_runs_a_scenario_checks_memory(
    monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setattr("sim.scenario.footprint.available_bytes", lambda: 1 * GB)
    result = sim(command[0], BASELINE, *command[1:], "--set", "catalog.non_songs=1e12")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"error: {BASELINE}: needs about 344 TB of memory (at least 172 TB) and this machine "
        "has 1.0 GB available"
    )


def test_full_scale_fits_a_machine_with_a_few_gb_free() -> None:
    full = load_scenario(FULL_SCALE)
    # measured 1,282 MB, both processes' peaks added (footprint.py's docstring)
    assert 1.6 * GB < estimate(full).bytes < 2 * GB
    assert memory_check(full, "f", available=2 * GB) is None
    assert refuses(memory_check(full, "f", available=int(1.2 * GB))) is False  # floor 0.85 GB
    assert refuses(memory_check(full, "f", available=int(0.8 * GB))) is True


def test_full_scale_10x_warns_on_6_gb_and_is_refused_on_3() -> None:
    ten = load_scenario(TEN_X)
    assert (ten.catalog.songs, ten.catalog.non_songs, ten.duration) == (
        2_000_000,
        18_000_000,
        7 * 86_400_000,
    )
    assert memory_check(ten, "f", available=8 * GB) is None
    warned = memory_check(ten, "f", available=6 * GB)
    assert refuses(warned) is False
    assert warned is not None
    assert "needs about 7.3 GB of memory (at least 3.7 GB)" in warned.message
    assert refuses(memory_check(ten, "f", available=3 * GB)) is True  # an hour held 4.6 GB


def test_every_scenario_of_the_library_but_full_scale_10x_fits_this_machine() -> None:
    """The check never stands in the way of a scenario that runs (CI machines have 7 GB+);
    full-scale-10x is the one meant to be larger (it is never run by the tests)."""
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        if path != TEN_X:
            assert memory_check(load_scenario(path), str(path), available=4 * GB) is None, path
