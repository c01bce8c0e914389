"""Finding ``milestones``: was every milestone crossing of a tracked song captured, and how fast?

The design follows songs as they approach a milestone (100k, 1M, 2M ...): every 5 min
``dispatchMilestoneSnapshots`` takes the videos whose latest views are near one, or whose ETA is
below 2300 h, and books a ``milestone`` row at now + ETA / factor, clamped to [2 s, 1.2 h], so the
snapshots tighten around the crossing (seed 000 "milestone类型：成就预判"; reference §11.1,
§11.4, §11.5). Only songs get regular snapshots (seed 000 "normal类型": 在songs表中) that keep
their latest views current, so the promise covers songs; a non-song has the catalogue's snapshot
only and is a candidate by chance. Its crossings are reported apart and never fail the run.

Ground truth is the world's (``RunTruth``: every crossing's exact instant t*, whether the video
was a song then); the capture rules are those of invariant ``missed_milestones``
(:class:`~sim.metrics.invariants.MilestoneCapture`, which this finding runs with its target).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.findings.milestone_causes import CAUSES, Causes
from sim.metrics.findings.verdicts import (
    EXAMPLES,
    Finding,
    Severity,
    duration,
    finding_metrics,
    local,
)
from sim.metrics.invariants.songs import MilestoneCapture
from sim.metrics.invariants.truth import RunTruth
from sim.units import Ms

_TYPES = K.SNAPSHOT_TYPE.words


def _p(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q, method="linear")) if values.size else 0.0


def _n(count: int, noun: str) -> str:
    """``"1 crossing"``, ``"3 crossings"``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _causes_text(causes: Sequence[str]) -> str:
    counts = {c: causes.count(c) for c in CAUSES if c in causes}
    return ", ".join(f"{c.replace('_', ' ')}: {n}" for c, n in counts.items())


class MilestoneFinding:
    """Reducer of finding ``milestones`` (keyword arguments: ``[findings.milestones]``)."""

    ID = "milestones"

    def __init__(
        self,
        truth: RunTruth,
        tz_offset_ms: Ms,
        *,
        capture_target: Ms,
        warn_latency_p99: Ms,
        warn_bracket_p99: Ms,
        fail_missed: int,
    ) -> None:
        self.tz = tz_offset_ms
        self.target, self.fail_missed = capture_target, fail_missed
        self.warn_latency, self.warn_bracket = warn_latency_p99, warn_bracket_p99
        c = self.capture = MilestoneCapture(
            truth.crossings, bound_ms=capture_target, tracked=truth.tracked
        )
        self.known_before = np.asarray(truth.known_before, bool)[c.visible_index]
        self.deadline = c.t_star + capture_target
        self.causes = Causes(c.aid, c.t_star, self.deadline)

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        judged = self.capture.judged
        self.capture.feed(chunk, names)
        self.causes.feed(chunk, judged)

    def finding(self) -> Finding:
        c, now = self.capture, self.capture.now
        crossed = 0 if now is None else int(np.searchsorted(c.t_star, now, side="right"))
        got = c.captured_at[:crossed]
        in_time = (got >= 0) & (got <= self.deadline[:crossed])
        decided = self.deadline < (now if now is not None else 0)
        below = self.known_before | ((c.first_below >= 0) & (c.first_below < c.t_star))
        missed = np.flatnonzero(~in_time)
        causes = dict(
            zip(
                missed.tolist(),
                self.causes.classify(missed, decided, below, now or 0),
                strict=True,
            )
        )
        tracked = c.tracked[:crossed]
        caught = np.flatnonzero(tracked & (got >= 0))
        latency = got[caught] - c.t_star[caught]
        with_below = caught[c.last_below[caught] >= 0]
        bracket = got[with_below] - c.last_below[with_below]
        t_missed = [i for i in missed.tolist() if tracked[i]]
        failing = [i for i in t_missed if causes[i] != "run_ended"]
        u_missed = [i for i in missed.tolist() if not tracked[i] and causes[i] != "run_ended"]
        n_t, n_u = int(tracked.sum()), int((~tracked).sum())
        lat_p99, br_p99 = _p(latency, 99), _p(bracket, 99)
        numbers: dict[str, Any] = {
            "tracked": n_t,
            "tracked_captured": int(np.count_nonzero(tracked & in_time)),
            "tracked_missed": len(failing),
            "tracked_undecided": len(t_missed) - len(failing),
            "latency_p50_s": round(_p(latency, 50) / 1000, 3),
            "latency_p99_s": round(lat_p99 / 1000, 3),
            "latency_max_s": round(float(latency.max(initial=0)) / 1000, 3),
            "bracket_p50_s": round(_p(bracket, 50) / 1000, 3),
            "bracket_p99_s": round(br_p99 / 1000, 3),
            "untracked": n_u,
            "untracked_captured": int(np.count_nonzero(~tracked & in_time)),
            "untracked_missed": len(u_missed),
            "hidden": c.hidden,
        }
        for cause in CAUSES[1:]:
            numbers[f"missed.{cause}"] = sum(causes[i] == cause for i in failing)
            numbers[f"untracked_missed.{cause}"] = sum(causes[i] == cause for i in u_missed)
        slow = []
        if lat_p99 >= self.warn_latency:
            slow.append(f"latency p99 {duration(lat_p99)} >= {duration(self.warn_latency)}")
        if br_p99 >= self.warn_bracket:
            slow.append(f"bracket p99 {duration(br_p99)} >= {duration(self.warn_bracket)}")
        if len(failing) >= self.fail_missed:
            severity = Severity.FAIL
        elif slow:
            severity = Severity.WARN
        else:
            severity = Severity.INFO if u_missed else Severity.OK
        stats = (
            f"latency p50 {duration(_p(latency, 50))}, p99 {duration(lat_p99)}, max "
            f"{duration(float(latency.max(initial=0)))}; bracket p99 {duration(br_p99)}"
        )
        target = duration(self.target)
        if not n_t:
            head = "No tracked song crossed a milestone"
        elif failing:
            head = (
                f"{len(failing):,} of {_n(n_t, 'tracked song crossing')} not captured within "
                f"{target} ({_causes_text([causes[i] for i in failing])}); captures: {stats}"
            )
        else:
            head = (
                f"Every one of {_n(n_t - len(t_missed), 'tracked song crossing')} was "
                f"captured within {target} ({stats})"
            )
        parts = [head]
        if slow:
            parts.append("too slowly: " + ", ".join(slow))
        if len(t_missed) > len(failing):
            parts.append(f"{len(t_missed) - len(failing):,} crossed too near the end to judge")
        if n_u:
            parts.append(
                f"{_n(n_u, 'crossing')} of non-songs, which the design does not track (info): "
                f"{numbers['untracked_captured']} captured anyway, {len(u_missed)} not followed"
                + (f" ({_causes_text([causes[i] for i in u_missed])})" if u_missed else "")
            )
        return Finding(
            id=self.ID,
            title="Milestone capture",
            severity=severity,
            sentence="; ".join(parts) + ".",
            mechanism=(
                "Every 5 min the milestone dispatcher books a milestone row for each video whose "
                "latest views are near a milestone (100k, 1M, 2M ...) or whose ETA is under "
                "2300 h, at now + ETA/factor clamped to [2 s, 1.2 h]; the 1 s tick runs it, so "
                "the snapshots tighten geometrically around the crossing (seed 000 milestone; "
                "reference §11.1, §11.5). Only songs get regular snapshots that keep their "
                "latest views current, so only songs are tracked; a missed crossing is "
                "explained by the first broken link: " + ", ".join(CAUSES[1:]) + "."
            ),
            numbers=numbers,
            examples=self._examples(failing, caught, u_missed, causes),
            plots=("milestones.png",),
            thresholds={
                "capture_target_s": self.target / 1000,
                "warn_latency_p99_s": self.warn_latency / 1000,
                "warn_bracket_p99_s": self.warn_bracket / 1000,
                "fail_missed": self.fail_missed,
            },
        )

    def _examples(
        self, failing: list[int], caught: np.ndarray, u_missed: list[int], causes: dict[int, str]
    ) -> tuple[dict[str, Any], ...]:
        """Missed tracked crossings first, then the slowest tracked captures, then untracked
        misses."""
        c = self.capture
        on_time = [i for i in caught.tolist() if i not in causes]
        slowest = sorted(on_time, key=lambda i: (-(c.captured_at[i] - c.t_star[i]), i))
        out = []
        for i in (failing + slowest + u_missed)[:EXAMPLES]:
            got, below = int(c.captured_at[i]), int(c.last_below[i])
            out.append(
                {
                    "aid": int(c.aid[i]),
                    "song": bool(c.tracked[i]),
                    "milestone": int(c.milestone[i]),
                    "crossed": local(int(c.t_star[i]), self.tz),
                    "captured": local(got, self.tz) if got >= 0 else None,
                    "type": _TYPES[int(c.captured_type[i])] if got >= 0 else None,
                    "latency": duration(got - int(c.t_star[i])) if got >= 0 else None,
                    "bracket": duration(got - below) if got >= 0 and below >= 0 else None,
                    "cause": causes.get(i, "captured"),
                }
            )
        return tuple(out)

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
