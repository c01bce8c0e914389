"""Two versions of the code on one scenario, run at the same time: prints numbers, asserts nothing.

    python bench/side_by_side.py OLD_CHECKOUT                  # bench/scenarios/tenth-month.toml
    python bench/side_by_side.py OLD_CHECKOUT SCENARIO --rounds 3

Wall time on this machine drifts within an hour by more than a tuning step gains. Two runs
started together, one per core, see the same drift, so their ratio is what to compare
(docs/performance.md "A drifting machine: compare side by side"). Each side is
``bench/scheduler.py`` of its own checkout, with ``PYTHONPATH`` at that checkout, so each imports
its own ``sim``. OLD_CHECKOUT needs its own compiled build, for example::

    git worktree add /tmp/old HEAD~1
    (cd /tmp/old && python setup.py build_ext --inplace)   # with this checkout's venv active

The event-log fingerprints of the two sides are printed too: a speed change must not change one.
The default scenario is a tenth of full scale for the whole month (11M events, about two
minutes alone here); a full-scale pair needs some 4 GB and twenty minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "bench" / "scenarios" / "tenth-month.toml"
# A result row of bench/scheduler.py: name, simulated days, run wall, process wall, ratio, ...,
# the fingerprint last.
ROW = re.compile(r"^(\S+)\s+([\d.]+)d\s+([\d.]+)s\s+([\d.]+)s\s.*\s([0-9a-f]{12})\s*$")


def start(checkout: Path, scenario: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    return subprocess.Popen(
        [sys.executable, str(checkout / "bench" / "scheduler.py"), str(scenario)],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def result(proc: subprocess.Popen[str], side: str) -> tuple[float, str]:
    """(run wall seconds, fingerprint) from a finished ``bench/scheduler.py``."""
    out, _ = proc.communicate()
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            return float(m.group(3)), m.group(5)
    sys.exit(f"side_by_side: the {side} run printed no result (exit {proc.returncode}):\n{out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path, help="the other checkout (with its compiled build)")
    parser.add_argument("scenario", type=Path, nargs="?", default=DEFAULT)
    parser.add_argument("--rounds", type=int, default=1, help="pairs to run, one after another")
    args = parser.parse_args()
    old, scenario = args.old.resolve(), args.scenario.resolve()
    if not (old / "bench" / "scheduler.py").is_file():
        sys.exit(f"side_by_side: {old} is not a checkout of this project (no bench/scheduler.py)")
    print(f"old: {old}\nnew: {ROOT}\nscenario: {scenario}")
    ratios = []
    for n in range(1, args.rounds + 1):
        procs = {"old": start(old, scenario), "new": start(ROOT, scenario)}
        (old_s, old_sha), (new_s, new_sha) = (result(p, side) for side, p in procs.items())
        same = "same event log" if old_sha == new_sha else f"EVENT LOGS DIFFER: {old_sha} {new_sha}"
        ratio = new_s / old_s
        print(f"round {n}: old {old_s:.1f} s, new {new_s:.1f} s, new/old {ratio:.3f}; {same}")
        ratios.append(ratio)
    if len(ratios) > 1:
        print(f"median new/old: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
