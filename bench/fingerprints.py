"""The event-log SHA-256 of every scenario: the guard of a change that must not alter behaviour.

    python bench/fingerprints.py                      # every scenario, checked against the record
    python bench/fingerprints.py --full-scale         # full-scale too (about five minutes)
    python bench/fingerprints.py --store reference    # the same runs on another store
    python bench/fingerprints.py --write              # record the current fingerprints
    python bench/fingerprints.py tests/data/small.toml --store sqlite:/tmp/fp.db

The record, ``bench/fingerprints.json``, holds the fingerprint of every scenario in
``scenarios/``, ``tests/data/`` and ``bench/scenarios/`` on the default (memory) backends, but
``full-scale-10x`` (a benchmark of some 7 GB estimated: run only when named).
A change that means to alter behaviour rewrites it with ``--write`` and says in its commit
which scenarios moved and why (docs/performance.md "How to measure"). Each scenario runs in its
own process (``-j`` at a time), without a report. Exit 1 when a fingerprint differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "bench" / "fingerprints.json"
SLOW = {"full-scale", "how-many-songs"}
"""Left out unless ``--full-scale``: minutes each."""
HUGE = {"full-scale-10x"}
"""Left out unless named: hours and more memory than most machines have."""

CHILD = """
import sys
from sim.backends import BackendSpec
from sim.runner import RunOptions, run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
sc = load_scenario(sys.argv[1])
store = sys.argv[2]
backends = None if store == "-" else BackendSpec(store=store, reset=True)
r = run_scenario(sc, build_cvsa_model, RunOptions(backends=backends))
print(r.manifest["event_log_sha256"])
"""


def scenario_files(full_scale: bool) -> list[Path]:
    files = [
        *sorted((ROOT / "scenarios").glob("*.toml")),
        *sorted((ROOT / "tests" / "data").glob("*.toml")),
        *sorted((ROOT / "bench" / "scenarios").glob("*.toml")),
    ]
    return [f for f in files if f.stem not in HUGE and (full_scale or f.stem not in SLOW)]


def key(path: Path) -> str:
    return str(path.resolve().relative_to(ROOT))


def fingerprint(path: Path, store: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), store],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    if out.returncode != 0:
        return f"failed (exit {out.returncode}; its error is above)"
    return out.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenarios", nargs="*", type=Path, help="scenario files (default: all)")
    parser.add_argument("--full-scale", action="store_true", help="include full-scale")
    parser.add_argument("--store", default="-", help="a --store spec (default: the scenario's)")
    parser.add_argument("--write", action="store_true", help="record these fingerprints")
    parser.add_argument("-j", type=int, default=2, help="scenarios at once (default 2)")
    args = parser.parse_args()
    paths = [p.resolve() for p in args.scenarios] or scenario_files(args.full_scale)
    record: dict[str, str] = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    with ThreadPoolExecutor(max_workers=args.j) as pool:
        shas = list(pool.map(lambda p: fingerprint(p, args.store), paths))
    differ = 0
    for path, sha in zip(paths, shas, strict=True):
        want = record.get(key(path))
        verdict = "new" if want is None else ("same" if want == sha else f"DIFFERS (was {want})")
        differ += want is not None and want != sha
        print(f"{key(path):<40} {sha}  {verdict}", flush=True)
    if args.write:
        if args.store != "-":
            sys.exit("fingerprints: --write records the default backends only")
        record.update({key(p): s for p, s in zip(paths, shas, strict=True)})
        RECORD.write_text(json.dumps(dict(sorted(record.items())), indent=2) + "\n")
        print(f"recorded in {RECORD.relative_to(ROOT)}")
    elif differ:
        sys.exit(f"fingerprints: {differ} scenario(s) changed their event log")


if __name__ == "__main__":
    main()
