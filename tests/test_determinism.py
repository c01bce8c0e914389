"""Same scenario + seed => byte-identical event log and report (every file but the manifest's
wall-clock facts), across processes and PYTHONHASHSEEDs, inside or outside pytest
(README "Design rules" 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from tests.conftest import DATA


def _run_in_subprocess(tmp: Path, hashseed: str, *extra: str) -> dict[str, object]:
    out = tmp / f"run-{hashseed}"
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sim",
            "run",
            str(DATA / "small.toml"),
            "--out",
            str(out),
            "-q",
            "--save-events",
            *extra,
        ],
        check=True,
        env=env,
        capture_output=True,
    )
    manifest: dict[str, object] = json.loads((out / "manifest.json").read_text())
    manifest["events_bytes"] = (out / "events.simlog").read_bytes()
    manifest["report"] = {
        p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "manifest.json"
    }
    return manifest


def test_same_fingerprint_in_separate_processes_and_in_pytest(tmp_path: Path) -> None:
    a = _run_in_subprocess(tmp_path, "1")
    b = _run_in_subprocess(tmp_path, "4242")
    assert a["event_log_sha256"] == b["event_log_sha256"]
    assert a["events_bytes"] == b["events_bytes"]
    assert a["scenario_sha256"] == b["scenario_sha256"]
    report_a, report_b = a["report"], b["report"]
    assert isinstance(report_a, dict)
    assert isinstance(report_b, dict)
    assert {"report.html", "occupancy.png", "windows.csv", "summary.json"} <= set(report_a)
    assert sorted(report_a) == sorted(report_b)
    for name in report_a:  # CSV, PNG, HTML, summary and scenario: byte for byte
        assert report_a[name] == report_b[name], name
    # and in this process, where hypothesis has flipped trio's scheduling flag
    inproc = run_scenario(load_scenario(DATA / "small.toml"), build_cvsa_model)
    assert inproc.manifest["event_log_sha256"] == a["event_log_sha256"]


def test_a_different_seed_gives_a_different_log(tmp_path: Path) -> None:
    a = _run_in_subprocess(tmp_path, "1", "--no-plots")
    b = _run_in_subprocess(tmp_path, "1", "--seed", "8", "--no-plots")
    assert a["event_log_sha256"] != b["event_log_sha256"]
