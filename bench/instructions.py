"""Instructions a run executes, counted by valgrind: prints numbers, asserts nothing.

    python bench/instructions.py                       # bench/scenarios/hundredth.toml
    python bench/instructions.py SCENARIO [--top 25]   # any scenario; the costliest functions

Wall time on a shared machine varies from one run to the next by more than the steps of local
tuning; the number of instructions hardly varies (docs/performance.md "Profilers and
counters"). Use it to compare two versions of the code, not as a verdict on speed: it counts
instructions, not the cache misses that dominate at full scale, so confirm a gain there with
``bench/scheduler.py``. Only the run's own process is counted (the reducer process is not
traced). ``python -m sim`` imports the ``sim`` of the current directory first: to measure
another checkout, run this from that checkout's root. Needs ``valgrind`` (``apt install
valgrind``); about a minute and a half for the default scenario, some 50 times slower than the
run itself.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from sim import _native

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "bench" / "scenarios" / "hundredth.toml"


def count(scenario: Path, work: Path) -> tuple[int, dict[str, Any]]:
    """Run ``sim run`` under callgrind; the instructions of the run's process and its manifest."""
    out = work / "callgrind.out"
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "sim",
            "run",
            str(scenario),
            "--no-plots",
            "-q",
            "--out",
            str(work / "report"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        sys.exit(f"valgrind run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    manifest = json.loads((work / "report" / "manifest.json").read_text())
    return int(found.group(1)), manifest


def top(work: Path, n: int) -> list[str]:
    """The ``n`` compiled functions with the most instructions, callees included."""
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", str(work / "callgrind.out")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows: dict[str, str] = {}  # a coroutine shows up as its generator and its send: once each
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+\S*:(CPyDef_\S+)", line)
        if m and "'" not in m.group(3):
            name = re.sub(r"_____mypyc_generator_helper__|___send$", "", m.group(3))
            rows.setdefault(name, f"{m.group(2):>6}%  {name}")
    return list(rows.values())[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--top", type=int, default=0, help="list the costliest functions")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt install valgrind)")
    print(f"code: {_native.describe()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        instructions, manifest = count(args.scenario, work)
        events = int(manifest["events"])
        print(f"scenario: {args.scenario.name}")
        print(f"instructions: {instructions:,} (the run's process)")
        print(f"events: {events:,}; instructions per event: {instructions / events:,.0f}")
        print(f"event log: {manifest['event_log_sha256'][:12]}")
        if args.top:
            print("costliest compiled functions (callees included):")
            for row in top(work, args.top):
                print("  " + row)


if __name__ == "__main__":
    main()
