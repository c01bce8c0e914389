"""``sim load`` end to end on the memory backends (the same command drives PostgreSQL and Redis)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sim.cli import cli
from tests.conftest import DATA


def _load(tmp_path: Path, *args: str) -> dict:
    result = CliRunner().invoke(
        cli,
        ["load", str(DATA / "small.toml"), "--out", str(tmp_path), "-q", *args],
    )
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "load.json").read_text())


def test_load_times_every_query_and_periodic_job(tmp_path: Path) -> None:
    doc = _load(tmp_path, "--speed", "120", "--set", 'duration="2m"')
    [step] = doc["steps"]
    assert step["speed"] == 120
    assert step["simulated_s"] == 120
    m = doc["metrics"]
    # The run ends at the scenario's end even if the wall clock ran past it.
    assert m["run.simulated_s"] == 120
    assert m["run.partial"] is False
    assert m["load.ops.store.due_schedules.count"] > 0
    assert m["load.ops.store.due_schedules.p99_ms"] >= m["load.ops.store.due_schedules.p50_ms"]
    # Elision is off in load mode: idle ticks run and are timed (a slot the wall clock already
    # passed is skipped, as BullMQ does, so a loaded machine may time fewer than 120).
    assert 1 <= m["load.jobs.snapshotTick.count"] <= 121
    assert 0 <= m["load.jobs.snapshotTick.overrun_fraction"] <= 1
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["concurrent"] is True
    assert manifest["clock"] != "virtual"


def test_ramp_doubles_the_speed_with_fresh_state_each_step(tmp_path: Path) -> None:
    doc = _load(tmp_path, "--ramp", "--speed", "300", "--step", "1", "--max-speed", "600")
    speeds = [s["speed"] for s in doc["steps"]]
    assert speeds in ([300], [300, 600])
    assert [s["simulated_s"] for s in doc["steps"]] == [1.0 * s for s in speeds]
    sustained = [s["speed"] for s in doc["steps"] if s["sustained"]]
    assert doc["highest_sustained_speed"] == (max(sustained) if sustained else None)
    for s in speeds:
        assert (tmp_path / f"x{s:g}" / "manifest.json").exists()
