"""Run an engine in a test with a recording sink, SimPy-``log``-fixture style."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from sim.clock import Clock, VirtualClock
from sim.determinism import deterministic_trio
from sim.engine import ConcurrentEngine, Engine, RealClockEngine, VirtualEngine
from sim.events import Chunk, EventLog


class Recorder:
    """A sink that keeps every chunk (small runs only) and exposes typed records."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.header = b""
        self.fingerprint = ""
        self.partial = False

    def open(self, header: bytes) -> None:
        self.header = header

    def write(self, chunk: Chunk, raw: bytes) -> None:
        self.chunks.append(chunk)

    def close(self, fingerprint: str, partial: bool) -> None:
        self.fingerprint = fingerprint
        self.partial = partial

    def events(self, record_type: type | None = None) -> list[Any]:
        """Every record (or every record of one kind), in log order."""
        out = [e for c in self.chunks for e in c.events()]
        return out if record_type is None else [e for e in out if type(e) is record_type]


def run_engine(
    setup: Callable[[Engine], None],
    until_ms: int,
    *,
    epoch_ms: int = 0,
    elide: bool = True,
    seed: int = 0,
    clock: Clock | None = None,
    concurrent: bool = False,
) -> tuple[Engine, Recorder]:
    """Build an engine at ``epoch_ms``, let ``setup`` register queues and processes, run it to
    ``until_ms`` and return the engine and the recorder."""
    rec = Recorder()
    log = EventLog([rec])
    clock = clock or VirtualClock(epoch_ms)
    kind = (
        ConcurrentEngine if concurrent else VirtualEngine if clock.is_virtual else RealClockEngine
    )
    engine = kind(clock=clock, log=log, seed=seed, elide=elide)
    setup(engine)
    log.open()

    async def main() -> None:
        await engine.run(until_ms)

    with deterministic_trio(seed):
        trio.run(main)
    return engine, rec
