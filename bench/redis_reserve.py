"""Window reservation on Redis: the deployed client-side loop against one Lua script. Prints
numbers; asserts nothing (README "Design rules" 6).

    python bench/redis_reserve.py                       # fakeredis, and real Redis if reachable
    python bench/redis_reserve.py --redis redis://127.0.0.1:6379/0 --cap 1000

For each backend and mode: µs per reservation and per probed window, windows filled
progressively (``cap * fill`` reservations from the same first window, so reservation i probes
i // cap + 1 windows; (fill + 1) / 2 on average, feasibility.md §3d), and µs per HINCRBY through
the port (one trio -> asyncio bridge each). Each figure is the best of ``--repeat`` runs: wall
time is noisy on a shared 2-core machine. The load harness can call
:func:`sim.backends.redis.measure_modes` itself.
"""

from __future__ import annotations

import argparse

import trio

from sim.backends import BackendError
from sim.backends.redis import Reservation, ReservationCost, measure_modes

DEFAULT_REDIS = "redis://127.0.0.1:6379/0"


def best(runs: list[dict[Reservation, ReservationCost]]) -> dict[Reservation, ReservationCost]:
    """Per mode, the run with the cheapest reservation (HINCRBY: its own minimum)."""
    out: dict[Reservation, ReservationCost] = {}
    for mode in runs[0]:
        fastest = min((r[mode] for r in runs), key=lambda c: c.us_per_reservation)
        hincrby = min(r[mode].us_per_hincrby for r in runs)
        out[mode] = ReservationCost(
            fastest.spec,
            mode,
            fastest.reservations,
            fastest.probes,
            fastest.us_per_reservation,
            fastest.us_per_probe,
            hincrby,
        )
    return out


def report(label: str, costs: dict[Reservation, ReservationCost]) -> None:
    for mode, c in costs.items():
        print(
            f"{label:<10} {mode:<5} {c.us_per_reservation:>9.0f} µs/reservation "
            f"{c.us_per_probe:>7.0f} µs/probe  ({c.probes / c.reservations:.2f} probes each, "
            f"{c.reservations} reservations)   HINCRBY {c.us_per_hincrby:>5.0f} µs"
        )
    loop, lua = costs["loop"], costs["lua"]
    print(f"{label:<10} loop / lua: {loop.us_per_reservation / lua.us_per_reservation:.2f}x")


def main() -> None:
    """Measure fakeredis, then the real server when it answers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default=DEFAULT_REDIS, help="real server URL")
    parser.add_argument("--cap", type=int, default=100, help="reservations per window")
    parser.add_argument("--fill", type=int, default=6, help="windows filled per run")
    parser.add_argument("--incrs", type=int, default=1000, help="HINCRBYs timed per run")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    def measure(spec: str) -> dict[Reservation, ReservationCost]:
        async def run() -> dict[Reservation, ReservationCost]:
            return await measure_modes(spec, cap=args.cap, fill_windows=args.fill, incrs=args.incrs)

        return best([trio.run(run) for _ in range(args.repeat)])

    report("fakeredis", measure("fakeredis"))
    try:
        costs = measure(args.redis)
    except BackendError as exc:
        print(f"real Redis: skipped ({exc})")
        return
    report("redis", costs)


if __name__ == "__main__":
    main()
