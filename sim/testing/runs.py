"""Run the CVSA scheduler on a hand-made world, for timing regression tests.

``run_model`` builds the full model -- every periodic job, the workers, the window counter --
on an empty generated catalogue, loads the videos a test describes (each with its own view
curve and error codes), lets the test add rows before the first tick, runs the engine and
returns the recorded log. Tests then assert exact lists of virtual times::

    run = run_model([Video(AID, published_ms=T0 - HOUR_MS, song=True, views=lambda t: 5_000)],
                    until="20m")
    assert [e.t_ms for e in run.events(SnapshotTaken)] == [...]
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from sim.backends import MemoryJobTable, MemoryMessageMarks, MemoryStore, MemoryWindowCounter
from sim.clock import VirtualClock
from sim.cvsa.vocabulary import UpstreamErrorKind
from sim.determinism import deterministic_trio
from sim.engine import Engine, VirtualEngine
from sim.events import EventLog
from sim.ports import UpstreamError, VideoStats
from sim.rng import RandomStreams
from sim.scenario import parse_scenario
from sim.scheduler.context import Ctx
from sim.scheduler.deployment import CvsaModel
from sim.testing.harness import Recorder
from sim.units import Ms, parse_duration_ms

T0: Ms = 1_925_395_200_000
"""2031-01-06T00:00:00+08:00, a Monday: the default start of :func:`run_model`."""


@dataclass
class Video:
    """A video of a test world: its curve, and optionally the error code the API returns."""

    aid: int
    published_ms: Ms
    song: bool = True
    views: Callable[[Ms], int] = lambda t: 0
    error: Callable[[Ms], int] = lambda t: 0
    history: Sequence[tuple[Ms, int]] = ()
    """Snapshots it already has (time, views) when the run starts."""


Fault = Callable[[Ms, tuple[int, ...]], UpstreamError | None]
"""``fault(now, aids)``: the error an upstream call for ``aids`` fails with at ``now``, or None."""


class ScriptedUpstream:
    """The upstream port over a dict of :class:`Video`: views and codes as the test scripts them.

    A video whose ``error(t)`` is non-zero fails a single read with a bilibili code and is left
    out of a bulk answer (the simulator's choice for reference Q3). ``fault`` fails whole calls
    (``no_proxy``, ``fetch_error`` ...: every :class:`~sim.ports.UpstreamError` kind), and
    ``latency_ms`` makes every call take that long in virtual time (the answer is read at its
    end, like the proxy's server time).
    """

    def __init__(
        self,
        videos: dict[int, Video],
        *,
        fault: Fault | None = None,
        latency_ms: Ms = 0,
        engine: Engine | None = None,
    ) -> None:
        if latency_ms and engine is None:
            raise ValueError("a latency needs the engine to sleep on")
        self.videos = videos
        self.fault = fault
        self.latency_ms = latency_ms
        self.engine = engine
        self.calls: list[tuple[Ms, tuple[int, ...]]] = []

    async def _answer_time(self, now_ms: Ms, aids: tuple[int, ...]) -> Ms:
        self.calls.append((now_ms, aids))
        if self.latency_ms and self.engine is not None:
            await self.engine.sleep(self.latency_ms)
            now_ms = self.engine.now
        if self.fault is not None:
            err = self.fault(now_ms, aids)
            if err is not None:
                raise err
        return now_ms

    async def get_video(self, aid: int, now_ms: Ms, task: str = "snapshotVideo") -> VideoStats:
        t = await self._answer_time(now_ms, (aid,))
        video = self.videos[aid]
        code = video.error(t)
        if code:
            raise UpstreamError(UpstreamErrorKind.BILI_CODE, code)
        return VideoStats(aid, video.views(t), t)

    async def get_videos(
        self, aids: Sequence[int], now_ms: Ms, task: str = "bulkSnapshot"
    ) -> list[VideoStats]:
        t = await self._answer_time(now_ms, tuple(aids))
        return [
            VideoStats(a, self.videos[a].views(t), t) for a in aids if not self.videos[a].error(t)
        ]


@dataclass
class ModelRun:
    """What :func:`run_model` returns."""

    recorder: Recorder
    model: CvsaModel
    upstream: ScriptedUpstream
    engine: Engine = field(repr=False)

    @property
    def ctx(self) -> Ctx:
        return self.model.ctx

    def events(self, record_type: type | None = None) -> list[Any]:
        return self.recorder.events(record_type)


def run_model(
    videos: Sequence[Video],
    *,
    until: str = "1h",
    start: str = "2031-01-06T00:00:00+08:00",
    profile: str = "design",
    switches: dict[str, object] | None = None,
    design: dict[str, object] | None = None,
    overrides: Sequence[str] = (),
    setup: Callable[[Ctx], Coroutine[Any, Any, None]] | None = None,
    elide: bool = True,
    seed: int = 1,
    fault: Fault | None = None,
    latency_ms: Ms = 0,
    faults: str = "",
) -> ModelRun:
    """Run the whole scheduler on ``videos`` for ``until`` (a duration) from ``start``.

    ``fault`` and ``latency_ms`` script the upstream beyond the videos' own error codes (see
    :class:`ScriptedUpstream`). ``faults`` is TOML for ``[[faults]]`` tables (the scenario's
    fault injector: counter loss, scheduler restart, slow database, clock skew, ...).
    ``switches`` and ``design`` are the scenario's ``[switches]`` and ``[design]`` tables."""
    lines = [
        'name = "harness"',
        f"seed = {seed}",
        f'start = "{start}"',
        f'duration = "{until}"',
        f'profile = "{profile}"',
        "[catalog]\nsongs = 0\nnon_songs = 0",
        "[arrivals]\nper_day = 0",
        "[scheduler]\nhistory = []",
        f"[engine]\nelide_idle_ticks = {str(elide).lower()}",
    ]
    for section, values in (("switches", switches), ("design", design)):
        if values:
            lines.append(f"[{section}]")
            lines += [f"{k} = {_toml(v)}" for k, v in values.items()]
    if faults:
        lines.append(faults)
    scenario = parse_scenario("\n".join(lines), source="<run_model>", overrides=overrides)
    recorder = Recorder()
    log = EventLog([recorder])
    engine = VirtualEngine(clock=VirtualClock(scenario.start_ms), log=log, seed=seed, elide=elide)
    table = {v.aid: v for v in videos}
    upstream = ScriptedUpstream(table, fault=fault, latency_ms=latency_ms, engine=engine)

    async def load(ctx: Ctx) -> None:
        for v in videos:
            await ctx.store.add_video(v.aid, v.published_ms)
            if v.song:
                await ctx.store.add_song(v.aid, v.published_ms)
            for t, views in v.history:
                await ctx.store.insert_snapshot(v.aid, t, views)
        if setup is not None:
            await setup(ctx)

    model = CvsaModel(
        scenario,
        engine,
        RandomStreams(seed),
        store=MemoryStore(),
        counter=MemoryWindowCounter(),
        upstream=upstream,
        setup=load,
        jobs=MemoryJobTable(),  # used under [periodic] policy = "table"
        marks=MemoryMessageMarks(),  # used under [delivery] dedupe
    )
    log.open()

    async def main() -> None:
        await engine.run(scenario.start_ms + parse_duration_ms(until), before=model.prepare)

    with deterministic_trio(seed):
        trio.run(main)
    return ModelRun(recorder, model, upstream, engine)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
