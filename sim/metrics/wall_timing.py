"""Load-harness metrics (``sim load``), reduced from ``PortCall`` and ``JobTimed`` records.

* ``load.ops.<port.method>.count/p50_ms/p99_ms/max_ms``: wall latency of each query kind;
* ``load.jobs.<name>.count``, ``.overruns`` and ``.overrun_fraction``: periodic jobs whose run
  took longer (in wall time) than their period at the run's speed;
* ``load.jobs.<name>.lag.p50_s/p99_s/max_s`` and ``load.lag.p99_s``: how far behind schedule
  (virtual seconds) periodic iterations started -- the wall clock lagging the schedule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events.cvsa_kinds import JobTimed, PortCall
from sim.events.log import Chunk
from sim.metrics.base import Histogram, percentiles
from sim.units import SECOND_MS


class LoadMetrics:
    """See the module docstring."""

    def __init__(self) -> None:
        self.ops: dict[int, Histogram] = {}
        self.lag: dict[int, Histogram] = {}
        self.runs: Counter[int] = Counter()
        self.overruns: Counter[int] = Counter()
        self.names: list[str] = []

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.names = list(names)
        calls = chunk.table(PortCall)
        if calls.size:
            for method in np.unique(calls[:, 2]).tolist():
                sel = calls[:, 2] == method
                self.ops.setdefault(method, Histogram()).add(calls[sel, 3])
        jobs = chunk.table(JobTimed)
        periodic = jobs[jobs[:, 6] > 0] if jobs.size else jobs
        for name in np.unique(periodic[:, 2]).tolist() if periodic.size else []:
            sel = periodic[periodic[:, 2] == name]
            self.runs[name] += sel.shape[0]
            self.overruns[name] += int((sel[:, 5] > sel[:, 6]).sum())
            self.lag.setdefault(name, Histogram()).add(sel[:, 4])

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for method, hist in sorted(self.ops.items()):
            stats = percentiles(hist, f"load.ops.{self.names[method]}", 1000.0)
            out.update({_ms(k): v for k, v in stats.items()})
        all_lag = Histogram()
        for name, n in sorted(self.runs.items()):
            prefix = f"load.jobs.{self.names[name]}"
            out[f"{prefix}.count"] = n
            out[f"{prefix}.overruns"] = self.overruns[name]
            out[f"{prefix}.overrun_fraction"] = round(self.overruns[name] / n, 6)
            all_lag.merge(self.lag[name])
            stats = percentiles(self.lag[name], f"{prefix}.lag", SECOND_MS)
            out.update({_s(k): v for k, v in stats.items()})
        if all_lag.n:
            # The percentile of the lags in ms, then in seconds (not that of the lags in s).
            (p99,) = all_lag.percentiles([99])
            out["load.lag.p99_s"] = round(p99 / 1000, 6)
            out["load.lag.max_s"] = round(float(all_lag.values[-1]) / 1000, 6)
        return out


def _ms(key: str) -> str:
    last = key.rsplit(".", 1)[-1]
    return key if last == "count" else key + "_ms"


def _s(key: str) -> str:
    last = key.rsplit(".", 1)[-1]
    return key if last == "count" else key + "_s"
