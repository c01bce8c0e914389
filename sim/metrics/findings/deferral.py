"""Finding ``modes``: what the traffic modes kept running and deferred, and when it caught up.

Seed 003 §5.1: in peak and degraded modes the hot work (milestone, new) keeps running and the
cold work (normal and archive rows, by default) waits -- at most ``max_defer`` past its due time
-- and is back-filled when the mode ends, normal before archive (docs/write-path.md "Modes").
Read from the log: the modes' intervals (``ModeChanged``), and for every row of a type the mode
defers that fell due inside one of its intervals, its fate from the ticks and cleanup:

* *back-filled*: dispatched after the mode ended (how long after: the catch-up time);
* *taken in the mode*: dispatched before it ended (it reached the bound, or a tick's look-ahead
  took it just before the mode began);
* *lost*: deleted by cleanup while still pending (only past the bound, or when a tick's
  look-back cannot reach it: the deployed 2-minute look-back, reference §8.1);
* *still waiting* at the end of the run.

What the modes keep: the lateness (dispatch minus due) of milestone and new rows inside the
modes against outside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType, TrafficMode
from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import RunEnded
from sim.events.log import Chunk
from sim.events.write_kinds import TRAFFIC_MODE, ModeChanged
from sim.metrics.findings.verdicts import Finding, Severity, duration, finding_metrics, local
from sim.units import Ms

_TYPE: Final = K.SNAPSHOT_TYPE.codes()
_HOT: Final = (_TYPE[ScheduleType.MILESTONE], _TYPE[ScheduleType.NEW])
_PENDING: Final = K.SCHEDULE_STATUS.code(ScheduleStatus.PENDING.value)
_DEFAULT: Final = TRAFFIC_MODE.code(TrafficMode.DEFAULT.value)
Int64s = npt.NDArray[np.int64]


class Deferral:
    """Reducer of finding ``modes`` (keyword arguments: ``[findings.modes]``)."""

    ID = "modes"

    def __init__(
        self,
        defers: Mapping[str, Sequence[str]],
        max_defer_ms: Ms,
        tz_offset_ms: Ms,
        *,
        warn_lost: int,
        warn_catch_up: Ms,
    ) -> None:
        self.defers = {
            TRAFFIC_MODE.code(mode): {_TYPE[ScheduleType(t)] for t in types}
            for mode, types in defers.items()
        }
        self.max_defer_ms = max_defer_ms
        self.tz_offset_ms = tz_offset_ms
        self.warn_lost = warn_lost
        self.warn_catch_up = warn_catch_up
        self.changes: list[tuple[Ms, int]] = []
        self.dispatched: list[Int64s] = []  # (t, type, due) of every dispatch
        self.lost: list[Int64s] = []  # (t, type, due) of pending rows cleanup deleted
        self.end_ms: Ms | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        for _, t, mode, _, _ in chunk.table(ModeChanged).tolist():
            self.changes.append((t, mode))
        d = chunk.table(K.ScheduleDispatched)
        if d.shape[0]:
            self.dispatched.append(d[:, [1, 4, 5]])
        gone = chunk.table(K.ScheduleDeleted)
        gone = gone[gone[:, 6] == _PENDING]
        if gone.shape[0]:
            self.lost.append(gone[:, [1, 4, 5]])
        for t in chunk.column(RunEnded, "t_ms").tolist():
            self.end_ms = t

    def intervals(self) -> list[tuple[Ms, Ms, int]]:
        """(from, to, mode) of every stretch in a mode other than default."""
        end = self.end_ms if self.end_ms is not None else 2**62
        out = []
        for i, (t, mode) in enumerate(self.changes):
            until = self.changes[i + 1][0] if i + 1 < len(self.changes) else end
            if mode != _DEFAULT and until > t:
                out.append((t, until, mode))
        return out

    def finding(self) -> Finding:
        tz = self.tz_offset_ms
        spans = self.intervals()
        rows = np.concatenate(self.dispatched) if self.dispatched else np.zeros((0, 3), np.int64)
        lost_rows = np.concatenate(self.lost) if self.lost else np.zeros((0, 3), np.int64)
        backfilled = during = lost = 0
        catch_up: list[tuple[Ms, Ms]] = []  # (mode end, last back-fill)
        filled_at: dict[int, list[Int64s]] = {}  # type -> back-fill instants
        in_mode = np.zeros(rows.shape[0], bool)
        for a, b, mode in spans:
            in_mode |= (rows[:, 0] >= a) & (rows[:, 0] < b)
            types = np.array(sorted(self.defers.get(mode, ())), np.int64)
            mine = np.isin(rows[:, 1], types) & (rows[:, 2] >= a) & (rows[:, 2] < b)
            late = mine & (rows[:, 0] >= b)
            backfilled += int(late.sum())
            during += int((mine & (rows[:, 0] < b)).sum())
            if late.any():
                catch_up.append((b, int(rows[late, 0].max())))
                for code in types.tolist():
                    filled_at.setdefault(code, []).append(rows[late & (rows[:, 1] == code), 0])
            gone = np.isin(lost_rows[:, 1], types)
            gone &= (lost_rows[:, 2] >= a) & (lost_rows[:, 2] < b)
            lost += int(gone.sum())
        hot = np.isin(rows[:, 1], np.array(_HOT, np.int64))
        late_ms = np.maximum(rows[:, 0] - rows[:, 2], 0)  # a look-ahead takes rows early

        def p99(mask: npt.NDArray[np.bool_]) -> float | None:
            picked = late_ms[mask]
            return float(np.percentile(picked, 99)) if picked.size else None

        hot_in, hot_out = p99(hot & in_mode), p99(hot & ~in_mode)
        longest_catch_up = max((t - b for b, t in catch_up), default=0)
        by_mode: dict[str, list[Ms]] = {}
        for a, b, mode in spans:
            by_mode.setdefault(TRAFFIC_MODE.words[mode], []).append(b - a)
        if not spans:
            sentence = "No traffic mode was entered: every row was taken when due."
        else:
            times = ", ".join(
                f"{name} {duration(sum(ms))} ({len(ms)} time(s))"
                for name, ms in sorted(by_mode.items())
            )
            deferred = backfilled + during + lost
            sentence = (
                f"Modes ran for {times}, first at {local(spans[0][0], tz)}. "
                f"{deferred:,} deferred row(s) fell due inside them: {backfilled:,} back-filled "
                f"after the mode ended{_catch_up(filled_at, longest_catch_up)}, {during:,} "
                f"taken in the mode (at the {duration(self.max_defer_ms)} bound or by a tick's "
                f"look-ahead), {lost:,} deleted by cleanup before they ran."
            )
            if hot_in is not None:
                outside = "no dispatch" if hot_out is None else duration(hot_out)
                sentence += (
                    f" Milestone and new rows kept running: dispatched p99 {duration(hot_in)} "
                    f"after due inside the modes, {outside} outside."
                )
        problems = lost >= self.warn_lost or longest_catch_up >= self.warn_catch_up
        return Finding(
            id=self.ID,
            title="Traffic modes",
            severity=Severity.WARN if spans and problems else Severity.OK,
            sentence=sentence,
            mechanism=(
                "Seed 003 §5.1: peak mode (a time-of-day schedule) and degraded mode (the write "
                "backlog) keep milestone and new rows running and defer the cold ones (normal "
                "and archive rows by default): the ticks leave them until the mode ends or they "
                "have waited the bound, and cleanup keeps them that much longer. When the mode "
                "ends the bulk tick back-fills them, normal before archive."
            ),
            numbers={
                "mode_changes": len(self.changes),
                **{f"{name}_s": round(sum(ms) / 1000, 3) for name, ms in sorted(by_mode.items())},
                "backfilled_rows": backfilled,
                "taken_in_mode_rows": during,
                "lost_rows": lost,
                "longest_catch_up_s": round(longest_catch_up / 1000, 3),
                **({} if hot_in is None else {"hot_p99_late_in_modes_s": round(hot_in / 1000, 3)}),
                **({} if hot_out is None else {"hot_p99_late_outside_s": round(hot_out / 1000, 3)}),
            },
            examples=tuple(
                {"mode": TRAFFIC_MODE.words[m], "from": local(a, tz), "for": duration(b - a)}
                for a, b, m in spans[:5]
            ),
            plots=("write_path.png",),
            thresholds={"warn_lost": self.warn_lost, "warn_catch_up": self.warn_catch_up},
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())


def _catch_up(filled_at: Mapping[int, list[Int64s]], longest_ms: Ms) -> str:
    """`` (normal 120, archive 30; the last 14m after the mode ended, normal first)``."""
    if not filled_at:
        return ""
    times = {code: np.concatenate(ts) for code, ts in sorted(filled_at.items())}
    counts = ", ".join(
        f"{K.SNAPSHOT_TYPE.words[code]} {ts.size:,}" for code, ts in times.items() if ts.size
    )
    when = "all at its end" if longest_ms == 0 else f"the last {duration(longest_ms)} after it"
    normal, archive = (times.get(_TYPE[t]) for t in (ScheduleType.NORMAL, ScheduleType.ARCHIVE))
    first = ""
    both = normal is not None and archive is not None and normal.size and archive.size
    if both and normal.max() <= archive.min():  # type: ignore[union-attr]
        first = ", normal first"
    return f" ({counts}; {when}{first})"
