"""Whole-scheduler throughput: prints numbers, asserts nothing (README "Design rules" 6).

    python bench/scheduler.py                    # baseline (200k videos, 7 days)
    python bench/scheduler.py --full-scale       # also full-scale (2M videos, 30 days): long
    python bench/scheduler.py SCENARIO [...]     # any scenario files
    python bench/scheduler.py --by-day ...       # also wall time and memory at every simulated day
    python bench/scheduler.py --report ...       # also write the report, as `sim run` does

Each scenario runs in its own process, so that peak memory (max RSS) is that run's alone.
Without ``--report`` the run computes its metrics but writes no report (time series, plots,
HTML); with it, the peak is that of the command users run (`sim run SCENARIO`).
Budgets (issue 4): baseline under 60 s; full-scale must complete, with the goal of 30 days in
under ~4.5 minutes (10,000x real time) within 2 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sim import _native

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, os, resource, sys, time
from pathlib import Path
from sim.runner import RunOptions, run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
sc = load_scenario(sys.argv[1])
t0, done = time.perf_counter(), [0]
def by_day(t_ms):  # the engine's progress observer: every few thousand events
    day = (t_ms - sc.start_ms) // 86_400_000
    if day > done[0]:
        done[0] = day
        wall = time.perf_counter() - t0  # world build and catalogue load included
        rss = resident_mb("self")
        # the kernel's high-water mark can trail the current figure by a few MB
        peak = max(rss, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10)
        kids = sum(resident_mb(pid) for pid in children())  # the reducer process, if any
        print(f"  {sc.name} day {day}: {wall:.1f} s, {rss:,} MB resident (peak {peak:,})"
              f" + reducer process {kids:,} MB", file=sys.stderr, flush=True)
def resident_mb(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:  # Linux: resident pages, second field
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
    except OSError:
        return 0
def children():
    pids = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            pids += f.read().split()
    return pids
report = "report" in sys.argv[2:]
r = run_scenario(sc, build_cvsa_model, RunOptions(
    out_dir=Path("out") if report else None, report=report,
    observer=by_day if "by-day" in sys.argv[2:] else None,
))
m = r.manifest
reducer = resource.getrusage(resource.RUSAGE_CHILDREN)  # the reducer process, ended and reaped
print(json.dumps({
    "wall_s": m["wall_seconds"], "simulated_s": m["simulated_seconds"],
    "ratio": m["compression_ratio"], "events": m["events"],
    "snapshots": r.metrics.get("snapshots.total", 0),
    "sha": m["event_log_sha256"][:12],
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "reducer_peak_mb": m["reducers"].get("peak_mb", 0),
    "reducer_cpu_s": reducer.ru_utime + reducer.ru_stime,
}))
"""


def run(path: Path, by_day: bool, report: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    flags = [*(["by-day"] if by_day else []), *(["report"] if report else [])]
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), *flags],
            cwd=tmp,
            check=True,
            stdout=subprocess.PIPE,  # stderr passes through: --by-day lines, and any error
            text=True,
        )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - t0
    return result


def machine_speed() -> float:
    """Millions of dict increments per wall second in a fixed pure-Python loop: the machine's
    speed right now. This VM's speed drifts within the hour, so a result is only comparable
    with another measured at a similar speed (docs/performance.md "A drifting machine: compare
    side by side")."""
    best = 0.0
    for _ in range(3):
        counts: dict[int, int] = {}
        t0 = time.perf_counter()
        for i in range(1_000_000):
            k = i & 1023
            counts[k] = counts.get(k, 0) + 1
        best = max(best, 1.0 / (time.perf_counter() - t0))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenarios", nargs="*", type=Path, help="scenario files")
    parser.add_argument("--full-scale", action="store_true", help="also run full-scale")
    parser.add_argument(
        "--by-day", action="store_true", help="print the wall time at each simulated day"
    )
    parser.add_argument(
        "--report", action="store_true", help="also write each run's report (as `sim run` does)"
    )
    args = parser.parse_args()
    # Resolved here: each child runs in its own temporary directory.
    paths = [p.resolve() for p in args.scenarios] or [ROOT / "scenarios" / "baseline.toml"]
    if args.full_scale:
        paths.append(ROOT / "scenarios" / "full-scale.toml")
    print(
        f"machine speed: {machine_speed():.2f} M dict increments/s (compare runs at similar speeds)"
    )
    # The children inherit the environment: SIM_PURE_PYTHON=1 benchmarks the pure-Python form.
    print(f"code: {_native.describe()}")
    print(
        f"{'scenario':<16} {'simulated':>10} {'run wall':>9} {'process':>8} {'ratio':>9} "
        f"{'events':>11} {'snapshots':>10} {'snaps/s':>8} {'peak MB':>8} {'(+child)':>8}"
        f" {'child CPU':>9}  event log",
        flush=True,
    )
    for path in paths:
        try:
            r = run(path, args.by_day, args.report)
        except subprocess.CalledProcessError:  # the child printed its error to stderr
            sys.exit(f"bench: {path.stem} failed (its error is above)")
        print(
            f"{path.stem:<16} {r['simulated_s'] / 86400:>9.1f}d {r['wall_s']:>8.1f}s "
            f"{r['process_s']:>7.1f}s {r['ratio']:>9,.0f} {r['events']:>11,} "
            f"{r['snapshots']:>10,} {r['snapshots'] / r['wall_s']:>8,.0f} "
            f"{r['peak_mb'] + r['reducer_peak_mb']:>8,.0f} {r['reducer_peak_mb']:>8,.0f}"
            f" {r['reducer_cpu_s']:>8.1f}s  {r['sha']}",
            flush=True,
        )
    print(
        "peak MB: the run's process plus its reducer process (each one's own peak, so the sum"
        " bounds the two together); (+child): the reducer process's share; child CPU: the"
        " reducer process's user and system time (0 when the reducers ran inline)"
    )
    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
