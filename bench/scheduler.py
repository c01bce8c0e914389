"""Whole-scheduler throughput: prints numbers, asserts nothing (README "Design rules" 6).

    python bench/scheduler.py                    # baseline (200k videos, 7 days)
    python bench/scheduler.py --full-scale       # also full-scale (2M videos, 30 days): long
    python bench/scheduler.py SCENARIO [...]     # any scenario files

Each scenario runs in its own process, so that peak memory (max RSS) is that run's alone.
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

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, resource, sys
from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
r = run_scenario(load_scenario(sys.argv[1]), build_cvsa_model)
m = r.manifest
print(json.dumps({
    "wall_s": m["wall_seconds"], "simulated_s": m["simulated_seconds"],
    "ratio": m["compression_ratio"], "events": m["events"],
    "snapshots": r.metrics.get("snapshots.total", 0),
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run(path: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            cwd=tmp,
            check=True,
            capture_output=True,
            text=True,
        )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - t0
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenarios", nargs="*", type=Path, help="scenario files")
    parser.add_argument("--full-scale", action="store_true", help="also run full-scale")
    args = parser.parse_args()
    paths = args.scenarios or [ROOT / "scenarios" / "baseline.toml"]
    if args.full_scale:
        paths.append(ROOT / "scenarios" / "full-scale.toml")
    print(
        f"{'scenario':<16} {'simulated':>10} {'run wall':>9} {'process':>8} {'ratio':>9} "
        f"{'events':>11} {'snapshots':>10} {'snaps/s':>8} {'peak MB':>8}"
    )
    for path in paths:
        r = run(path)
        print(
            f"{path.stem:<16} {r['simulated_s'] / 86400:>9.1f}d {r['wall_s']:>8.1f}s "
            f"{r['process_s']:>7.1f}s {r['ratio']:>9,.0f} {r['events']:>11,} "
            f"{r['snapshots']:>10,} {r['snapshots'] / r['wall_s']:>8,.0f} {r['peak_mb']:>8,.0f}",
            flush=True,
        )
    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
