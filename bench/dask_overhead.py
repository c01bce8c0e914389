"""The Dask cluster's overhead on a sweep: prints numbers, asserts nothing (issue 26).

    python bench/dask_overhead.py                 # 16 points of baseline, 2 days each
    python bench/dask_overhead.py --points 4      # a quicker look

The same sweep twice: on local processes (``--jobs 2``) and on a 2-worker ``LocalCluster`` of
worker processes (``--dask``), one after the other; prints both wall times, their ratio (the goal:
the cluster within 10 % of local processes) and whether every point's event log is the same.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPS = ("500", "1000", "2000", "3000")
ARRIVALS = ("2000", "4000", "8000", "16000")


def sweep(out: Path, points: int, extra: list[str]) -> tuple[float, list[str]]:
    caps = ",".join(CAPS[: max(1, min(4, points))])
    arrivals = ",".join(ARRIVALS[: max(1, points // 4)])
    args = [
        sys.executable, "-m", "sim", "sweep", str(ROOT / "scenarios" / "baseline.toml"),
        "--set", f"design.window_cap={caps}", "--set", f"arrivals.per_day={arrivals}",
        "--set", 'duration="2d"', "--no-plots", "--json", "-q", "--out", str(out), *extra,
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    doc = json.loads(done.stdout)
    return wall, [p["event_log_sha256"] for p in doc["points"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=16, help="grid points (4, 8, 12 or 16)")
    parser.add_argument(
        "--profile", action="store_true", help="keep the workers' stack profiler on (default off)"
    )
    args = parser.parse_args()
    import dask
    from distributed import LocalCluster

    # A Dask worker samples its task thread's stack every 10 ms by default (the dashboard's
    # profile); on a long CPU-bound run that costs a fifth of the run. Workers for sim runs
    # start with it off (README: DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False).
    dask.config.set({"distributed.worker.profile.enabled": args.profile})

    with tempfile.TemporaryDirectory() as tmp:
        local_s, local_fp = sweep(Path(tmp) / "local", args.points, ["--jobs", "2"])
        with LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster:
            address = str(cluster.scheduler_address)
            dask_s, dask_fp = sweep(Path(tmp) / "dask", args.points, ["--dask", address])
    same = "same event logs" if local_fp == dask_fp else "EVENT LOGS DIFFER"
    print(f"{len(local_fp)} points of baseline, 2 days each")
    print(f"local processes (--jobs 2): {local_s:7.1f} s")
    print(f"LocalCluster, 2 workers:    {dask_s:7.1f} s")
    print(f"cluster/local: {dask_s / local_s:.3f} (goal <= 1.10); {same}")


if __name__ == "__main__":
    main()
