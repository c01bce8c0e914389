"""The Redis window counter: safety with user data, the Lua script's fields, cancellation, and
whole runs that match the memory counter event for event.

Every test runs on fakeredis; the ``redis`` variants (marked ``services``) run the same test on
the real server when it is reachable. The contract checks are in tests/contracts/, the
equivalence properties in test_redis_properties.py.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.asyncio
import trio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sim.backends import BackendError, BackendSpec, make_counter
from sim.backends.redis import (
    MARKER_VALUE,
    RedisWindowCounter,
    measure_modes,
    redact,
    start_hint,
)
from sim.cvsa.windows import window_key_iso
from sim.ports import Reserved
from sim.runner import RunOptions, run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from sim.units import WINDOW_MS, parse_instant_ms
from tests.backends.redis_support import (
    Target,
    keys_under,
    make_target,
    opened,
    require_redis,
)
from tests.conftest import DATA

T0 = 1_924_992_000_000  # 2031-01-01T00:00:00Z
W = WINDOW_MS

TARGETS = ["fakeredis", pytest.param("redis", marks=pytest.mark.services)]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    t = make_target(request.param)
    yield t
    t.cleanup()


def hash_of(t: Target) -> dict[str, str]:
    """The hash as stored, through the plain client."""
    raw = t.sync.hgetall(f"{t.prefix}cvsa:snapshot_window_counts")
    return {k.decode(): v.decode() for k, v in raw.items()}


async def refused(counter: RedisWindowCounter) -> str:
    with pytest.raises(BackendError) as info:
        async with opened(counter):
            pytest.fail("opened a counter that should have been refused")
    message = str(info.value)
    assert "\n" not in message
    assert info.value.__suppress_context__, "no chained traceback behind the one line"
    return message


# -- safety with user data ------------------------------------------------------------------
@pytest.mark.parametrize("reservation", ["loop", "lua"])
async def test_a_foreign_hash_is_refused_and_left_alone(target: Target, reservation: str) -> None:
    key = f"{target.prefix}cvsa:snapshot_window_counts"
    target.sync.hset(key, "2026-01-09T07:35:00.000Z", 17)
    message = await refused(target.counter(reservation=reservation))
    assert message == (
        f"Redis at {target.spec}: {key} exists and was not written by sim "
        f"(no {target.prefix}sim:owner marker); refusing to touch it: use another "
        f"--key-prefix, or pass --reset to delete it"
    )
    assert hash_of(target) == {"2026-01-09T07:35:00.000Z": "17"}
    assert not target.sync.exists(f"{target.prefix}sim:owner"), "no marker written"


async def test_a_foreign_key_of_another_type_is_refused(target: Target) -> None:
    key = f"{target.prefix}cvsa:snapshot_window_counts"
    target.sync.set(f"{target.prefix}sim:owner", MARKER_VALUE)
    target.sync.rpush(key, "a", "b")
    message = await refused(target.counter())
    assert "exists and was not written by sim" in message
    assert target.sync.lrange(key, 0, -1) == [b"a", b"b"]


@pytest.mark.parametrize("kind", ["string", "list"])
async def test_a_foreign_marker_is_refused(target: Target, kind: str) -> None:
    marker = f"{target.prefix}sim:owner"
    if kind == "list":
        target.sync.rpush(marker, "somebody else's")
    else:
        target.sync.set(marker, "somebody else's")
    message = await refused(target.counter())
    assert message == (
        f"Redis at {target.spec}: {target.prefix}sim:owner exists and was not written by sim; "
        f"refusing to touch it: use another --key-prefix, or pass --reset to delete it"
    )
    if kind == "list":
        assert target.sync.lrange(marker, 0, -1) == [b"somebody else's"]
    else:
        assert target.sync.get(marker) == b"somebody else's"


async def test_windows_from_an_earlier_run_are_refused(target: Target) -> None:
    async with opened(target.counter()) as first:
        await first.incr(T0, 1)
        await first.reserve(T0 + W, W, 3, 0)  # leaves three zero-valued fields
    before = hash_of(target)
    assert len(before) == 4
    message = await refused(target.counter(reservation="lua"))
    assert message == (
        f"Redis at {target.spec}: {target.prefix}cvsa:snapshot_window_counts holds 4 windows "
        f"from an earlier run; pass --reset to start afresh"
    )
    assert hash_of(target) == before


async def test_an_earlier_run_that_left_no_windows_is_fine(target: Target) -> None:
    async with opened(target.counter()) as first:
        await first.incr(T0, 1)
        await first.clear()
    async with opened(target.counter()) as second:
        assert await second.get_all() == {}
        assert await second.incr(T0, 1) == 1


async def test_reset_deletes_the_hash_and_marker_and_nothing_else(target: Target) -> None:
    p = target.prefix
    outside = f"simtest:outside:{uuid.uuid4().hex}"
    target.extra_keys.append(outside)
    target.sync.hset(f"{p}cvsa:snapshot_window_counts", "not-a-window", 5)
    target.sync.set(f"{p}sim:owner", "somebody else's")
    target.sync.set(f"{p}cvsa:lock:1", "held")
    target.sync.set(f"{p}cvsa:lock:dispatchRegularSnapshots", T0)
    target.sync.hset(f"{p}cvsa:snapshot_window_counts:old", "f", 1)
    target.sync.set(outside, "untouched")
    async with opened(target.counter(reset=True)) as counter:
        assert await counter.get_all() == {}
        assert await counter.incr(T0, 2) == 2
    assert hash_of(target) == {window_key_iso(T0): "2"}
    assert target.sync.get(f"{p}sim:owner") == MARKER_VALUE.encode()
    assert target.sync.get(f"{p}cvsa:lock:1") == b"held", "not a lock sim takes"
    assert not target.sync.exists(f"{p}cvsa:lock:dispatchRegularSnapshots")
    assert target.sync.hgetall(f"{p}cvsa:snapshot_window_counts:old") == {b"f": b"1"}
    assert target.sync.get(outside) == b"untouched"


async def test_reset_on_an_empty_prefix_just_marks_it(target: Target) -> None:
    async with opened(target.counter(reset=True)) as counter:
        assert await counter.get_all() == {}
    assert target.sync.get(f"{target.prefix}sim:owner") == MARKER_VALUE.encode()


async def test_an_unreachable_server_is_one_line_naming_the_url_and_the_fix() -> None:
    message = await refused(RedisWindowCounter("redis://127.0.0.1:1/0"))
    assert message.startswith("Redis is not reachable at redis://127.0.0.1:1/0 (")
    # The hint starts a server where the URL points.
    assert message.endswith(
        "); start one with `redis-server --daemonize yes --port 1` "
        "or `docker run -p 1:6379 redis:7`"
    )
    assert start_hint("redis://localhost/0").endswith("`docker run -p 6379:6379 redis:7`")


async def test_a_password_never_appears_in_messages() -> None:
    assert redact("redis://user:s3cret@127.0.0.1:6379/0") == "redis://user:***@127.0.0.1:6379/0"
    assert redact("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    message = await refused(RedisWindowCounter("redis://:s3cret@127.0.0.1:1/0"))
    assert "s3cret" not in message
    assert "redis://:***@127.0.0.1:1/0" in message


def test_the_composition_root_builds_the_configured_counter() -> None:
    spec = BackendSpec(counter="fakeredis", key_prefix="p:", reservation="lua", reset=True)
    counter = make_counter(spec)
    assert isinstance(counter, RedisWindowCounter)
    assert (counter.spec, counter.reservation, counter.reset) == ("fakeredis", "lua", True)
    assert (counter.hash_key, counter.marker_key) == (
        "p:cvsa:snapshot_window_counts",
        "p:sim:owner",
    )
    assert counter.needs_asyncio
    with pytest.raises(BackendError, match="unknown Redis spec"):
        RedisWindowCounter("redis:/oops")
    with pytest.raises(ValueError, match="reservation"):
        RedisWindowCounter("fakeredis", reservation="script")  # type: ignore[arg-type]


async def test_an_error_inside_the_asyncio_block_comes_out_as_itself() -> None:
    with pytest.raises(KeyError, match="the run's own error"):
        async with opened(RedisWindowCounter("fakeredis")):
            raise KeyError("the run's own error")


@pytest.mark.parametrize("reservation", ["loop", "lua"])
async def test_reservations_probe_whole_windows_only(target: Target, reservation: str) -> None:
    async with opened(target.counter(reservation=reservation)) as counter:
        with pytest.raises(ValueError, match="whole 5-minute windows"):
            await counter.reserve(T0 + 1, W, 3, 5)
        with pytest.raises(ValueError, match="whole 5-minute windows"):
            await counter.reserve(T0, W + 1, 3, 5)
        with pytest.raises(ValueError, match="not the start of a 5-minute window"):
            await counter.incr(T0 + 1, 1)
        assert await counter.get_all() == {}


# -- the Lua script's fields ------------------------------------------------------------------
YEAR_1600 = parse_instant_ms("1600-01-01T00:00:00Z")
YEAR_2600 = parse_instant_ms("2600-01-01T00:00:00Z")
PROBES = 40


def _run_lua_fields(target: Target, first: int, step: int) -> None:
    """Probe ``PROBES`` windows with cap -1 (all full): every probe is undone and leaves its field
    at 0, so HKEYS shows exactly the fields the Lua script computed."""

    async def main() -> None:
        async with opened(target.counter(reservation="lua", reset=True)) as counter:
            got = await counter.reserve(first, step, PROBES, -1)
            assert got == Reserved(None, -1, PROBES)

    trio.run(main)
    wanted = {window_key_iso(first + i * step): "0" for i in range(PROBES)}
    assert hash_of(target) == wanted


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    first=st.integers(YEAR_1600 // W, YEAR_2600 // W).map(lambda i: i * W),
    step=st.sampled_from([1, -1, 12, 288, 287, 2016, 105_120, 105_408]).map(lambda k: k * W),
)
@example(first=parse_instant_ms("2000-02-28T23:50:00Z"), step=W)  # a leap century
@example(first=parse_instant_ms("2100-02-28T23:55:00Z"), step=W)  # not a leap year
@example(first=parse_instant_ms("1900-03-01T00:05:00Z"), step=-W)
@example(first=parse_instant_ms("2400-02-29T00:00:00Z"), step=-288 * W)
@example(first=parse_instant_ms("1969-12-31T23:00:00Z"), step=W)  # across the epoch
@example(first=parse_instant_ms("2031-12-31T23:55:00Z"), step=2 * W)
def test_lua_fields_are_the_iso_window_starts(target: Target, first: int, step: int) -> None:
    _run_lua_fields(target, first, step)


# -- cancellation ---------------------------------------------------------------------------
def _cancel_on(
    monkeypatch: pytest.MonkeyPatch, method: str, nth: int, scope: list[Any]
) -> list[Any]:
    """Make the ``nth`` call of ``redis.asyncio.Redis.<method>`` (fakeredis inherits it) cancel
    ``scope[0]`` once its reply is in, then give the cancellation an asyncio checkpoint to land
    on. Returns the list of calls' arguments."""
    original = getattr(redis.asyncio.Redis, method)
    calls: list[Any] = []

    async def wrapper(self: Any, *args: Any) -> Any:
        reply = await original(self, *args)
        calls.append(args)
        if len(calls) == nth:
            scope[0].cancel()
            await asyncio.sleep(0)
        return reply

    monkeypatch.setattr(redis.asyncio.Redis, method, wrapper)
    return calls


async def test_a_cancelled_loop_reservation_undoes_what_it_probed(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with opened(target.counter(reservation="loop")) as counter:
        await counter.replace_all({T0 + i * W: 2 for i in range(5)})
        scope: list[trio.CancelScope] = []
        # HINCRBY calls: +1, -1 on T0, +1 (3rd call: cancel here), -1 on T0 + W, then stop.
        calls = _cancel_on(monkeypatch, "hincrby", 3, scope)
        with trio.CancelScope() as cs:
            scope.append(cs)
            await counter.reserve(T0, W, 10, 2)
        monkeypatch.undo()
        assert cs.cancelled_caught
        fields = [window_key_iso(T0), window_key_iso(T0 + W)]
        assert [(f, d) for _, f, d in calls] == [
            (fields[0], 1),
            (fields[0], -1),
            (fields[1], 1),
            (fields[1], -1),
        ], "the undo ran, and no further window was probed"
        assert await counter.get_all() == {T0 + i * W: 2 for i in range(5)}


async def test_a_reservation_that_reached_redis_is_kept_and_returned(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with opened(target.counter(reservation="lua")) as counter:
        await counter.incr(T0, 2)
        scope: list[trio.CancelScope] = []
        _cancel_on(monkeypatch, "evalsha", 1, scope)
        got = None
        with trio.CancelScope() as cs:
            scope.append(cs)
            got = await counter.reserve(T0, W, 10, 2)
            await trio.lowlevel.checkpoint()  # the cancellation lands here: the next checkpoint
        monkeypatch.undo()
        assert cs.cancelled_caught
        assert got == Reserved(T0 + W, 1, 2)
        assert await counter.get_all() == {T0: 2, T0 + W: 1}


async def test_a_cancelled_rebuild_still_writes_every_field(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with opened(target.counter()) as counter:
        await counter.incr(T0 + 99 * W, 7)
        scope: list[trio.CancelScope] = []
        _cancel_on(monkeypatch, "hset", 1, scope)
        counts = {T0 + i * W: i for i in range(6)}
        with trio.CancelScope() as cs:
            scope.append(cs)
            await counter.replace_all(counts)
            await trio.lowlevel.checkpoint()
        monkeypatch.undo()
        assert cs.cancelled_caught
        assert await counter.get_all() == counts


# -- whole runs ---------------------------------------------------------------------------
RUN_OVERRIDES = [
    "duration=3h",
    "catalog.songs=40",
    "catalog.non_songs=200",
    "arrivals.per_day=100",
    "design.window_cap=3",  # small windows: reservations probe several of them
]


def _fingerprint(spec: BackendSpec) -> tuple[str, dict[str, Any]]:
    scenario = load_scenario(DATA / "small.toml", overrides=RUN_OVERRIDES)
    result = run_scenario(scenario, build_cvsa_model, RunOptions(backends=spec))
    return result.manifest["event_log_sha256"], result.metrics


@pytest.fixture(scope="module")
def memory_run() -> tuple[str, dict[str, Any]]:
    return _fingerprint(BackendSpec())


@pytest.mark.parametrize("reservation", ["loop", "lua"])
def test_a_run_on_fakeredis_is_the_run_in_memory(
    reservation: Any, memory_run: tuple[str, dict[str, Any]]
) -> None:
    sha, metrics = memory_run
    assert metrics["windows.probes.total"] > metrics["windows.placement.forward"], "probes > 1"
    assert _fingerprint(BackendSpec(counter="fakeredis", reservation=reservation)) == (
        sha,
        metrics,
    )


@pytest.mark.services
@pytest.mark.parametrize("reservation", ["loop", "lua"])
def test_a_run_on_redis_is_the_run_in_memory(
    reservation: Any, memory_run: tuple[str, dict[str, Any]]
) -> None:
    t = make_target("redis", "run")
    try:
        spec = BackendSpec(counter=require_redis(), key_prefix=t.prefix, reservation=reservation)
        assert _fingerprint(spec) == memory_run
        assert t.sync.hlen(f"{t.prefix}cvsa:snapshot_window_counts") > 0, "the run used Redis"
    finally:
        t.cleanup()


# -- measurement --------------------------------------------------------------------------
@pytest.fixture(params=TARGETS)
def bench_spec(request: pytest.FixtureRequest) -> str:
    return "fakeredis" if request.param == "fakeredis" else require_redis()


async def test_measure_modes_counts_progressive_probes_and_cleans_up(bench_spec: str) -> None:
    spec = bench_spec
    kind = "fakeredis" if spec == "fakeredis" else "redis"
    before = set() if kind == "fakeredis" else set(keys_of_bench())
    costs = await measure_modes(spec, cap=2, fill_windows=3, incrs=5)
    assert set(costs) == {"loop", "lua"}
    for mode, cost in costs.items():
        assert (cost.reservation, cost.reservations) == (mode, 6)
        assert cost.probes == 1 + 1 + 2 + 2 + 3 + 3, "windows fill up one after the other"
        assert cost.us_per_reservation > 0
        assert cost.us_per_hincrby > 0
    if kind != "fakeredis":
        assert set(keys_of_bench()) == before, "measurement keys left on the server"


def keys_of_bench() -> list[str]:
    client = redis.Redis.from_url(require_redis())
    try:
        return keys_under(client, "sim-bench:")
    finally:
        client.close()


# -- dispatcher locks -------------------------------------------------------------------------
async def test_locks_are_strings_holding_their_expiry_in_run_time(target: Target) -> None:
    key = f"{target.prefix}cvsa:lock:dispatchArchiveSnapshots"
    async with opened(target.counter()) as counter:
        assert await counter.acquire_lock("dispatchArchiveSnapshots", T0, 1_800_000)
        assert target.sync.get(key) == str(T0 + 1_800_000).encode()
        assert target.sync.ttl(key) == -1, "no wall-clock EXPIRE: the run's clock decides"
    # A lock left by sim's own run (a Ctrl-C mid-dispatch) goes when the prefix is reopened.
    async with opened(target.counter()) as counter:
        assert not target.sync.exists(key)
        assert await counter.acquire_lock("dispatchArchiveSnapshots", T0, 1_800_000)
        await counter.drop()
    assert keys_under(target.sync, target.prefix) == [], "drop deletes the locks too"
