"""The window-count hash on Redis (reference §6): ``fakeredis`` in process, or a real server.

Key layout, under ``key_prefix`` (default ``sim:``):

* ``<prefix>cvsa:snapshot_window_counts``: the deployed hash (§2.8). Fields are window starts
  in ISO UTC (:func:`sim.cvsa.windows.window_key_iso`, e.g. ``2026-01-09T07:35:00.000Z``),
  values integer counts. No TTL, as deployed (and fakeredis expires on wall time anyway).
* ``<prefix>sim:owner``: a marker saying that sim wrote the keys under this prefix. It stays
  after the run, so the next run can tell its own leftovers from somebody else's data.

Opening refuses to touch a hash it did not write (no marker) and a hash left by an earlier run,
unless ``reset`` is set; ``reset`` deletes exactly those two keys and nothing else.

Reservation (:meth:`RedisWindowCounter.reserve`) comes in two modes:

* ``loop`` (default, faithful): the deployed client-side loop of ``adjustSnapshotTime``, one
  round trip per HINCRBY (+1, and -1 when the window went over the cap). Other clients (and
  other trio tasks) interleave between round trips, as they do against the deployed code.
* ``lua``: one EVALSHA of :data:`RESERVE_LUA`, the same loop run inside Redis: one round trip,
  atomic, same reply and same hash afterwards (zero-valued fields included).

Bridging: every method crosses from trio to asyncio (``trio_asyncio.aio_as_trio``) once per
logical operation. The exception is the loop, which crosses once per probe: a probe (+1 and its
undo) is the unit that cancellation must not split (see :meth:`RedisWindowCounter.reserve`).

Cancellation (Ctrl-C twice under ``sim run``, or any cancel scope): every write runs shielded,
so a command that reached Redis is always followed by what belongs with it. A reservation is
cancelled only between probes, where every window probed so far has been undone; a rebuild
(:meth:`RedisWindowCounter.replace_all`) always runs to its last HSET. Socket timeouts bound a
shielded call if the server stops answering. Under sim's virtual clock the engine waits for
every reply before anything else happens, so a real server gives the in-memory run's event log
(tests/backends/test_sql_equivalence.py); trio's MockClock autojump would not be safe
(libraries.md §0.3).

Dispatcher locks (:class:`sim.ports.LockManager`) are ``<prefix>cvsa:lock:<name>`` strings whose
value is the expiry instant in the run's time (see the port). ``reset`` and :meth:`drop` delete
them (the dispatcher locks, by name) with the hash; opening over sim's own earlier run deletes
the locks it left.

Connect to ``127.0.0.1`` rather than ``localhost``: the URL is used as given, and a host name
makes asyncio resolve it with ``getaddrinfo`` through ``run_in_executor``, which trio-asyncio
turns into ``trio.to_thread.run_sync``: a thread hop per new connection, and virtual time leaks
under a mock clock (feasibility.md §2b). A numeric address skips the lookup.

Not guarded: two runs opening the same prefix at the same instant (the ownership check and the
marker write are not one atomic step). Give concurrent runs different prefixes.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import fakeredis
import redis.asyncio as aioredis
import trio
import trio_asyncio
from redis.exceptions import AuthenticationError, NoPermissionError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from sim.backends.errors import BackendError, redact
from sim.clock import wall_seconds
from sim.cvsa.windows import window_from_key, window_key_iso
from sim.ports import DISPATCHER_LOCKS, Reserved
from sim.units import WINDOW_MS, Ms

Reservation = Literal["loop", "lua"]

HASH_KEY = "cvsa:snapshot_window_counts"
"""The deployed key (reference §2.8); sim puts ``key_prefix`` in front of it."""
MARKER_KEY = "sim:owner"
"""Marker key (after ``key_prefix``): present when sim wrote the keys under the prefix."""
MARKER_VALUE = "sim window counter"
LOCK_KEY = "cvsa:lock:"
"""Prefix of the dispatcher locks (reference §2.8), after ``key_prefix``."""


def start_hint(url: str) -> str:
    """How to start a Redis server where ``url`` points (its port)."""
    try:
        port = urlsplit(url).port or 6379
    except ValueError:
        port = 6379
    return (
        f"start one with `redis-server --daemonize yes --port {port}` "
        f"or `docker run -p {port}:6379 redis:7`"
    )


SOCKET_CONNECT_TIMEOUT_S = 5.0
SOCKET_TIMEOUT_S = 10.0
"""Bounds a shielded command on a server that stopped answering (real Redis only)."""

RESERVE_LUA = """
-- The reservation loop of adjustSnapshotTime (reference §6.2), run inside Redis.
-- KEYS[1]: the window-count hash.  ARGV: first_ms, step_ms, count, cap.
-- Probe windows first + i*step (i = 0 .. count-1) with HINCRBY +1; keep the +1 on the first
-- whose new count is <= cap and stop; undo (HINCRBY -1) each one that went over, which leaves
-- a field probed for the first time at 0, exactly as the client-side loop does.
-- Reply: {probed, value, kept}; kept = 1 if window first + (probed-1)*step holds the +1,
-- otherwise {count, -1, 0}.
local key = KEYS[1]
local first = tonumber(ARGV[1])
local step = tonumber(ARGV[2])
local count = tonumber(ARGV[3])
local cap = tonumber(ARGV[4])
local floor = math.floor

-- The field of a window: its start as ISO UTC with milliseconds (2026-01-09T07:35:00.000Z).
-- Redis' Lua has no os.date: civil-from-days (H. Hinnant), exact on doubles below 2^53.
local function field(ms)
  local days = floor(ms / 86400000)
  local rem = ms - days * 86400000
  local hh = floor(rem / 3600000)
  rem = rem - hh * 3600000
  local mi = floor(rem / 60000)
  rem = rem - mi * 60000
  local ss = floor(rem / 1000)
  local mss = rem - ss * 1000
  local z = days + 719468
  local era = floor(z / 146097)
  local doe = z - era * 146097
  local yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100))
  local mp = floor((5 * doy + 2) / 153)
  local d = doy - floor((153 * mp + 2) / 5) + 1
  local m = mp + 3
  if mp >= 10 then m = mp - 9 end
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d, hh, mi, ss, mss)
end

for i = 0, count - 1 do
  local f = field(first + i * step)
  local value = redis.call('HINCRBY', key, f, 1)
  if value <= cap then
    return {i + 1, value, 1}
  end
  redis.call('HINCRBY', key, f, -1)
end
return {count, -1, 0}
"""


class RedisWindowCounter:
    """The :class:`sim.ports.WindowCounter` port on Redis (see the module docstring).

    Args:
        spec: ``fakeredis`` (a fresh in-process server per counter; Lua through lupa) or a
            ``redis://HOST:PORT/DB`` URL (also ``rediss://`` and ``unix://``).
        key_prefix: put in front of every key; one prefix per run (or per test).
        reservation: ``loop`` (deployed, one round trip per HINCRBY) or ``lua`` (one EVALSHA).
        reset: on :meth:`open`, delete the hash and the marker under the prefix, whoever wrote
            them, instead of refusing.
        fake_server: with ``fakeredis``, use this server instead of a fresh one (tests share one
            to play the part of a persistent server).
    """

    needs_asyncio = True

    def __init__(
        self,
        spec: str,
        *,
        key_prefix: str = "sim:",
        reservation: Reservation = "loop",
        reset: bool = False,
        fake_server: fakeredis.FakeServer | None = None,
    ) -> None:
        if reservation not in ("loop", "lua"):
            raise ValueError(f"reservation must be 'loop' or 'lua' (got {reservation!r})")
        if spec != "fakeredis" and not spec.startswith(("redis://", "rediss://", "unix://")):
            raise BackendError(
                f"unknown Redis spec {spec!r}: use fakeredis or redis://HOST:PORT/DB"
            )
        if fake_server is not None and spec != "fakeredis":
            raise ValueError("fake_server goes with the fakeredis spec only")
        self.spec = spec
        self.key_prefix = key_prefix
        self.reservation: Reservation = reservation
        self.reset = reset
        self.hash_key = f"{key_prefix}{HASH_KEY}"
        self.marker_key = f"{key_prefix}{MARKER_KEY}"
        self._fake_server = fake_server
        self._client: aioredis.Redis | None = None
        self._script: Any = None  # redis.commands.core.AsyncScript once open (lua mode)
        # One bridge per logical operation (libraries.md §7); built once, reused.
        aio = trio_asyncio.aio_as_trio
        self._t_open = aio(self._aio_open)
        self._t_close = aio(self._aio_close)
        self._t_incr = aio(self._aio_incr)
        self._t_probe = aio(self._aio_probe)
        self._t_reserve_lua = aio(self._aio_reserve_lua)
        self._t_get_all = aio(self._aio_get_all)
        self._t_replace_all = aio(self._aio_replace_all)
        self._t_delete = aio(self._aio_delete)
        self._t_is_locked = aio(self._aio_is_locked)
        self._t_acquire_lock = aio(self._aio_acquire_lock)
        self._t_drop_all = aio(self._aio_drop_all)

    @property
    def url(self) -> str:
        """The spec, with any password hidden."""
        return redact(self.spec)

    def __repr__(self) -> str:
        return (
            f"RedisWindowCounter({self.url!r}, key_prefix={self.key_prefix!r}, "
            f"reservation={self.reservation!r})"
        )

    # -- lifecycle ------------------------------------------------------------------------
    async def open(self) -> None:
        """Connect, check ownership of the keys (refuse foreign or leftover data unless
        ``reset``), write the marker and load the Lua script. Raises :class:`BackendError`."""
        try:
            await self._t_open()
        except BaseException as exc:
            with trio.CancelScope(shield=True):
                await self.close()
            if isinstance(exc, BackendError):
                raise exc from None
            if isinstance(exc, AuthenticationError | NoPermissionError):
                # Reachable: the server refused the user or password; starting one won't help.
                reason = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
                raise BackendError(
                    f"Redis at {self.url} refused the credentials: {reason}; give the right "
                    "user and password in the URL (redis://USER:PASSWORD@HOST:PORT/DB)"
                ) from None
            if isinstance(exc, RedisConnectionError | RedisTimeoutError | OSError):
                reason = " ".join(str(exc).split()) or type(exc).__name__
                raise BackendError(
                    f"Redis is not reachable at {self.url} ({reason}); {start_hint(self.url)}"
                ) from None
            if isinstance(exc, RedisError):
                reason = " ".join(str(exc).split()) or type(exc).__name__
                hint = (
                    "; name a database the server has in the URL (0 to 15 unless its "
                    "`databases` setting says more)"
                    if "DB index" in reason
                    else ""
                )
                raise BackendError(
                    f"Redis at {self.url} refused sim's commands ({reason}){hint}"
                ) from None
            raise

    async def close(self) -> None:
        """Disconnect; safe after a failed open and when called twice. Keys stay."""
        if self._client is not None:
            await self._t_close()

    async def drop(self) -> None:
        """Delete the hash, the locks and the marker (what ``reset`` deletes); for tests and
        benchmarks."""
        with trio.CancelScope(shield=True):
            await self._t_drop_all()

    # -- the port ---------------------------------------------------------------------------
    async def incr(self, window_ms: Ms, delta: int) -> int:
        field = window_key_iso(window_ms)
        with trio.CancelScope(shield=True):  # once sent, a command's effect must be known
            value: int = await self._t_incr(field, delta)
        return value

    async def reserve(self, first_ms: Ms, step_ms: Ms, count: int, cap: int) -> Reserved:
        """Probe windows ``first_ms + i * step_ms`` as :func:`sim.cvsa.windows.reserve_in` does.

        ``loop``: one bridge and one or two round trips per probe, shielded; cancellation is
        honoured between probes only, where every full window probed so far has been undone, so
        a cancelled reservation leaves the counts as they were (a field probed for the first
        time stays at 0, as after any probe). ``lua``: one shielded EVALSHA. Either way, once a
        window has kept the +1 the reply is returned; if the caller is cancelled before it
        inserts the row, the +1 drifts until the next refresh, as when the deployed process dies
        between ``adjustSnapshotTime`` and its INSERT (§6.4).
        """
        if first_ms % WINDOW_MS or step_ms % WINDOW_MS:
            raise ValueError(
                f"reservations probe whole 5-minute windows (first {first_ms}, step {step_ms})"
            )
        # Cancellation is honoured before the first probe too, so that a job looping over
        # reservations (a dispatcher on the memory store) stops at the end of a `sim load` step.
        await trio.lowlevel.checkpoint_if_cancelled()
        if self.reservation == "lua":
            with trio.CancelScope(shield=True):
                probed, value, kept = await self._t_reserve_lua(first_ms, step_ms, count, cap)
            if kept:
                return Reserved(first_ms + (probed - 1) * step_ms, value, probed)
            return Reserved(None, -1, probed)
        for i in range(count):
            w = first_ms + i * step_ms
            with trio.CancelScope(shield=True):
                value = await self._t_probe(window_key_iso(w), cap)
            if value <= cap:
                return Reserved(w, value, i + 1)
            await trio.lowlevel.checkpoint_if_cancelled()
        return Reserved(None, -1, count)

    async def get_all(self) -> dict[Ms, int]:
        raw: dict[str, str] = await self._t_get_all()
        return dict(sorted((window_from_key(k), int(v)) for k, v in raw.items()))

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        """DEL, then one HSET per field, one round trip each (§6.3): other clients interleave,
        as deployed. Shielded: a cancellation never leaves a half-rebuilt hash behind."""
        fields = [(window_key_iso(w), int(n)) for w, n in counts.items()]
        with trio.CancelScope(shield=True):
            await self._t_replace_all(fields)

    async def clear(self) -> None:
        with trio.CancelScope(shield=True):
            await self._t_delete(self.hash_key)

    # -- LockManager ------------------------------------------------------------------------
    async def is_locked(self, name: str, now_ms: Ms) -> bool:
        locked: bool = await self._t_is_locked(name, now_ms)
        return locked

    async def acquire_lock(self, name: str, now_ms: Ms, ttl_ms: Ms) -> bool:
        with trio.CancelScope(shield=True):
            taken: bool = await self._t_acquire_lock(name, now_ms, ttl_ms)
        return taken

    async def release_lock(self, name: str) -> None:
        with trio.CancelScope(shield=True):
            await self._t_delete(self.lock_key(name))

    def lock_key(self, name: str) -> str:
        return f"{self.key_prefix}{LOCK_KEY}{name}"

    # -- asyncio side (each runs as one asyncio task per call) ---------------------------------
    def _redis(self) -> aioredis.Redis:
        if self._client is None:
            raise RuntimeError(f"{self!r} is not open")
        return self._client

    async def _aio_open(self) -> None:
        if self.spec == "fakeredis":
            server = self._fake_server
            if server is None:
                server = fakeredis.FakeServer(version=(7,))
            self._client = fakeredis.FakeAsyncRedis(server=server, decode_responses=True)
        else:
            self._client = aioredis.Redis.from_url(
                self.spec,
                decode_responses=True,
                socket_connect_timeout=SOCKET_CONNECT_TIMEOUT_S,
                socket_timeout=SOCKET_TIMEOUT_S,
            )
        r = self._client
        await r.ping()
        if self.reset:
            await self._aio_drop_all()
        else:
            await self._check_ownership(r)
            if await r.get(self.marker_key) == MARKER_VALUE:
                await self._delete_locks(r)  # left by sim's own earlier run (a Ctrl-C)
        await r.set(self.marker_key, MARKER_VALUE)
        if self.reservation == "lua":
            self._script = r.register_script(RESERVE_LUA)
            await r.script_load(RESERVE_LUA)

    async def _check_ownership(self, r: aioredis.Redis) -> None:
        kind = await r.type(self.hash_key)
        marker_kind = await r.type(self.marker_key)
        marker = await r.get(self.marker_key) if marker_kind == "string" else None
        if kind == "none":
            if marker_kind != "none" and marker != MARKER_VALUE:
                raise BackendError(
                    f"Redis at {self.url}: {self.marker_key} exists and was not written by sim; "
                    f"refusing to touch it: use another --key-prefix, or pass --reset to "
                    f"delete it"
                )
            return
        if marker != MARKER_VALUE or kind != "hash":
            raise BackendError(
                f"Redis at {self.url}: {self.hash_key} exists and was not written by sim "
                f"(no {self.marker_key} marker); refusing to touch it: use another "
                f"--key-prefix, or pass --reset to delete it"
            )
        n = await r.hlen(self.hash_key)
        raise BackendError(
            f"Redis at {self.url}: {self.hash_key} holds {n} windows from an earlier run; "
            f"pass --reset to start afresh"
        )

    async def _aio_close(self) -> None:
        client, self._client, self._script = self._client, None, None
        if client is not None:
            await client.aclose()

    async def _aio_incr(self, field: str, delta: int) -> int:
        value: int = await self._redis().hincrby(self.hash_key, field, delta)
        return value

    async def _aio_probe(self, field: str, cap: int) -> int:
        r = self._redis()
        value: int = await r.hincrby(self.hash_key, field, 1)
        if value > cap:
            await r.hincrby(self.hash_key, field, -1)
        return value

    async def _aio_reserve_lua(
        self, first_ms: Ms, step_ms: Ms, count: int, cap: int
    ) -> tuple[int, int, int]:
        if self._script is None:
            raise RuntimeError(f"{self!r} is not open")
        # EVALSHA; redis-py loads the script again if the server lost it (NOSCRIPT).
        reply = await self._script(keys=[self.hash_key], args=[first_ms, step_ms, count, cap])
        probed, value, kept = (int(x) for x in reply)
        return probed, value, kept

    async def _aio_get_all(self) -> dict[str, str]:
        raw = await self._redis().hgetall(self.hash_key)
        return cast("dict[str, str]", raw)  # decode_responses=True

    async def _aio_replace_all(self, fields: list[tuple[str, int]]) -> None:
        r = self._redis()
        await r.delete(self.hash_key)
        for field, n in fields:
            await r.hset(self.hash_key, field, n)

    async def _aio_delete(self, *keys: str) -> None:
        await self._redis().delete(*keys)

    async def _aio_drop_all(self) -> None:
        r = self._redis()
        await self._delete_locks(r)
        await r.delete(self.hash_key, self.marker_key)

    async def _delete_locks(self, r: aioredis.Redis) -> None:
        # By name: other cvsa:lock:<id> keys (the deployed classifyVideos lock, ...) are not sim's.
        await r.delete(*(self.lock_key(name) for name in DISPATCHER_LOCKS))

    async def _aio_is_locked(self, name: str, now_ms: Ms) -> bool:
        expires = await self._redis().get(self.lock_key(name))
        return expires is not None and int(expires) > now_ms

    async def _aio_acquire_lock(self, name: str, now_ms: Ms, ttl_ms: Ms) -> bool:
        # SET NX, as deployed; a lock whose (run-time) expiry has passed counts as absent, which
        # is what the deployed EXPIRE achieves on the server's clock.
        r, key = self._redis(), self.lock_key(name)
        if await r.set(key, now_ms + ttl_ms, nx=True):
            return True
        expires = await r.get(key)
        if expires is not None and int(expires) > now_ms:
            return False
        await r.set(key, now_ms + ttl_ms)
        return True


# -- measurement (bench/redis_reserve.py and the load harness) --------------------------------
BENCH_FIRST_MS: Ms = 1_924_992_000_000
"""2031-01-01T00:00:00Z: the first window the measurements fill."""


@dataclass(frozen=True, slots=True)
class ReservationCost:
    """Wall cost of reservations on one counter (see :func:`measure_reservations`)."""

    spec: str
    reservation: Reservation
    reservations: int
    probes: int
    us_per_reservation: float
    us_per_probe: float
    us_per_hincrby: float
    """One :meth:`RedisWindowCounter.incr` (HINCRBY, bridged), for scale."""


async def measure_reservations(
    counter: RedisWindowCounter, *, cap: int = 100, fill_windows: int = 6, incrs: int = 500
) -> ReservationCost:
    """Time ``cap * fill_windows`` reservations on an opened counter, windows filling up
    progressively from :data:`BENCH_FIRST_MS` (reservation i probes ``i // cap + 1`` windows:
    (``fill_windows`` + 1) / 2 on average, as in feasibility.md §3d), then ``incrs`` HINCRBYs.
    The hash is cleared before and after."""
    await counter.clear()
    n = cap * fill_windows
    probes = 0
    started = wall_seconds()
    for _ in range(n):
        got = await counter.reserve(BENCH_FIRST_MS, WINDOW_MS, fill_windows + 1, cap)
        probes += got.probed
    reserve_s = wall_seconds() - started
    started = wall_seconds()
    for i in range(incrs):
        await counter.incr(BENCH_FIRST_MS + (i % 64) * WINDOW_MS, 1)
    incr_s = wall_seconds() - started
    await counter.clear()
    return ReservationCost(
        spec=counter.url,
        reservation=counter.reservation,
        reservations=n,
        probes=probes,
        us_per_reservation=reserve_s / n * 1e6,
        us_per_probe=reserve_s / probes * 1e6,
        us_per_hincrby=incr_s / max(incrs, 1) * 1e6,
    )


async def measure_modes(
    spec: str, *, cap: int = 100, fill_windows: int = 6, incrs: int = 500
) -> dict[Reservation, ReservationCost]:
    """:func:`measure_reservations` for the loop and the Lua script on ``spec``, each on a fresh
    key prefix (``sim-bench:<hex>:``) deleted afterwards. Opens its own trio-asyncio loop: call
    it from trio, outside any :func:`sim.backends.open_backends` block. Raises
    :class:`BackendError` when the server is unreachable."""
    costs: dict[Reservation, ReservationCost] = {}
    for reservation in ("loop", "lua"):
        counter = RedisWindowCounter(
            spec, key_prefix=f"sim-bench:{uuid.uuid4().hex}:", reservation=reservation
        )
        async with trio_asyncio.open_loop():
            await counter.open()
            try:
                costs[reservation] = await measure_reservations(
                    counter, cap=cap, fill_windows=fill_windows, incrs=incrs
                )
            finally:
                await counter.drop()
                await counter.close()
    return costs
