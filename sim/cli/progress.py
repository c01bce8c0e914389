"""Progress on stderr: a live bar on a terminal, plain lines otherwise (libraries.md §3).

The engine calls :meth:`Progress.observe` with virtual time every few thousand events; wall time
is read here, outside the simulation, and never feeds back into it.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, TaskID, TextColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

from sim.units import DAY_MS, HOUR_MS, SECOND_MS

PLAIN_EVERY_S = 5.0


def _span(ms: float) -> str:
    if ms >= DAY_MS:
        return f"{ms / DAY_MS:.2f}d"
    if ms >= HOUR_MS:
        return f"{ms / HOUR_MS:.1f}h"
    return f"{ms / SECOND_MS:.0f}s"


class Progress:
    """Shows simulated time, percent done, compression ratio and ETA."""

    def __init__(self, label: str, start_ms: int, end_ms: int, *, enabled: bool = True) -> None:
        self.label = label
        self.start_ms = start_ms
        self.end_ms = end_ms
        self.enabled = enabled
        self.console = Console(stderr=True)
        self.live = enabled and self.console.is_terminal
        self._t0 = time.perf_counter()
        self._last_plain = self._t0
        self._rich: RichProgress | None = None
        self._task = TaskID(0)

    def __enter__(self) -> Progress:
        self._t0 = time.perf_counter()
        if self.live:
            self._rich = RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn(
                    "{task.percentage:>5.1f}%  sim {task.fields[sim]}  x{task.fields[ratio]}"
                ),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._rich.start()
            self._task = self._rich.add_task(
                self.label, total=self.end_ms - self.start_ms, sim="0s", ratio="-"
            )
        return self

    def stage(self, text: str) -> None:
        """What the run does now (drawing the world, loading the initial state, ...): on the
        bar's label, or a plain line; set-up can take a while before virtual time moves."""
        if not self.enabled:
            return
        if self._rich is not None:
            label = self.label if text == "running" else f"{self.label}: {text}"
            self._rich.update(self._task, description=label)
        else:
            print(f"{self.label}: {text}", file=sys.stderr, flush=True)

    def observe(self, now_ms: int) -> None:
        if not self.enabled:
            return
        done = now_ms - self.start_ms
        wall = time.perf_counter() - self._t0
        ratio = f"{done / SECOND_MS / wall:,.0f}" if wall > 0 else "-"
        if self._rich is not None:
            self._rich.update(self._task, completed=done, sim=_span(done), ratio=ratio)
        elif wall - (self._last_plain - self._t0) >= PLAIN_EVERY_S:
            self._last_plain = time.perf_counter()
            total = self.end_ms - self.start_ms
            pct = 100 * done / total if total else 100.0
            rate = done / wall if wall > 0 else 0
            eta = (total - done) / rate if rate > 0 else float("nan")
            print(
                f"{self.label}: {pct:5.1f}%  simulated {_span(done)} of {_span(total)}  "
                f"compression x{ratio}  eta {eta:,.0f}s",
                file=sys.stderr,
                flush=True,
            )

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._rich is not None:
            self._rich.stop()
