"""Finding ``executed_load``: did the snapshots executed per window stay under the cap, and the
requests per proxy under the rate limits?

The cap (seed 000 "每个5分钟时间窗口内不超过1000个快照"; reference §6.2, switch ``window_cap``)
bounds a *counter*, not the load: milestone and new rows add to it without a cap check (§5 step
4), a capped row whose offset fell before now executes at once, in another window than the one
it counted in (§6.2 step 2), and rows dispatched late pile into the window they run in. So the
executed load per window can exceed the cap. Upstream, each proxy has a provider limit and the
bulk task a limit of its own (§14.2); their 300 s tiers, per window, are given to the reducer.

State is bounded: per window, the snapshots executed by type, and the requests per proxy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.findings.verdicts import (
    EXAMPLES,
    Finding,
    Severity,
    finding_metrics,
    local,
    severity_at_least,
)
from sim.units import Ms

_TYPES = K.SNAPSHOT_TYPE.words
_UNCAPPED = [K.SNAPSHOT_TYPE.code(w) for w in ("milestone", "new")]
_CARRIED = len(_TYPES)
"""Column of the rows (capped types) executed in a later window than the one they were due in."""
_BULK = K.UPSTREAM_CALL.code("bulk")
_NO_PROXY = K.PROXY_OUTCOME.code("no_proxy")


def _add(into: dict[int, np.ndarray], width: int, rows: np.ndarray, cols: np.ndarray) -> None:
    """``into[row][col] += 1`` for each (row, col) pair (few distinct rows per chunk)."""
    pairs, counts = np.unique(rows * width + cols, return_counts=True)
    for key, n in zip(pairs.tolist(), counts.tolist(), strict=True):
        r, c = divmod(key, width)
        into.setdefault(r, np.zeros(width, np.int64))[c] += n


def _windows(n: int) -> str:
    return f"{n:,} window" + ("" if n == 1 else "s")


class ExecutedLoad:
    """Reducer of finding ``executed_load`` (keyword arguments: ``[findings.executed_load]``).

    ``request_limits``: proxy name -> requests it may send per window (its provider limit);
    ``bulk_request_limits``: proxy name -> bulk requests per window (the bulk task limit)."""

    ID = "executed_load"

    def __init__(
        self,
        tz_offset_ms: Ms,
        window_ms: Ms,
        window_cap: int,
        request_limits: Mapping[str, int],
        bulk_request_limits: Mapping[str, int],
        *,
        warn_over_cap_share: float,
        fail_over_cap_share: float,
    ) -> None:
        self.tz_offset_ms = tz_offset_ms
        self.window_ms = window_ms
        self.cap = window_cap
        self.request_limits = dict(request_limits)
        self.bulk_request_limits = dict(bulk_request_limits)
        self.warn_share = warn_over_cap_share
        self.fail_share = fail_over_cap_share
        self.load: dict[int, np.ndarray] = {}  # window index -> executed by type, + carried
        self.requests: dict[int, np.ndarray] = {}  # window index -> [proxy * 2 + is_bulk]
        self.width = 0  # columns of self.requests (2 per name of the log)
        self.no_proxy = 0
        self.names: list[str] = []

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.names = list(names)
        taken = chunk.table(K.SnapshotTaken)
        taken = taken[taken[:, 4] >= 0] if taken.size else taken  # scheduled snapshots only
        if taken.size:
            t, types, due = taken[:, 1], taken[:, 4], taken[:, 5]
            w = t // self.window_ms
            carried = ~np.isin(types, _UNCAPPED) & (due // self.window_ms < w)
            _add(self.load, _CARRIED + 1, w, types)
            if carried.any():
                _add(self.load, _CARRIED + 1, w[carried], np.full(int(carried.sum()), _CARRIED))
        req = chunk.table(K.UpstreamRequest)
        if req.size:
            self.no_proxy += int((req[:, 6] == _NO_PROXY).sum())
            req = req[req[:, 2] >= 0]
        if req.size:
            width = 2 * max(len(names), int(req[:, 2].max()) + 1)
            if width > self.width:  # the name table grew: widen every row
                grow = width - self.width
                self.requests = {
                    k: np.append(v, np.zeros(grow, np.int64)) for k, v in self.requests.items()
                }
                self.width = width
            # The limiter admits a request when it is sent: its start, not its answer (§14.3).
            start = req[:, 1] - req[:, 5]
            _add(
                self.requests,
                self.width,
                start // self.window_ms,
                req[:, 2] * 2 + (req[:, 3] == _BULK),
            )

    def _proxies(self) -> tuple[dict[str, Any], list[str], list[str]]:
        """Per proxy: peak requests in one window against its limit (numbers; each proxy's peak
        as text; the limits exceeded as text)."""
        numbers: dict[str, Any] = {}
        peaks: list[str] = []
        over: list[str] = []
        if not self.requests:
            return numbers, peaks, over
        table = np.stack(list(self.requests.values()))
        wins = np.array(list(self.requests), np.int64)
        for i, name in enumerate(self.names):
            if 2 * i + 1 >= table.shape[1] or not table[:, 2 * i : 2 * i + 2].any():
                continue
            bulk = table[:, 2 * i + 1]
            for label, counts, limit in (
                (name, table[:, 2 * i] + bulk, self.request_limits.get(name)),
                (f"{name} bulk", bulk, self.bulk_request_limits.get(name)),
            ):
                key, peak = label.replace(" ", "."), int(counts.max())
                if limit is None and not peak:
                    continue
                numbers[f"requests.{key}.peak"] = peak
                if limit is None:
                    continue
                n_over = int((counts > limit).sum())
                numbers[f"requests.{key}.limit"] = limit
                numbers[f"requests.{key}.windows_over"] = n_over
                peaks.append(f"{label} {peak:,}/{limit:,}")
                if n_over:
                    at = int(wins[int(np.argmax(counts))]) * self.window_ms
                    over.append(
                        f"{label} sent {peak:,} requests in the window of "
                        f"{local(at, self.tz_offset_ms)} (limit {limit:,}; {_windows(n_over)} over)"
                    )
        return numbers, peaks, over

    def _load(self) -> tuple[Severity, dict[str, Any], str, list[dict[str, Any]]]:
        """Snapshots per window against the cap: severity, numbers, text, worst windows."""
        cap, tz = self.cap, self.tz_offset_ms
        wins = np.array(sorted(self.load), np.int64)
        table = np.stack([self.load[w] for w in wins.tolist()]) if self.load else None
        if table is None:
            return Severity.OK, {"peak_per_window": 0}, "No scheduled snapshot was executed", []
        executed = table[:, :_CARRIED].sum(axis=1)
        hot = executed > cap
        peak_i = int(np.argmax(executed))
        peak = int(executed[peak_i])
        share = max(peak - cap, 0) / cap if cap else 0.0
        # The excess of each window over the cap, explained first by the rows the cap does not
        # hold (milestone, new), then by rows run after their own window; the rest are rows of
        # the window itself the counter let in (a row that leaves pending frees its slot, §6.4).
        excess = np.where(hot, executed - cap, 0)
        by_uncapped = np.minimum(table[:, _UNCAPPED].sum(axis=1), excess)
        by_carried = np.minimum(table[:, _CARRIED], excess - by_uncapped)
        total = int(excess.sum())
        shares = [int(x.sum()) / total if total else 0.0 for x in (by_uncapped, by_carried)]
        numbers = {
            "peak_per_window": peak,
            "windows": int(executed.size),
            "windows_over_cap": int(hot.sum()),
            "max_over_cap": max(peak - cap, 0),
            "max_over_cap_share": round(share, 6),
            "over_cap_total": total,
            "over_cap_uncapped_share": round(shares[0], 6),
            "over_cap_carried_share": round(shares[1], 6),
        }
        when = local(int(wins[peak_i]) * self.window_ms, tz)
        if not hot.any():
            text = f"Every window executed at most the cap of {cap:,} snapshots (the most {peak:,}"
            return Severity.OK, numbers, text + f", {when})", []
        causes = [
            f"{part:.0%} {label}"
            for part, label in zip(
                (*shares, 1 - sum(shares)),
                (
                    "milestone and new rows (which the cap does not hold)",
                    "rows run after their own window",
                    "rows the counter let in after others left pending",
                ),
                strict=True,
            )
            if round(part * 100) > 0
        ]
        causes[0] = causes[0].replace("% ", "% were ", 1)
        text = (
            f"{_windows(int(hot.sum()))} executed more snapshots than the cap of {cap:,}, the most "
            f"{peak:,} ({share:.0%} over, {when}); of the {total:,} snapshots over the cap, "
            + ", ".join(causes)
        )
        order = np.lexsort((wins, -executed))[:EXAMPLES]
        examples = [
            {
                "window": local(int(wins[i]) * self.window_ms, tz),
                "executed": int(executed[i]),
                "over_cap": int(excess[i]),
                **{_TYPES[c]: int(table[i, c]) for c in range(_CARRIED) if table[i, c]},
                "run_after_their_window": int(table[i, _CARRIED]),
            }
            for i in order.tolist()
            if hot[i]
        ]
        return severity_at_least(share, self.warn_share, self.fail_share), numbers, text, examples

    def finding(self) -> Finding:
        severity, numbers, text, examples = self._load()
        proxy_numbers, peaks, proxy_over = self._proxies()
        if proxy_over:
            severity = Severity.FAIL
            text += "; over the rate limits: " + "; ".join(proxy_over)
        elif peaks:
            text += "; peak requests per window within every limit (" + ", ".join(peaks) + ")"
        if self.no_proxy:
            text += f"; {self.no_proxy:,} requests found every proxy rate-limited"
        return Finding(
            id=self.ID,
            title="Executed load against the cap",
            severity=severity,
            sentence=text + ".",
            mechanism=(
                "The cap of adjustSnapshotTime bounds the window counter of pending rows "
                "(reference §6.2, §6.4), not the snapshots executed: milestone and new rows are "
                "counted without a cap check (§5 step 4), a row that leaves pending frees its "
                "slot for another, a row whose offset fell before now runs at once in another "
                "window, and rows dispatched late run in the window they reach the tick. The "
                "upstream budget is the rate limiters': per proxy 2000 requests and for the bulk "
                "task 200 per 300 s (§14.2, §14.5)."
            ),
            numbers={**numbers, "no_proxy_requests": self.no_proxy, **proxy_numbers},
            examples=tuple(examples),
            plots=("load.png", "proxies.png", "occupancy.png"),
            thresholds={
                "window_cap": self.cap,
                "warn_over_cap_share": self.warn_share,
                "fail_over_cap_share": self.fail_share,
                **{f"request_limit.{k}": v for k, v in sorted(self.request_limits.items())},
                **{
                    f"bulk_request_limit.{k}": v
                    for k, v in sorted(self.bulk_request_limits.items())
                },
            },
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
