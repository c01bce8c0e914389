"""``adjustSnapshotTime``: load levelling over 5-minute windows, as a state machine of effects.

Rules of this module (style-anchors R2):

* The search (:class:`AdjustSearch`, made by :func:`adjust_snapshot_time`) never touches a
  counter itself. It asks for :class:`Reserve` effects ("probe these windows in order with
  HINCRBY +1, undo each that goes over the cap, stop at the first that fits") and is answered
  with a :class:`Reserved` reply, h11-style: ``start()`` gives the first effect, ``reply()``
  answers it and gives the next effect or the result. The deployed code makes one Redis round
  trip per HINCRBY; a backend may run the same probes as a client-side loop (the faithful mode),
  as one Lua script, or -- in memory -- over an index, and the outcome is identical.
  :func:`reserve_in` is the reference implementation of a reply; the scheduler's driver is
  :func:`sim.scheduler.schedule_snapshot.drive_adjust`, the pure one :func:`run_against`.
* The result is an :class:`Adjusted` record: the due time, the window holding the reservation
  (or None) and how many windows it probed (a full window costs two HINCRBYs, the one that
  fits one).
* Randomness comes from the ``rng`` argument: one ``rng.random()`` per jittered result, none
  otherwise.

Windows are identified by their start in epoch ms (a multiple of ``Params.window_ms``); the Redis
field is its ISO form (:func:`window_key_iso`, reference §2.8).
"""

from __future__ import annotations

import math
import random
from collections.abc import MutableMapping
from typing import Literal, NamedTuple, Protocol

from sim.cvsa.params import Params
from sim.cvsa.profile import Switches
from sim.ports import Reserved, new_record
from sim.units import WINDOW_MS, Ms, format_instant_ms, parse_instant_ms


class Incr(NamedTuple):
    """Effect: ``HINCRBY cvsa:snapshot_window_counts <window> <delta>``; send back the new count."""

    window_ms: Ms
    delta: int


class Reserve(NamedTuple):
    """Effect: probe windows ``first_ms + i * step_ms`` for i = 0 ... ``count`` - 1, each with
    HINCRBY +1; keep the +1 on the first whose new count is <= ``cap`` (a negative count is room)
    and stop; undo (HINCRBY -1) every window that went over. Reply with :class:`Reserved`."""

    first_ms: Ms
    step_ms: Ms
    # Shadows tuple.count, which nothing calls on an effect; the name is the ports' and the
    # adapters' (a NamedTuple, not a frozen dataclass, which is slower to build, and one is
    # built for every window search).
    count: int  # type: ignore[assignment]
    cap: int


Outcome = Literal["forward", "fallback", "exhausted"]
"""Which phase placed the row: the forward search, the backward fallback, or neither."""


class Adjusted(NamedTuple):
    """The result of one ``adjustSnapshotTime`` call."""

    time_ms: Ms
    """The due time to insert (``started_at``)."""
    reserved_window_ms: Ms | None
    """The window that keeps the +1; None when every probed window was full."""
    probes: int
    """Windows probed (each costs HINCRBY +1, and -1 when it was full)."""
    outcome: Outcome
    """``forward``, ``fallback`` (log it: the forward search found nothing) or ``exhausted``
    (nothing reserved; the row is inserted at the target over the cap)."""


class CountHash(Protocol):
    """What :func:`reserve_in` needs of a hash: a dict, or the memory counter's table."""

    def get(self, window_ms: Ms, /) -> int | None:
        """HGET: the field's count, None when there is no field."""
        ...

    def __setitem__(self, window_ms: Ms, value: int, /) -> None:
        """HSET."""
        ...


def adjust_snapshot_time(
    expected_ms: Ms,
    now_ms: Ms,
    *,
    cap: int,
    forward_windows: int,
    backward_windows: int,
    bare_fallback: bool,
    window_ms: Ms,
    rng: random.Random,
) -> AdjustSearch:
    """Reserve a slot in the first window with room and pick a time in it (reference §6.2, §19).

    Forward search: for i = 0 … ``forward_windows`` − 1, probe window w = w0 + i·W (w0 is the
    window of ``expected_ms``, W = ``window_ms``): HINCRBY +1; if the new count is <= ``cap`` (a
    negative count is room too) keep the reservation and return w + floor(r × W) ms, or ``now``
    if that is in the past — the reservation stays on w even then, and the result may be earlier
    than ``expected_ms`` anywhere inside w (§19.1, §19.2). Otherwise undo with HINCRBY −1.

    Fallback, only if every forward window was full: probe w0, w0 − W, … (``backward_windows``
    windows, offset 0 included). Deployed (``bare_fallback``): return the bare window start, no
    jitter, even in the past (§6.2 step 3, §19.4). Design (seed 000, "同上逻辑"): the same jitter
    and not-before-now as the forward search.

    If nothing has room, return ``expected_ms`` unchanged with nothing reserved; the counter is
    back to its original values (fields probed for the first time are left at 0, as in Redis,
    §19.3).

    Args:
        expected_ms: the target time.
        now_ms: the caller's clock.
        cap: rows per window (``Params.window_cap``).
        forward_windows: ``Params.forward_search_windows`` (4032 = 14 days).
        backward_windows: ``Params.backward_search_windows`` (6: offsets 0, −1 … −5).
        bare_fallback: switch ``fallback_bare_window_start``.
        window_ms: the window length (``Params.window_ms``, 5 min).
        rng: the jitter stream (``Math.random()``).

    Returns:
        the search: at most two :class:`Reserve` effects (forward, then the fallback), then its
        :class:`Adjusted` result.
    """
    return AdjustSearch(
        expected_ms,
        now_ms,
        cap=cap,
        forward_windows=forward_windows,
        backward_windows=backward_windows,
        bare_fallback=bare_fallback,
        window_ms=window_ms,
        rng=rng,
    )


def adjust_with(
    switches: Switches, params: Params, expected_ms: Ms, now_ms: Ms, rng: random.Random
) -> AdjustSearch:
    """:func:`adjust_snapshot_time` with a run's window numbers and fallback switch (§6.2)."""
    return AdjustSearch(
        expected_ms,
        now_ms,
        cap=params.window_cap,
        forward_windows=params.forward_search_windows,
        backward_windows=params.backward_search_windows,
        bare_fallback=switches.fallback_bare_window_start,
        window_ms=params.window_ms,
        rng=rng,
    )


class AdjustSearch:
    """One ``adjustSnapshotTime`` call (:func:`adjust_snapshot_time` states the rule).

    ``start()`` returns the first :class:`Reserve` (or the :class:`Adjusted` result when no
    window is to be probed); ``reply(reserved)`` answers the last one and returns the next
    effect or the result. A class rather than a generator: a generator's return raises
    ``StopIteration``, and the scheduler makes one search per normal and archive row.
    """

    def __init__(
        self,
        expected_ms: Ms,
        now_ms: Ms,
        *,
        cap: int,
        forward_windows: int,
        backward_windows: int,
        bare_fallback: bool,
        window_ms: Ms,
        rng: random.Random,
    ) -> None:
        self.expected_ms = expected_ms
        self.now_ms = now_ms
        self.cap = cap
        self.forward_windows = forward_windows
        self.backward_windows = backward_windows
        self.bare_fallback = bare_fallback
        self.window_ms = window_ms
        self.rng = rng
        self.w0 = expected_ms - expected_ms % window_ms
        self.probes = 0
        self.phase = 0
        """0: not started; 1: waiting for the forward search's reply; 2: for the fallback's;
        3: done."""

    def start(self) -> Reserve | Adjusted:
        return self._from_phase(1)

    def _from_phase(self, phase: int) -> Reserve | Adjusted:
        """The effect of the first phase from ``phase`` on that has windows to probe."""
        if phase == 1 and self.forward_windows > 0:
            self.phase = 1
            return new_record(Reserve, (self.w0, self.window_ms, self.forward_windows, self.cap))
        if phase <= 2 and self.backward_windows > 0:
            self.phase = 2
            return new_record(Reserve, (self.w0, -self.window_ms, self.backward_windows, self.cap))
        self.phase = 3
        return new_record(Adjusted, (self.expected_ms, None, self.probes, "exhausted"))

    def reply(self, got: Reserved) -> Reserve | Adjusted:
        self.probes += got.probed
        w = got.window_ms
        if w is None:
            return self._from_phase(self.phase + 1)
        forward = self.phase == 1
        outcome: Outcome = "forward" if forward else "fallback"
        if not forward and self.bare_fallback:
            return new_record(Adjusted, (w, w, self.probes, outcome))
        t = w + math.floor(self.rng.random() * self.window_ms)
        return new_record(Adjusted, (max(t, self.now_ms), w, self.probes, outcome))


def reserve_in(counter: CountHash, effect: Reserve) -> Reserved:
    """Carry out a :class:`Reserve` on a plain mapping with HINCRBY semantics, probe by probe.

    A window absent from ``counter`` counts as 0 and is left present (possibly at 0) afterwards,
    as Redis leaves zero-valued hash fields (reference §19.3). A full window's +1 and its undo
    leave it as it was, so only its count is read: the start-up archive dispatch probes a hundred
    full windows per song.
    """
    get, cap, w, step = counter.get, effect.cap, effect.first_ms, effect.step_ms
    for i in range(effect.count):
        value = get(w)
        if value is None:
            if cap > 0:
                counter[w] = 1
                return new_record(Reserved, (w, 1, i + 1))
            counter[w] = 0  # the +1 and its undo leave the probed field at 0
        elif value < cap:
            counter[w] = value + 1
            return new_record(Reserved, (w, value + 1, i + 1))
        w += step
    return new_record(Reserved, (None, -1, effect.count))


def run_against(search: AdjustSearch, counter: MutableMapping[Ms, int]) -> Adjusted:
    """Drive a search against a plain mapping with :func:`reserve_in` (the reference replies);
    the scheduler's driver does the same against the window-counter port."""
    step = search.start()
    while isinstance(step, Reserve):
        step = search.reply(reserve_in(counter, step))
    return step


def window_key_iso(window_ms: Ms) -> str:
    """The Redis hash field of a window: its start as ISO UTC, e.g. ``2026-01-09T07:35:00.000Z``.

    Reference §2.8, §6.1 (``started_at_5min_utc``). ``window_ms`` must be a window start.
    """
    if window_ms % WINDOW_MS:
        raise ValueError(f"not the start of a 5-minute window (got {window_ms})")
    return format_instant_ms(window_ms)


def window_from_key(key: str) -> Ms:
    """The window start named by a Redis field written by :func:`window_key_iso` (§2.8)."""
    return parse_instant_ms(key)
