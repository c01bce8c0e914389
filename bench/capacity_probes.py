"""How many probes a capacity search takes: prints numbers, asserts nothing (issue 26).

    python bench/capacity_probes.py

``sim capacity`` on ``tests/data/small.toml`` (12 h), gated on the ``capacity`` finding staying
at info or better: the smallest ``design.window_cap``, once from the scenario's own cap and once
within a bracket (``--low 2 --high 8``, whose ends are probed only to confirm); and the largest
``catalog.songs`` under a cap of 10, to 1 %, from the scenario's 500 songs, about a fifth of the
answer. The capacity finding's score (its peak share) lets the search interpolate
(sim.scenario.frontier). Goal (issue 26): at most 8 probes for 1 %.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = [
    sys.executable, "-m", "sim", "capacity", str(ROOT / "tests" / "data" / "small.toml"),
    "--set", 'duration="12h"', "--no-plots", "--json", "-q",
    "--set", 'expect."findings.capacity.severity"="<= info"',
]  # fmt: skip
CAP = ["--vary", "design.window_cap"]
SONGS = ["--vary", "catalog.songs", "--set", "design.window_cap=10"]


def search(out: Path, extra: list[str]) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run([*BASE, "--out", str(out), *extra], cwd=ROOT, capture_output=True)
    wall = time.perf_counter() - started
    return wall, json.loads(done.stdout)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for label, extra in (
            ("cap from the scenario's", CAP),
            ("cap in bracket 2-8", [*CAP, "--low", "2", "--high", "8"]),
            ("songs to 1 %, from 500", SONGS),
        ):
            wall, doc = search(Path(tmp) / label.replace(" ", "_"), extra)
            probes = doc["probes"]
            assert isinstance(probes, list)
            values = ", ".join(str(p["value"]) for p in probes)
            print(
                f"{label:<24} {len(probes):2d} probes in {wall:5.1f} s: holds at {doc['holds']}, "
                f"fails at {doc['fails']} ({values})"
            )


if __name__ == "__main__":
    main()
