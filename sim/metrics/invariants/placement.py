"""Invariants 1 and 2: capped windows stay within the cap; no schedule before its creation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.invariants.common import (
    _CREATED,
    _EXACT,
    _EXHAUSTED,
    _FALLBACK,
    _FORWARD,
    _MOVED,
    _TYPES,
    _UNADJUSTED,
    _Violations,
)


class WindowCapInvariant:
    """``invariants.window_cap.*``: capped reservations stay within ``cap`` (module docstring)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.v = _Violations("window_cap", counts_checked=True)
        self.over_cap_uncapped = 0
        self.exhausted = 0

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        c, cap = _CREATED, self.cap
        created = chunk.table(K.ScheduleCreated)
        if created.size:
            placement, count = created[:, c["placement"]], created[:, c["window_count"]]
            capped = (placement == _FORWARD) | (placement == _FALLBACK)
            self.v.checked += int(np.count_nonzero(capped))
            bad = np.flatnonzero(capped & (count > cap))
            for i in bad[: self.v.room].tolist():
                row = created[i].tolist()
                self.v.examples.append(
                    {
                        "schedule": row[c["schedule"]],
                        "aid": row[c["aid"]],
                        "type": _TYPES[row[c["type"]]],
                        "t_ms": row[c["t_ms"]],
                        "window_ms": row[c["window_ms"]],
                        "window_count": row[c["window_count"]],
                        "placement": K.PLACEMENT.word(row[c["placement"]]),
                    }
                )
            self.v.count += int(bad.size)
            uncapped = (placement == _EXACT) | (placement == _UNADJUSTED)
            self.over_cap_uncapped += int(np.count_nonzero(uncapped & (count > cap)))
            self.exhausted += int(np.count_nonzero(placement == _EXHAUSTED))
        moved = chunk.column(K.ScheduleMoved, "window_count")
        self.over_cap_uncapped += int(np.count_nonzero(moved > cap))

    def result(self) -> dict[str, Any]:
        return {
            **self.v.result(),
            "invariants.window_cap.cap": self.cap,
            "invariants.window_cap.over_cap_uncapped": self.over_cap_uncapped,
            "invariants.window_cap.exhausted": self.exhausted,
        }


# -- 3. no_schedule_before_creation -------------------------------------------------------------


class NoScheduleBeforeCreation:
    """``invariants.no_schedule_before_creation.*``: no due time before the creation instant
    except the deployed bare fallback (module docstring). ``bare_fallback`` is the run's switch
    ``fallback_bare_window_start``."""

    def __init__(self, bare_fallback: bool) -> None:
        self.bare_fallback = bare_fallback
        self.v = _Violations("no_schedule_before_creation", counts_checked=True)
        self.allowed = 0
        self.clamped = 0

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        c, m = _CREATED, _MOVED
        created = chunk.table(K.ScheduleCreated)
        moved = chunk.table(K.ScheduleMoved)
        bad_created = np.empty(0, dtype=np.int64)
        bad_moved = np.empty(0, dtype=np.int64)
        self.v.checked += created.shape[0] + moved.shape[0]
        if created.size:
            t, due = created[:, c["t_ms"]], created[:, c["due_ms"]]
            window, placement = created[:, c["window_ms"]], created[:, c["placement"]]
            fallback = placement == _FALLBACK
            bare = fallback & self.bare_fallback
            jittered = (placement == _FORWARD) | (fallback & ~bare)
            past = due < t
            allowed = past & bare & (due == window)
            self.allowed += int(np.count_nonzero(allowed))
            self.clamped += int(np.count_nonzero(jittered & (due == t) & (window < t)))
            bad_created = np.flatnonzero(past & ~allowed)
        if moved.size:
            bad_moved = np.flatnonzero(moved[:, m["to_ms"]] < moved[:, m["t_ms"]])
        if not (bad_created.size or bad_moved.size):
            return
        # Examples in log order across both kinds.
        found: list[tuple[int, dict[str, Any]]] = []
        for i in bad_created.tolist():
            row = created[i].tolist()
            found.append(
                (
                    row[0],
                    {
                        "event": "created",
                        "schedule": row[c["schedule"]],
                        "aid": row[c["aid"]],
                        "type": _TYPES[row[c["type"]]],
                        "t_ms": row[c["t_ms"]],
                        "requested_ms": row[c["requested_ms"]],
                        "due_ms": row[c["due_ms"]],
                        "window_ms": row[c["window_ms"]],
                        "placement": K.PLACEMENT.word(row[c["placement"]]),
                    },
                )
            )
        for i in bad_moved.tolist():
            row = moved[i].tolist()
            found.append(
                (
                    row[0],
                    {
                        "event": "moved",
                        "schedule": row[m["schedule"]],
                        "aid": row[m["aid"]],
                        "type": "milestone",
                        "t_ms": row[m["t_ms"]],
                        "from_ms": row[m["from_ms"]],
                        "due_ms": row[m["to_ms"]],
                    },
                )
            )
        found.sort(key=lambda f: f[0])
        for _, example in found:
            self.v.add(example)

    def result(self) -> dict[str, Any]:
        return {
            **self.v.result(),
            "invariants.no_schedule_before_creation.allowed": self.allowed,
            "invariants.no_schedule_before_creation.clamped_to_now": self.clamped,
        }


# -- 2, 4, 5. one_active_per_type, single_path_processing, lost_schedules -----------------------

# The live rows are one dict keyed by (aid, type) -- every lifecycle event names both -- holding
# each row as one int, ``schedule << 5 | flags`` (a list in the rare case of several rows): about
# a hundred bytes per live row, the cost of one small dict entry.
