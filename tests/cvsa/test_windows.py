"""adjustSnapshotTime as a state machine of effects (reference §6.2, §19.1-§19.4)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cvsa.params import CVSA_2026_PARAMS, DESIGN_PARAMS
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.cvsa.windows import (
    Adjusted,
    AdjustSearch,
    Reserve,
    Reserved,
    adjust_snapshot_time,
    adjust_with,
    reserve_in,
    run_against,
    window_from_key,
    window_key_iso,
)
from sim.units import HOUR_MS, WINDOW_MS, parse_instant_ms

W0 = 1_924_992_000_000  # a window start (2031-01-01T00:00:00Z)
W = WINDOW_MS


class Draws(random.Random):
    """A stream that returns the given values, then fails: pins how many draws a call makes."""

    def __init__(self, *values: float) -> None:
        super().__init__(0)
        self.values = list(values)

    def random(self) -> float:
        if not self.values:
            raise AssertionError("drew more random numbers than expected")
        return self.values.pop(0)


def deployed(
    expected: int, now: int, rng: random.Random, *, cap: int = 3000, fwd: int = 4032
) -> AdjustSearch:
    return adjust_snapshot_time(
        expected,
        now,
        cap=cap,
        forward_windows=fwd,
        backward_windows=6,
        bare_fallback=True,
        window_ms=W,
        rng=rng,
    )


def design(
    expected: int, now: int, rng: random.Random, *, cap: int = 1000, fwd: int = 4032
) -> AdjustSearch:
    return adjust_snapshot_time(
        expected,
        now,
        cap=cap,
        forward_windows=fwd,
        backward_windows=6,
        bare_fallback=False,
        window_ms=W,
        rng=rng,
    )


class Recording(dict[int, int]):
    """A counter that remembers the order in which windows were probed (read) and written."""

    def __init__(self, *args: dict[int, int]) -> None:
        super().__init__(*args)
        self.probes: list[int] = []
        self.writes: list[int] = []

    def get(self, key: int, default: int | None = None) -> int | None:  # type: ignore[override]
        self.probes.append(key)
        return super().get(key, default)

    def __setitem__(self, key: int, value: int) -> None:
        self.writes.append(key)
        super().__setitem__(key, value)


def test_step_by_step_protocol() -> None:
    search = deployed(W0 + 1234, now=W0, rng=Draws(0.5), cap=1)
    assert search.start() == Reserve(W0, W, 4032, 1)  # the forward search, as one effect
    # The first window was full, the second fitted.
    assert search.reply(Reserved(W0 + W, 1, 2)) == Adjusted(W0 + W + 150_000, W0 + W, 2, "forward")


def test_a_failed_forward_search_asks_for_the_fallback() -> None:
    search = deployed(W0 + 1234, now=W0, rng=Draws(), cap=1, fwd=3)
    assert search.start() == Reserve(W0, W, 3, 1)
    assert search.reply(Reserved(None, -1, 3)) == Reserve(W0, -W, 6, 1)
    assert search.reply(Reserved(W0 - W, 1, 2)) == Adjusted(W0 - W, W0 - W, 5, "fallback")


def test_a_reserve_probes_each_window_and_keeps_only_the_first_with_room() -> None:
    counter = Recording({W0: 1, W0 + W: 2})
    got = reserve_in(counter, Reserve(W0, W, 5, 1))
    assert got == Reserved(W0 + 2 * W, 1, 3)  # three probes: two full windows, then room
    assert counter.probes == [W0, W0 + W, W0 + 2 * W]
    assert counter.writes == [W0 + 2 * W]  # a full window's +1 and undo leave it as it was
    assert counter == {W0: 1, W0 + W: 2, W0 + 2 * W: 1}
    assert reserve_in(counter, Reserve(W0, -W, 2, 0)) == Reserved(None, -1, 2)
    assert counter[W0 - W] == 0  # a probed absent field is left at 0 (§19.3)


def test_free_window_jitter_is_whole_milliseconds() -> None:
    counter: dict[int, int] = {}
    r = 0.123456789
    result = run_against(deployed(W0 + 200_000, now=W0, rng=Draws(r)), counter)
    assert result == Adjusted(W0 + 37_037, W0, 1, "forward")  # floor(r * 300000) = 37037
    assert counter == {W0: 1}
    # The time may be earlier than the target, anywhere inside the target's window (§19.2).
    assert result.time_ms < W0 + 200_000


def test_overdue_target_returns_now_but_keeps_the_past_reservation() -> None:
    now = W0 + 3 * HOUR_MS + 42
    counter: dict[int, int] = {}
    result = run_against(deployed(W0 + 10, now=now, rng=Draws(0.999)), counter)
    assert result == Adjusted(now, W0, 1, "forward")
    assert counter == {W0: 1}  # not the window that contains now (§19.2)


def test_full_windows_are_skipped_and_restored() -> None:
    counter = {W0: 3000, W0 + W: 3001, W0 + 2 * W: 2999}
    result = run_against(deployed(W0, now=W0, rng=Draws(0.0)), counter)
    assert result == Adjusted(W0 + 2 * W, W0 + 2 * W, 3, "forward")
    assert counter == {W0: 3000, W0 + W: 3001, W0 + 2 * W: 3000}


def test_negative_count_counts_as_free() -> None:
    counter = {W0: -5}
    assert (
        run_against(deployed(W0, now=W0, rng=Draws(0.0), cap=0), counter).reserved_window_ms == W0
    )
    assert counter == {W0: -4}


def test_forward_search_probes_exactly_4032_windows_then_falls_back_bare() -> None:
    now = W0 + 7 * W
    counter = {W0 + i * W: 3000 for i in range(4032)}
    counter[W0 + 4032 * W] = 0  # free, but one past the search
    counter[W0 - 3 * W] = 10
    counter[W0 - W] = 3000
    counter[W0 - 2 * W] = 3000
    before = dict(counter)
    result = run_against(deployed(W0 + 99_999, now=now, rng=Draws()), counter)  # no draw
    # 4032 full windows, then offsets 0, -1, -2 full, then -3 reserved.
    assert result == Adjusted(W0 - 3 * W, W0 - 3 * W, 4032 + 4, "fallback")
    assert result.time_ms < now  # a bare window start, even in the past (§19.4)
    assert counter == {**before, W0 - 3 * W: 11}


def test_everything_full_leaves_the_hash_unchanged_after_4032_plus_6_windows() -> None:
    counter = Recording({W0 + i * W: 3000 for i in range(-5, 4032)})
    before = dict(counter)
    result = run_against(deployed(W0 + 1, now=W0, rng=Draws()), counter)
    assert result == Adjusted(W0 + 1, None, 4032 + 6, "exhausted")
    assert counter == before
    assert counter.probes == [W0 + i * W for i in range(4032)] + [W0 - i * W for i in range(6)]
    assert counter.writes == []  # every +1 was undone


def test_design_fallback_jitters_and_never_goes_before_now() -> None:
    counter = {W0 + i * W: 1000 for i in range(3)}
    now = W0 + 2 * W
    result = run_against(design(W0, now=now, rng=Draws(0.5), fwd=3), counter)
    assert result == Adjusted(now, W0 - W, 3 + 2, "fallback")
    counter = {W0 + i * W: 1000 for i in range(3)}
    result = run_against(design(W0, now=W0 - 2 * W, rng=Draws(0.5), fwd=3), counter)
    assert result == Adjusted(W0 - W + 150_000, W0 - W, 5, "fallback")


def test_exhausted_returns_the_target_and_reserves_nothing() -> None:
    counter: dict[int, int] = {}
    expected = W0 + 123_456
    result = run_against(
        adjust_snapshot_time(
            expected,
            W0,
            cap=0,
            forward_windows=3,
            backward_windows=2,
            bare_fallback=True,
            window_ms=W,
            rng=Draws(),
        ),
        counter,
    )
    assert result == Adjusted(expected, None, 3 + 2, "exhausted")
    # Every probed field is left at 0, as Redis leaves it (§19.3).
    assert counter == {W0: 0, W0 + W: 0, W0 + 2 * W: 0, W0 - W: 0}


def test_over_cap_window_from_uncapped_types_is_skipped() -> None:
    counter = {W0: 3001}  # milestone/new rows add +1 without a cap check (§19.12)
    assert run_against(deployed(W0, W0, Draws(0.0)), counter).reserved_window_ms == W0 + W
    assert counter == {W0: 3001, W0 + W: 1}


def test_profiles_pick_the_cap() -> None:
    profiles = ((DESIGN, DESIGN_PARAMS, 1000), (CVSA_2026, CVSA_2026_PARAMS, 3000))
    for switches, params, cap in profiles:
        counter = {W0: cap - 1}
        search = adjust_with(switches, params, W0, W0, Draws(0.0))
        assert run_against(search, counter).reserved_window_ms == W0
        counter = {W0: cap}
        search = adjust_with(switches, params, W0, W0, Draws(0.0))
        assert run_against(search, counter).reserved_window_ms == (W0 + W)


def test_window_keys() -> None:
    w = parse_instant_ms("2026-01-09T07:35:00Z")
    assert window_key_iso(w) == "2026-01-09T07:35:00.000Z"
    assert window_from_key("2026-01-09T07:35:00.000Z") == w
    with pytest.raises(ValueError, match="not the start of a 5-minute window"):
        window_key_iso(w + 1)


# --- properties -------------------------------------------------------------------------------

counters = st.dictionaries(st.integers(-8, 10), st.integers(-2, 4), max_size=19)


@settings(max_examples=400, deadline=None)
@given(
    offset=st.integers(0, W - 1),
    now_shift=st.integers(-3 * W, 12 * W),
    cap=st.integers(0, 3),
    fwd=st.integers(1, 8),
    back=st.integers(0, 6),
    bare=st.booleans(),
    counts=counters,
    seed=st.integers(0, 2**32),
)
def test_adjust_properties(
    offset: int,
    now_shift: int,
    cap: int,
    fwd: int,
    back: int,
    bare: bool,
    counts: dict[int, int],
    seed: int,
) -> None:
    expected, now = W0 + offset, W0 + now_shift
    before = {W0 + k * W: v for k, v in counts.items()}
    counter = Recording(before)
    result = run_against(
        adjust_snapshot_time(
            expected,
            now,
            cap=cap,
            forward_windows=fwd,
            backward_windows=back,
            bare_fallback=bare,
            window_ms=W,
            rng=random.Random(seed),
        ),
        counter,
    )
    assert result.probes == len(counter.probes)  # one probe = one window read
    reserved = result.reserved_window_ms

    # The counter is back where it was, except +1 on the one reserved window.
    windows = set(before) | set(counter)
    for w in windows:
        want = before.get(w, 0) + (1 if w == reserved else 0)
        assert counter.get(w, 0) == want

    if reserved is None:
        assert result.outcome == "exhausted"
        assert result.time_ms == expected
        assert result.probes == fwd + back
        return

    assert counter[reserved] <= cap  # a reservation never takes a window over the cap
    free = [w for w in windows | {reserved} if before.get(w, 0) + 1 <= cap]
    forward = [W0 + i * W for i in range(fwd)]
    if any(w in free for w in forward):
        assert result.outcome == "forward"
        assert reserved == next(w for w in forward if w in free)
    else:
        assert result.outcome == "fallback"
        backward = [W0 - i * W for i in range(back)]
        assert reserved == next(w for w in backward if w in free)

    if result.outcome == "fallback" and bare:
        assert result.time_ms == reserved  # the one way to get a time before now
    else:
        assert result.time_ms >= now
        assert result.time_ms == now or reserved <= result.time_ms < reserved + W
