"""Finding ``throttle``: how the crawler met bilibili's throttling (issue 28; seeds 003 §6.3, 004).

Counted from the log: bilibili's answers per minute (``UpstreamRequest`` with a proxy and an
answer: ok, 5xx, 4xx, 429 or -412) and how many were throttled (-412 or 429); requests the
crawler's own limiters refused (``no_proxy``) are not answers. The adaptive response's changes
of the rate factor (``RateFactorChanged``), the storms (``FaultStarted``/``FaultEnded`` of a
``risk_control_storm`` or ``throttling_storm``), and, for retry by class, the retry delays by
error kind (``RetryScheduled``), the honoured Retry-Afters (``RetryAfterHonoured``) and the
plain 4xx failures (``UpstreamFailed``).

The severity reads the throttled share of answers during the storms (over the whole run when
there is none): warn from ``warn_share``, fail from ``fail_share``. Without throttled answers,
rate changes or retry by class, the finding says so and is ok (the mechanisms are off or idle).
docs/upstream-reaction.md says how to read it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import median
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events import upstream_kinds as U
from sim.events.engine_kinds import RunEnded
from sim.events.log import Chunk
from sim.metrics.findings.fault_windows import FaultWindows
from sim.metrics.findings.verdicts import (
    Finding,
    Score,
    Severity,
    duration,
    finding_metrics,
    local,
    severity_at_least,
)
from sim.units import Ms

_OUT = K.PROXY_OUTCOME.codes()
_ANSWERED = np.array(
    [_OUT[w] for w in ("ok", "http_5xx", "http_429", "throttled", "http_4xx")], dtype=np.int64
)
_THROTTLED = np.array([_OUT["throttled"], _OUT["http_429"]], dtype=np.int64)
_STORMS = frozenset(K.FAULT_KIND.code(k) for k in ("risk_control_storm", "throttling_storm"))
_ERR = K.UPSTREAM_ERROR.codes()
_RATE_LIMITED = frozenset({_ERR["http_429"], _ERR["no_proxy"]})
_DROP = U.RATE_CHANGE.code("drop")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "0 %"


class ThrottleFinding:
    """Reducer of finding ``throttle`` (keyword arguments: ``[findings.throttle]``)."""

    ID = "throttle"

    def __init__(
        self,
        adaptive: bool,
        by_class: bool,
        tz_offset_ms: Ms,
        *,
        warn_share: float,
        fail_share: float,
        peak_window: Ms,
        peak_min_answers: int,
    ) -> None:
        self.adaptive = adaptive
        self.by_class = by_class
        self.tz = tz_offset_ms
        self.warn_share = warn_share
        self.fail_share = fail_share
        self.bin_ms = peak_window
        self.peak_min_answers = peak_min_answers
        self.bins: dict[int, list[int]] = {}  # bin (t // peak_window) -> [answers, throttled]
        self.held: Counter[int] = Counter()  # bin -> requests the crawler's limiters refused
        self.changes: list[tuple[int, int, int, int]] = []  # (t, factor, share, reason)
        self.retry_delays: dict[bool, list[int]] = {True: [], False: []}  # rate-limited?
        self.retried_4xx = 0
        self.failed_4xx = 0
        self.answered_4xx = 0
        self.retry_after = 0
        self.blocked_412 = 0
        self.end_ms: Ms | None = None
        self.faults = FaultWindows()

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.faults.feed(chunk)
        req = chunk.table(K.UpstreamRequest)
        answered = req[np.isin(req[:, 6], _ANSWERED) & (req[:, 2] >= 0)]
        self.held.update((req[req[:, 2] < 0][:, 1] // self.bin_ms).tolist())
        self.answered_4xx += int((req[:, 6] == _OUT["http_4xx"]).sum())
        minutes = answered[:, 1] // self.bin_ms
        throttled = np.isin(answered[:, 6], _THROTTLED)
        total, bad = Counter(minutes.tolist()), Counter(minutes[throttled].tolist())
        for m, n in total.items():
            b = self.bins.setdefault(m, [0, 0])
            b[0] += n
            b[1] += bad.get(m, 0)
        for _, t, factor, share, _, reason in chunk.table(U.RateFactorChanged).tolist():
            self.changes.append((t, factor, share, reason))
        for *_, delay, kind in chunk.table(K.RetryScheduled).tolist():
            self.retry_delays[kind in _RATE_LIMITED].append(delay)
            self.retried_4xx += kind == _ERR["http_4xx"]
        failed = chunk.table(K.UpstreamFailed)
        self.failed_4xx += int((failed[:, 4] == _ERR["http_4xx"]).sum())
        # A -412 on the single path is stored as the video's status (§9 step 4).
        self.blocked_412 += int(((failed[:, 5] == -412) & (failed[:, 3] == 1)).sum())
        self.retry_after += chunk.table(U.RetryAfterHonoured).shape[0]
        for t in chunk.column(RunEnded, "t_ms").tolist():
            self.end_ms = t

    # -- the numbers ------------------------------------------------------------------------
    def _storms(self) -> list[tuple[int, int, str]]:
        end = self.end_ms if self.end_ms is not None else 2**62
        return [
            (a, min(b, end), str(K.FAULT_KIND.word(kind)))
            for a, b, _, kind in self.faults.intervals
            if kind in _STORMS
        ]

    def _in(self, m: int, spans: list[tuple[int, int]]) -> bool:
        lo, hi = m * self.bin_ms, (m + 1) * self.bin_ms
        return not spans or any(a < hi and lo < b for a, b in spans)

    def _share_in(self, spans: list[tuple[int, int]]) -> tuple[int, int, int]:
        """(answers, throttled, held back) in bins overlapping any span (all bins when none)."""
        n = bad = 0
        for m, (total, throttled) in self.bins.items():
            if self._in(m, spans):
                n, bad = n + total, bad + throttled
        return n, bad, sum(v for m, v in self.held.items() if self._in(m, spans))

    def _adaptive_words(self, storm_start: int | None) -> tuple[str, dict[str, Any]]:
        if not self.adaptive:
            return "the adaptive response is off ([upstream.adaptive])", {}
        if not self.changes:
            return "the adaptive response never changed the rate", {"rate_changes": 0}
        drops = [c for c in self.changes if c[3] == _DROP]
        lowest = min(c[1] for c in self.changes)
        first = self.changes[0][0]
        low_at = next(c[0] for c in self.changes if c[1] == lowest)
        since = " of the storm's start" if storm_start is not None else " of its first drop"
        origin = storm_start if storm_start is not None else first
        words = (
            f"the adaptive response cut the request rate to {lowest / 10:.0f} % "
            f"({len(drops)} drop(s), the first at {local(first, self.tz)}, the lowest within "
            f"{duration(low_at - origin)}{since})"
        )
        last_t, last_factor = self.changes[-1][0], self.changes[-1][1]
        numbers: dict[str, Any] = {
            "rate_changes": len(self.changes),
            "rate_drops": len(drops),
            "lowest_factor": lowest / 1000,
            "final_factor": last_factor / 1000,
        }
        if last_factor == 1000 and last_t > low_at:
            words += f" and restored it by {local(last_t, self.tz)}"
            numbers["restored_after_s"] = round((last_t - low_at) / 1000, 3)
        else:
            words += f"; at the end it was at {last_factor / 10:.0f} %"
        return words, numbers

    def _retry_words(self) -> tuple[str, dict[str, Any]]:
        limited, other = self.retry_delays[True], self.retry_delays[False]
        if not (self.by_class or self.retry_after or self.answered_4xx):
            return "", {}
        parts = []
        if limited or other:
            med = [f"{duration(median(d))}" if d else "-" for d in (limited, other)]
            parts.append(
                f"{len(limited):,} rate-limited retries (429, no proxy) waited a median "
                f"{med[0]}, {len(other):,} others {med[1]}"
            )
        if self.retry_after:
            parts.append(f"{self.retry_after:,} honoured a Retry-After")
        if self.answered_4xx:
            parts.append(
                f"{self.answered_4xx:,} plain 4xx answers, {self.failed_4xx:,} of them seen as "
                f"4xx (the rest came through Aliyun FC as ALICLOUD_PROXY_ERR, §14.4), "
                f"{self.retried_4xx:,} of those retried"
            )
        if not parts:
            parts.append("no retries")
        head = "Retry by class: " if self.by_class else "Retries (one backoff for all): "
        numbers = {
            "rate_limited_retries": len(limited),
            "rate_limited_retry_median_s": round(median(limited) / 1000, 3) if limited else 0.0,
            "other_retries": len(other),
            "other_retry_median_s": round(median(other) / 1000, 3) if other else 0.0,
            "retry_after_honoured": self.retry_after,
            "http_4xx_answers": self.answered_4xx,
            "http_4xx": self.failed_4xx,
            "http_4xx_retried": self.retried_4xx,
        }
        return head + "; ".join(parts) + ".", numbers

    def finding(self) -> Finding:
        storms = self._storms()
        spans = [(a, b) for a, b, _ in storms]
        n_all, bad_all, held_all = self._share_in([])
        n_storm, bad_storm, held_storm = self._share_in(spans) if spans else self._share_in([])
        share = bad_storm / n_storm if n_storm else 0.0
        peak = max(
            ((b / n, m) for m, (n, b) in sorted(self.bins.items()) if n >= self.peak_min_answers),
            default=None,
        )
        adaptive_words, adaptive_numbers = self._adaptive_words(spans[0][0] if spans else None)
        retry_words, retry_numbers = self._retry_words()
        where = (
            f"during the {storms[0][2]} ({local(spans[0][0], self.tz)} for "
            f"{duration(spans[0][1] - spans[0][0])})"
            if storms
            else "over the run"
        )
        if bad_all == 0 and not self.changes:
            severity = Severity.OK
            sentence = f"No throttled answers (-412, 429) among {n_all:,}; {adaptive_words}."
        else:
            severity = severity_at_least(share, self.warn_share, self.fail_share)
            blocked = (
                f"; {self.blocked_412:,} single-path videos got -412 stored as their status"
                if self.blocked_412
                else ""
            )
            held = f", {held_storm:,} requests held back by its limits" if held_storm else ""
            peak_words = (
                f"peaked at {100 * peak[0]:.0f} % of answers ({duration(self.bin_ms)} window "
                f"from {local(peak[1] * self.bin_ms, self.tz)})"
                if peak is not None
                else f"had no peak to show (no {duration(self.bin_ms)} window held "
                f"{self.peak_min_answers:,} answers)"
            )
            sentence = (
                f"Throttled answers (-412, 429) {peak_words}; "
                f"{adaptive_words}; "
                f"throttled {where}: {_pct(bad_storm, n_storm)} of {n_storm:,} answers{held} "
                f"({_pct(bad_all, n_all)} of answers over the run){blocked}."
            )
        if retry_words:
            sentence += " " + retry_words
        return Finding(
            id=self.ID,
            title="Throttle responses",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "bilibili answers a proxy beyond its tolerance with -412 (risk control) or 429. "
                "With [upstream.adaptive] on, every answer enters a sliding window; when the "
                "throttled share exceeds the threshold the crawler multiplies its own rate "
                "limits by a falling factor (at most once per window), and raises it step by "
                "step while the share stays below a lower threshold (seed 003 §6.3: fall back "
                "on the rate at once, do not push through). With [scheduler.retry] by_class, a "
                "429 waits longer than other errors and as long as its Retry-After says; a "
                "plain 4xx is never retried (seed 004)."
            ),
            numbers={
                "answers": n_all,
                "throttled": bad_all,
                "throttled_share": round(bad_all / n_all, 4) if n_all else 0.0,
                "storm_answers": n_storm,
                "storm_throttled_share": round(share, 4),
                "storm_held_back": held_storm,
                "held_back": held_all,
                "peak_share": 0.0 if peak is None else round(peak[0], 4),
                "blocked_412": self.blocked_412,
                **adaptive_numbers,
                **retry_numbers,
            },
            examples=tuple(
                {
                    "at": local(t, self.tz),
                    "factor": f / 1000,
                    "share": s / 1000,
                    "reason": str(U.RATE_CHANGE.word(r)),
                }
                for t, f, s, r in self.changes[:5]
            ),
            thresholds={
                "warn_share": self.warn_share,
                "fail_share": self.fail_share,
                "peak_window_s": self.bin_ms / 1000,
                "peak_min_answers": self.peak_min_answers,
            },
            score=Score(share, self.warn_share, self.fail_share),
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
