"""Whole-scheduler throughput: prints numbers, asserts nothing (README "Design rules" 6).

    python bench/scheduler.py                    # baseline (200k videos, 7 days)
    python bench/scheduler.py --full-scale       # also full-scale (2M videos, 30 days): long
    python bench/scheduler.py --full-scale-10x --set 'duration="1d"'   # 20M videos, one day
    python bench/scheduler.py SCENARIO [...]     # any scenario files
    python bench/scheduler.py --by-day ...       # also wall time and memory at each stage and day
    python bench/scheduler.py --report ...       # also write the report, as `sim run` does
    python bench/scheduler.py --set KEY=VALUE ...   # override a key of every scenario run

Each scenario runs in its own process, so that peak memory (max RSS) is that run's alone; the
reducer process (docs/performance.md "Reducers in a second process") reports its own peak
(``ru_maxrss``) to the run through the pipe, and the bench prints both and their sum. Before each
run it prints the memory estimate `sim run` checks (sim/scenario/footprint.py) and, when the
estimate exceeds the memory available, the line `sim run` would print (the bench runs anyway).
Without ``--report`` the run computes its metrics but writes no report (time series, plots,
HTML); with it, the peak is that of the command users run (`sim run SCENARIO`).
Budgets (issue 4): baseline under 60 s; full-scale must complete, with the goal of 30 days in
under ~4.5 minutes (10,000x real time) within 2 GB. Issue 30's memory goals: full-scale within
1.2 GB, full-scale-10x (20M videos, 7 days) within 4 GB, both processes together.
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sim import _native
from sim.scenario import ScenarioError, load_scenario
from sim.scenario.footprint import estimate, memory_check

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, os, resource, sys, time
from pathlib import Path
from sim.runner import RunOptions, run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
sc = load_scenario(sys.argv[1], overrides=json.loads(sys.argv[2]))
t0, done = time.perf_counter(), [0]
def by_day(t_ms):  # the engine's progress observer: every few thousand events
    day = (t_ms - sc.start_ms) // 86_400_000
    if day > done[0]:
        done[0] = day
        mark(f"day {day}")
def by_stage(stage):  # the peak so far says which stage before it held the most
    mark(f"start of {stage}")
def mark(what):
    wall = time.perf_counter() - t0  # world build and catalogue load included
    rss = resident_mb("self")
    # the kernel's high-water mark can trail the current figure by a few MB
    peak = max(rss, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10)
    kids = sum(resident_mb(pid) for pid in children())  # the reducer process, if any
    print(f"  {sc.name} {what}: {wall:.1f} s, {rss:,} MB resident (peak {peak:,})"
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
report = "report" in sys.argv[3:]
r = run_scenario(sc, build_cvsa_model, RunOptions(
    out_dir=Path("out") if report else None, report=report,
    observer=by_day if "by-day" in sys.argv[3:] else None,
    on_stage=by_stage if "by-day" in sys.argv[3:] else None,
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


def run(path: Path, overrides: list[str], by_day: bool, report: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    flags = [*(["by-day"] if by_day else []), *(["report"] if report else [])]
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), json.dumps(overrides), *flags],
            cwd=tmp,
            check=True,
            stdout=subprocess.PIPE,  # stderr passes through: --by-day lines, and any error
            text=True,
        )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - t0
    return result


def memory_estimate(path: Path, overrides: list[str]) -> tuple[float, str | None]:
    """The estimate `sim run` checks, in MB, and the line it would print about it, if any."""
    scenario = load_scenario(path, overrides=overrides)
    need_mb = estimate(scenario).bytes / 2**20
    verdict = memory_check(scenario, path.name)
    if verdict is None:
        return need_mb, None
    return need_mb, ("error: " if verdict.refuse else "warning: ") + verdict.message


def how_it_ended(status: int) -> str:
    """A child's end in words: a signal leaves no Python error (the kernel's out-of-memory
    killer sends SIGKILL, a crash in compiled code SIGSEGV)."""
    if status < 0:
        return f"killed by {signal.Signals(-status).name}, with no error of its own"
    return f"exit status {status}; its error is above"


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
        "--full-scale-10x",
        action="store_true",
        help="also run full-scale-10x (20M videos: some 7 GB estimated; shorten it with --set)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key of every scenario, as `sim run --set` (repeatable)",
    )
    parser.add_argument(
        "--by-day",
        action="store_true",
        help="print the wall time and memory at each stage of the run and each simulated day",
    )
    parser.add_argument(
        "--report", action="store_true", help="also write each run's report (as `sim run` does)"
    )
    args = parser.parse_args()
    # Resolved here: each child runs in its own temporary directory.
    paths = [p.resolve() for p in args.scenarios] or [ROOT / "scenarios" / "baseline.toml"]
    if args.full_scale:
        paths.append(ROOT / "scenarios" / "full-scale.toml")
    if args.full_scale_10x:
        paths.append(ROOT / "scenarios" / "full-scale-10x.toml")
    print(
        f"machine speed: {machine_speed():.2f} M dict increments/s (compare runs at similar speeds)"
    )
    # The children inherit the environment: SIM_PURE_PYTHON=1 benchmarks the pure-Python form.
    print(f"code: {_native.describe()}")
    print(
        f"{'scenario':<16} {'simulated':>10} {'run wall':>9} {'process':>8} {'ratio':>9} "
        f"{'events':>11} {'snapshots':>10} {'snaps/s':>8} {'peak MB':>8} {'run MB':>8} "
        f"{'reducer':>8} {'est. MB':>8} {'red. CPU':>9}  event log",
        flush=True,
    )
    for path in paths:
        try:
            estimate_mb, check = memory_estimate(path, args.overrides)
        except ScenarioError as exc:
            sys.exit("\n".join(f"bench: {problem}" for problem in exc.problems))
        if check is not None:
            print(f"  sim run would say: {check}", flush=True)
        try:
            r = run(path, args.overrides, args.by_day, args.report)
        except subprocess.CalledProcessError as exc:  # the child printed its error to stderr
            sys.exit(f"bench: {path.stem} failed ({how_it_ended(exc.returncode)})")
        print(
            f"{path.stem:<16} {r['simulated_s'] / 86400:>9.1f}d {r['wall_s']:>8.1f}s "
            f"{r['process_s']:>7.1f}s {r['ratio']:>9,.0f} {r['events']:>11,} "
            f"{r['snapshots']:>10,} {r['snapshots'] / r['wall_s']:>8,.0f} "
            f"{r['peak_mb'] + r['reducer_peak_mb']:>8,.0f} {r['peak_mb']:>8,.0f} "
            f"{r['reducer_peak_mb']:>8,.0f} {estimate_mb:>8,.0f} {r['reducer_cpu_s']:>8.1f}s"
            f"  {r['sha']}",
            flush=True,
        )
    print(
        "peak MB: the run's process plus its reducer process (each one's own peak, so the sum"
        " bounds the two together); run MB, reducer: each process's own peak (reducer 0: the"
        " reducers ran inline); est. MB: the estimate `sim run` checks against the memory"
        " available; red. CPU: the reducer process's user and system time (0 when inline)"
    )
    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
