"""Finding ``staleness``: did every available song get a snapshot at least every interval bound?

The design snapshots every song at a regular interval chosen from its growth, 6 h to 72 h at the
longest (seed 000 "normal类型": 播放量增速 = 0 → 72小时; reference §11.6), so no song should go
longer than 72 h (plus a slack for the dispatch cadence and tick delays) without a snapshot. A
video that is deleted, hidden or under review answers with a code instead of views (reference
§9, §16.12): nothing can snapshot it, so its gaps are counted apart, by the code, not as stale
(``sim.world.availability``: -404 deleted, 62002 hidden, 62004 under review). The gaps are those
of invariant ``stale_songs`` (:class:`~sim.metrics.invariants.gaps.SongGaps`), read from its
monitor when the bound is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.cvsa.vocabulary import VideoUnavailable
from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.findings.verdicts import (
    EXAMPLES,
    Finding,
    Severity,
    duration,
    finding_metrics,
    local,
)
from sim.metrics.invariants.gaps import Gap, SongGaps
from sim.metrics.invariants.songs import StaleSongs
from sim.metrics.invariants.truth import RunTruth
from sim.units import Ms

CODE_WORDS = {int(c): c.word for c in VideoUnavailable}
"""bilibili's codes for an unavailable video (:class:`sim.cvsa.vocabulary.VideoUnavailable`)."""
_TYPES = K.SNAPSHOT_TYPE.words


def _hours(ms: float) -> str:
    return f"{ms / 3_600_000:.1f}".removesuffix(".0") + "h"


def _word(code: int) -> str:
    return CODE_WORDS.get(code, f"code_{code}")


class Staleness:
    """Reducer of finding ``staleness`` (keyword arguments: ``[findings.staleness]``;
    ``monitor``: the run's invariant ``stale_songs``, fed the same log in the same group)."""

    ID = "staleness"

    def __init__(
        self,
        truth: RunTruth,
        tz_offset_ms: Ms,
        *,
        max_interval: Ms,
        slack: Ms,
        fail_stale_songs: int,
        monitor: StaleSongs | None = None,
    ) -> None:
        self.tz = tz_offset_ms
        self.max_interval, self.slack, self.fail_stale = max_interval, slack, fail_stale_songs
        # The invariant ``stale_songs`` follows every song's gaps already: with the same bound,
        # its gaps are read, not kept twice (at 20M videos, six arrays of the 2M songs: 96 MB).
        # It is fed the same log in the same group, so it has seen every chunk by the finding.
        bound = max_interval + slack
        self._shared = monitor is not None and monitor.gaps.bound == bound
        self.gaps = (
            monitor.gaps
            if monitor is not None and self._shared
            else SongGaps(truth.songs, bound, truth.unavailable, keep_worst=EXAMPLES)
        )

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        if not self._shared:
            self.gaps.feed(chunk)

    def finding(self) -> Finding:
        g = self.gaps
        now = g.now if g.now is not None else 0
        avail_open, excused_open = g.open_gaps()
        stale_at = g.stale.copy()
        stale_at[avail_open] = True
        stale = g.aid[stale_at]
        excused = dict(g.excused_songs)
        excused.update(
            zip(g.aid[excused_open].tolist(), g.code_of(excused_open).tolist(), strict=True)
        )
        aids = np.fromiter(excused, np.int64, len(excused))
        for aid in aids[np.isin(aids, stale)].tolist():  # stale while available: a problem,
            del excused[aid]  # whatever came after
        by_code: dict[str, int] = {}
        for code in sorted(excused.values()):
            by_code[_word(code)] = by_code.get(_word(code), 0) + 1
        longest = max(g.max_gap, g.longest_open())
        opened: list[Gap] = [
            (now - int(g.last[p]), now, int(g.aid[p]), int(g.last[p]), -1)
            for p in avail_open.tolist()
        ]
        worst = sorted(g.worst + opened, key=lambda w: (-w[0], w[1], w[2]))[:EXAMPLES]
        bound = _hours(g.bound)
        excused_text = ""
        if excused:
            codes = ", ".join(
                f"{w.replace('_', ' ')} {c}: {by_code[_word(c)]}"
                for c, w in sorted(CODE_WORDS.items())
                if w in by_code
            )
            others = ", ".join(f"{w}: {n}" for w, n in by_code.items() if w.startswith("code_"))
            one = len(excused) == 1
            excused_text = (
                f"; {len(excused):,} song{'' if one else 's'} went longer while deleted, hidden "
                f"or under review and {'is' if one else 'are'} not counted "
                f"({', '.join(x for x in (codes, others) if x)})"
            )
        songs = int(g.aid.size)
        if stale.size:
            severity = Severity.FAIL if stale.size >= self.fail_stale else Severity.WARN
            sentence = (
                f"{stale.size:,} of {songs:,} songs went longer than {bound} without a snapshot "
                f"while available (longest {_hours(longest)}; "
                f"{g.over + avail_open.size:,} gaps){excused_text}."
            )
        else:
            severity = Severity.OK
            sentence = (
                f"No available song went longer than {bound} without a snapshot (longest "
                f"{_hours(longest)}, {songs:,} songs){excused_text}."
            )
        numbers: dict[str, Any] = {
            "songs": songs,
            "stale_songs": int(stale.size),
            "stale_gaps": g.over + int(avail_open.size),
            "longest_gap_h": round(longest / 3_600_000, 3),
            "unavailable_songs": len(excused),
        }
        for word in CODE_WORDS.values():
            numbers[f"unavailable.{word}"] = by_code.get(word, 0)
        return Finding(
            id=self.ID,
            title="Staleness",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "The regular dispatcher and the bulk worker's reschedule give every song a "
                "normal row at its interval, 6 h to 72 h by its growth over the last day (seed "
                "000 normal; reference §10.3, §11.6, §11.7), so a song waits at most 72 h plus "
                "the dispatch and tick delays. A deleted, hidden or under-review video answers "
                "with a code, not views, and CVSA stops following it (reference §9, §16.12): "
                "its gaps are counted apart."
            ),
            numbers=numbers,
            examples=tuple(
                {
                    "aid": aid,
                    "from": local(frm, self.tz),
                    "to": local(to, self.tz),
                    "gap": duration(gap),
                    "open": ty < 0,
                    "ended_by": _TYPES[ty] if ty >= 0 else None,
                }
                for gap, to, aid, frm, ty in worst
            ),
            plots=("lateness.png",),
            thresholds={
                "max_interval_h": self.max_interval / 3_600_000,
                "slack_h": self.slack / 3_600_000,
                "fail_stale_songs": self.fail_stale,
            },
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
