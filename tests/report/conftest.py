"""One real run shared by the report tests: the small world for 6 h, with enough videos near a
milestone that every series has data (about 2 s to run and 4 s to draw)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sim.cli import cli
from tests.conftest import DATA

SCENARIO = DATA / "small.toml"
SETS = ("--set", 'duration="6h"', "--set", "curves.weights.approacher=0.002")


def sim(*args: str) -> tuple[int, str]:
    """Run the CLI in-process; (exit code, stdout)."""
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


@pytest.fixture(scope="session")
def report_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report directory of `sim run --save-events` (treat as read-only; copy to change it)."""
    out = tmp_path_factory.mktemp("report") / "run"
    code, output = sim("run", str(SCENARIO), "--out", str(out), "-q", "--save-events", *SETS)
    assert code == 0, output
    return out
