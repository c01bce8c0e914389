"""Finding ``levelling``: how far did load levelling move the rows it capped?

``adjustSnapshotTime`` (seed 000 "流量控制"; reference §6.2) gives a ``normal`` or ``archive``
row the first window, from its target's window forward, whose count is under the cap, and a
uniform offset in it. With room in the target's window the row moves by less than one window
(5 min, ``Params.window_ms``); a full window pushes it into the next one, and a run of full
windows (the archive dispatcher's block of same-time targets, §13b step 2) pushes it hours. The
delay is the row's ``due_ms`` minus its ``requested_ms`` (``ScheduleCreated``).

State is bounded: per type, a histogram of the delay in whole seconds (the percentiles are those
of the delays floored to the second), and per target window the rows pushed out of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.base import Histogram
from sim.metrics.findings.verdicts import (
    EXAMPLES,
    Finding,
    Severity,
    duration,
    finding_metrics,
    local,
    severity_at_least,
)
from sim.units import SECOND_MS, Ms

_LEVELLED = np.array([K.PLACEMENT.code(w) for w in ("forward", "fallback", "exhausted")])
"""Placements of rows that went through adjustSnapshotTime (§5 step 4, §6.2)."""
_ARCHIVE = K.SNAPSHOT_TYPE.code("archive")
QUANTILES = (50, 90, 99)


def nearest_rank(hist: Histogram, p: float) -> int:
    """The smallest value with at least ``p`` % of the samples at or below it."""
    cum = np.cumsum(hist.counts)
    need = max(1, int(np.ceil(p / 100 * cum[-1])))
    return int(hist.values[np.searchsorted(cum, need)])


class Levelling:
    """Reducer of finding ``levelling`` (keyword arguments: ``[findings.levelling]``)."""

    ID = "levelling"

    def __init__(
        self,
        tz_offset_ms: Ms,
        window_ms: Ms,
        *,
        warn_p99: Ms,
        fail_p99: Ms,
        warn_p99_archive: Ms,
        fail_p99_archive: Ms,
    ) -> None:
        self.tz_offset_ms = tz_offset_ms
        self.window_ms = window_ms
        # (warn, fail) per type: archive runs weekly (§13b), normal every 6-72 h (§11.6).
        self.limits = {_ARCHIVE: (warn_p99_archive, fail_p99_archive)}
        self.default_limits = (warn_p99, fail_p99)
        self.delays: dict[int, Histogram] = {}  # type -> delay histogram (s)
        self.pushed: dict[int, int] = {}  # type -> rows whose due window != target window
        # target window -> [rows pushed out of it, largest delay, its aid, its type]
        self.windows: dict[int, list[int]] = {}

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        rows = chunk.table(K.ScheduleCreated)
        if not rows.size:
            return
        rows = rows[np.isin(rows[:, 10], _LEVELLED)]
        if not rows.size:
            return
        aid, types, requested, due = rows[:, 3], rows[:, 4], rows[:, 5], rows[:, 6]
        delay = due - requested
        target = requested - requested % self.window_ms
        out = target != due - due % self.window_ms
        for code in np.unique(types).tolist():
            sel = types == code
            self.delays.setdefault(code, Histogram()).add(delay[sel] // SECOND_MS)
            self.pushed[code] = self.pushed.get(code, 0) + int(out[sel].sum())
        if not out.any():
            return
        # Per target window of the pushed rows: how many, and the row with the largest delay.
        w, d, a, ty = target[out], delay[out], aid[out], types[out]
        order = np.lexsort((d, w))
        w, d, a, ty = w[order], d[order], a[order], ty[order]
        last = np.flatnonzero(np.append(w[1:] != w[:-1], True))
        sizes = np.diff(np.append(-1, last))
        for i, n in zip(last.tolist(), sizes.tolist(), strict=True):
            win = int(w[i])
            old = self.windows.get(win)
            if old is None:
                self.windows[win] = [n, int(d[i]), int(a[i]), int(ty[i])]
            else:
                old[0] += n
                if d[i] >= old[1]:  # ties: the latest row, as within a chunk
                    old[1:] = [int(d[i]), int(a[i]), int(ty[i])]

    def _limits(self, code: int) -> tuple[Ms, Ms]:
        return self.limits.get(code, self.default_limits)

    def finding(self) -> Finding:
        types = sorted(self.delays)
        word = K.SNAPSHOT_TYPE.word
        rows = sum(self.delays[c].n for c in types)
        pushed = sum(self.pushed.values())
        share = pushed / rows if rows else 0.0
        numbers: dict[str, Any] = {"rows": rows, "pushed": pushed, "pushed_share": round(share, 6)}
        p99: dict[int, int] = {}
        for c in types:
            h = self.delays[c]
            p99[c] = nearest_rank(h, 99) * SECOND_MS
            numbers[f"{word(c)}.rows"] = h.n
            numbers[f"{word(c)}.pushed"] = self.pushed.get(c, 0)
            for q in QUANTILES:
                numbers[f"{word(c)}.delay_p{q}_s"] = nearest_rank(h, q)
            numbers[f"{word(c)}.delay_max_s"] = int(h.values[-1])
        numbers["delay_p99_s"] = max(p99.values(), default=0) // SECOND_MS
        verdicts = {c: severity_at_least(p99[c], *self._limits(c)) for c in types}
        severity = max(verdicts.values(), key=lambda v: v.rank, default=Severity.OK)
        per_type = " and ".join(
            f"{duration(p99[c])} for {word(c)} (warn at {duration(self._limits(c)[0])})"
            for c in types
        )
        worst_windows = sorted(self.windows.items(), key=lambda kv: (-kv[1][0], kv[0]))[:EXAMPLES]
        if not rows:
            sentence = "No row went through load levelling (no normal or archive row was created)."
        else:
            over = [word(c) for c in types if verdicts[c].rank > 0]
            verdict = (
                f"over the threshold for {' and '.join(over)}"
                if over
                else "within the threshold" + ("s" if len(types) > 1 else "")
            )
            where = ""
            if worst_windows:
                # The count is of every capped type; the type named is the furthest row's.
                win, (n, d, _a, t) = worst_windows[0]
                where = (
                    f", the most from the window of {local(win, self.tz_offset_ms)} "
                    f"({n:,} rows; the furthest, a {word(t)} row, by {duration(d)})"
                )
            sentence = (
                f"Levelling moved {share:.0%} of {rows:,} capped rows out of their target's "
                f"5-minute window{where}; the p99 delay (due minus requested time) was "
                f"{per_type}: {verdict}."
            )
        return Finding(
            id=self.ID,
            title="Load levelling delay",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "adjustSnapshotTime (seed 000 流量控制; reference §6.2) puts a normal or archive "
                "row in the first window from its target's on whose count is under the cap, at a "
                "uniform offset: with room the row moves by less than one 5-minute window; each "
                "full window pushes it one window later. Rows with the same target (the archive "
                "dispatcher's, §13b step 2) spill forward in blocks of the cap. Regular intervals "
                "are 6 to 72 hours (§11.6), so a delay of minutes is noise and one of hours "
                "shifts the cadence."
            ),
            numbers=numbers,
            examples=tuple(
                {
                    "window": local(win, self.tz_offset_ms),
                    "pushed": n,
                    "max_delay": duration(d),
                    "aid": a,
                    "type": word(t),
                }
                for win, (n, d, a, t) in worst_windows
            ),
            plots=("occupancy.png", "occupancy_heatmap.png"),
            thresholds={
                "warn_p99_s": self.default_limits[0] / SECOND_MS,
                "fail_p99_s": self.default_limits[1] / SECOND_MS,
                "warn_p99_archive_s": self.limits[_ARCHIVE][0] / SECOND_MS,
                "fail_p99_archive_s": self.limits[_ARCHIVE][1] / SECOND_MS,
            },
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
