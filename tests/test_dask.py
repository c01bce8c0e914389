"""Sweeps and swarms on a real Dask cluster (a ``LocalCluster`` of worker processes): the same
files as a local run, bit for bit, and a point whose worker dies is run again, not dropped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sim.cli import cli
from sim.runner import RunOptions, run_on_dask
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from tests.conftest import DATA

ROOT = Path(__file__).resolve().parents[1]

distributed = pytest.importorskip("distributed", reason="the dask distributed package is absent")

SHORT = ["--set", 'duration="3h"', "--no-plots", "-q", "--json"]


CLUSTER = """
import sys
from distributed import LocalCluster
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
    print(c.scheduler_address, flush=True)
    sys.stdin.read()  # until the test closes the pipe
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A real LocalCluster of two worker processes, in a process of its own: its event loop and
    worker processes stay clear of the test process's threads and trio runs."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CLUSTER],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    address = proc.stdout.readline().strip()
    assert address.startswith("tcp://"), "the LocalCluster did not start"
    try:
        yield address
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


def sweep(out: Path, *extra: str) -> dict[str, Any]:
    args = ["sweep", str(DATA / "small.toml"), "--set", "design.window_cap=2,1000", *SHORT]
    result = CliRunner().invoke(cli, [*args, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def files(root: Path) -> dict[str, bytes]:
    """Every file of a sweep's runs but the manifests (they hold wall times)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted((root / "runs").rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


def test_a_sweep_on_the_cluster_is_the_local_sweep_bit_for_bit(
    cluster: str, tmp_path: Path
) -> None:
    local = sweep(tmp_path / "local", "--jobs", "2")
    remote = sweep(tmp_path / "remote", "--dask", cluster)
    assert [p["event_log_sha256"] for p in remote["points"]] == [
        p["event_log_sha256"] for p in local["points"]
    ]
    assert files(tmp_path / "remote") == files(tmp_path / "local")
    assert (tmp_path / "remote" / "sweep.csv").read_bytes() == (
        tmp_path / "local" / "sweep.csv"
    ).read_bytes()


def test_a_seed_swarm_on_the_cluster(cluster: str, tmp_path: Path) -> None:
    args = ["run", str(DATA / "small.toml"), "--seeds", "1-3", *SHORT[:-1], "--dask", cluster]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for seed in (1, 2, 3):
        assert (tmp_path / "runs" / f"seed-{seed}" / "summary.json").is_file()


def dies_once(scenario: Any, engine: Any, streams: Any, backends: Any) -> Any:
    """A model builder whose first call, in any process, kills that process (a worker that
    dies mid-point); later calls build the CVSA model."""
    marker = Path(tempfile.gettempdir()) / f"sim-dask-dies-once-{scenario.seed}"
    if not marker.exists():
        marker.write_text("died")
        os._exit(1)
    return build_cvsa_model(scenario, engine, streams, backends)


def test_a_point_whose_worker_dies_is_run_again(cluster: str, tmp_path: Path) -> None:
    seed = 4_242
    marker = Path(tempfile.gettempdir()) / f"sim-dask-dies-once-{seed}"
    marker.unlink(missing_ok=True)
    scenario = load_scenario(DATA / "small.toml", overrides=['duration="1h"'], seed=seed)
    out = tmp_path / "point"
    run_on_dask([(scenario, RunOptions(out_dir=out, report=True, plots=False))], dies_once,
                address=cluster)  # fmt: skip
    assert marker.read_text() == "died"  # the first worker did die
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["partial"] is False
    marker.unlink()


def test_an_unreachable_cluster_is_one_line(tmp_path: Path) -> None:
    args = ["sweep", str(DATA / "small.toml"), "--set", "design.window_cap=2,3", "--no-plots"]
    result = CliRunner().invoke(cli, [*args, "--dask", "tcp://127.0.0.1:1", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert "no Dask scheduler answered" in result.output
    assert "dask scheduler" in result.output
