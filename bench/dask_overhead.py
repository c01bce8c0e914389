"""The Dask cluster's overhead on a sweep: prints numbers, asserts nothing (issue 26).

    python bench/dask_overhead.py                 # 16 points of baseline, 2 days each
    python bench/dask_overhead.py --points 4      # a quicker look
    python bench/dask_overhead.py --rounds 3      # alternate three times, print medians

The same sweep on local processes (``--jobs 2``) and on a 2-worker ``LocalCluster`` of worker
processes (``--dask``), alternating, ``--rounds`` times; prints each wall time, the median
ratio (the goal: the cluster within 10 % of local processes) and whether every point's event log
is the same. One pair is not enough on this machine: its wall times drift by 10-15 % from one
minute to the next, so the ratio of one pair says little.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPS = ("500", "1000", "2000", "3000")
ARRIVALS = ("2000", "4000", "8000", "16000")


def sweep(out: Path, points: int, extra: list[str]) -> tuple[float, list[str]]:
    """Wall seconds of one sweep and its points' event-log fingerprints."""
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
    parser.add_argument("--rounds", type=int, default=1, help="alternating pairs to run")
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

    ratios, same = [], True
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
    ):
        address = str(cluster.scheduler_address)
        for r in range(args.rounds):
            local_s, local_fp = sweep(Path(tmp) / f"local{r}", args.points, ["--jobs", "2"])
            dask_s, dask_fp = sweep(Path(tmp) / f"dask{r}", args.points, ["--dask", address])
            same &= local_fp == dask_fp
            ratios.append(dask_s / local_s)
            print(
                f"round {r + 1}: local processes {local_s:6.1f} s, LocalCluster {dask_s:6.1f} s, "
                f"ratio {dask_s / local_s:.3f}",
                flush=True,
            )
    print(f"{args.points} points of baseline, 2 days each, {args.rounds} round(s)")
    print(
        f"cluster/local: median {statistics.median(ratios):.3f} (goal <= 1.10); "
        + ("same event logs" if same else "EVENT LOGS DIFFER")
    )


if __name__ == "__main__":
    main()
