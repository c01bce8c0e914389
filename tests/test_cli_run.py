"""``sim run`` end to end: outputs, errors, Ctrl-C, and cost that follows work, not time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sim.cli import cli
from sim.events import SavedLog
from tests.conftest import DATA, wait_for_progress


def test_run_writes_a_manifest_with_the_required_fields(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(DATA / "small.toml"),
            "--out",
            str(tmp_path),
            "-q",
            "--save-events",
            "--no-plots",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    for key in (
        "event_log_sha256",
        "seed",
        "scenario_sha256",
        "sim_version",
        "simulated_seconds",
        "wall_seconds",
        "compression_ratio",
        "events",
    ):
        assert key in manifest, key
    assert manifest["simulated_seconds"] == 86_400
    assert manifest["partial"] is False
    with SavedLog(tmp_path / "events.simlog") as saved:
        n = sum(chunk.n_events for chunk in saved.chunks())
        assert saved.fingerprint() == manifest["event_log_sha256"]
    assert n == manifest["events"]


def test_an_empty_month_costs_almost_nothing(tmp_path: Path) -> None:
    """30 idle days: every tick is elided, so the engine handles a handful of entries."""
    result = CliRunner().invoke(
        cli, ["run", str(DATA / "empty.toml"), "--out", str(tmp_path), "-q", "--json"]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.output)["manifest"]
    assert manifest["simulated_seconds"] == 30 * 86_400
    assert manifest["engine_entries"] < 50
    assert manifest["events"] < 20


def test_a_scenario_error_names_file_key_rule_and_value(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = "1d"\n\n[catalog]\nsongs = -3\n')
    result = CliRunner().invoke(cli, ["run", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert f"{bad}:5: catalog.songs must be >= 0 (got -3)" in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("reducers", ["inline", "process"])
def test_ctrl_c_leaves_a_valid_partial_report(tmp_path: Path, reducers: str) -> None:
    """Ctrl-C at a terminal signals the whole foreground process group: with the reducers in a
    second process, that process must still finish the partial results, not die."""
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sim",
            "run",
            str(DATA / "small.toml"),
            "--out",
            str(out),
            "--save-events",
            "--set",
            'duration="30d"',
            "--set",
            f'engine.reducers="{reducers}"',
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ},
        start_new_session=True,  # its own group, so that the group can be signalled
    )
    wait_for_progress(proc, timeout_s=120)  # the run is under way: virtual time has moved
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does
    stdout, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["partial"] is True
    # the findings say so above their table, on the terminal and in findings.md
    end = manifest["end"].replace(".000", "")
    said = f"PARTIAL run: the findings cover the simulated time up to {end} only."
    assert said in stdout.decode()
    assert stdout.decode().index(said) < stdout.decode().index("Findings")
    assert f"> **Partial run**: interrupted at {end};" in (out / "findings.md").read_text()
    assert manifest["reducers"]["where"] == reducers
    assert 0 < manifest["simulated_seconds"] < 30 * 86_400
    with SavedLog(out / "events.simlog") as saved:
        list(saved.chunks())
        assert saved.complete
        assert saved.partial is True
        assert saved.fingerprint() == manifest["event_log_sha256"]
    # the report covers the interrupted run, says so, and ends where the run stopped
    html = (out / "report.html").read_text()
    assert "Partial run" in html
    assert (out / "occupancy.png").exists()
    per_minute = (out / "snapshots_per_minute.csv").read_text().splitlines()
    assert len(per_minute) - 1 == int(manifest["simulated_seconds"]) // 60 + 1
