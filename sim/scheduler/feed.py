"""The world reaching the scheduler: the catalogue at the start, then discovery and classification
of new videos (reference §13.1-13.2; the crawler's getLatestVideos/getVideoInfo/classifyVideo
pipeline is modelled by its effect on the database at the instants the world gives)."""

from __future__ import annotations

from typing import Final

import numpy as np

from sim.cvsa.vocabulary import ScheduleRule, ScheduleType
from sim.ports import UpstreamError
from sim.scheduler.context import Ctx
from sim.scheduler.schedule_snapshot import schedule_snapshot
from sim.world import World

_DISCOVER: Final = 0
_CLASSIFY: Final = 1
LOAD_CHUNK: Final = 1 << 20
"""Videos handed to the store per bulk call while the catalogue is loaded. The store takes them
one by one in order, so the chunks change nothing but the set-up's peak: whole-catalogue lists
of Python ints (three of them, then three per history offset) cost some 36 bytes an item, about
2 GB at a time for 20M videos (issue 30)."""


async def load_catalog(ctx: Ctx, world: World, history_ms: list[int]) -> None:
    """Put the initial catalogue into the database: metadata, songs, and one snapshot per history
    offset for every video published by then (the views it had, from the curves), each logged
    (``HistoryLoaded``)."""
    cat, start, store = world.initial, ctx.now, ctx.store
    for lo in range(0, len(cat), LOAD_CHUNK):
        part = slice(lo, lo + LOAD_CHUNK)
        aids = world.aids(np.arange(lo, min(lo + LOAD_CHUNK, len(cat)))).tolist()
        await store.load_catalog(aids, cat.published_ms[part].tolist(), cat.is_song[part].tolist())
    history = ctx.emit.history
    for offset in sorted(history_ms, reverse=True):
        t = start - offset
        visible = np.flatnonzero(cat.published_ms <= t)
        for lo in range(0, len(visible), LOAD_CHUNK):
            some = visible[lo : lo + LOAD_CHUNK]
            views = world.views_at(some, t).tolist()
            aids = world.aids(some).tolist()
            await store.load_snapshots(aids, [t] * len(aids), views)
            for aid, v in zip(aids, views, strict=True):  # the ETA inputs, in the log (issue 26)
                history(start, aid, t, v)


def arrival_events(world: World, start_ms: int, end_ms: int) -> list[tuple[int, int, int]]:
    """(instant, kind, arrival index) of every discovery and classification in [start, end]."""
    arr = world.arrivals
    events: list[tuple[int, int, int]] = []
    for i, t in enumerate(arr.discovered_ms.tolist()):
        if start_ms <= t <= end_ms:
            events.append((t, _DISCOVER, i))
    for i, (t, song) in enumerate(
        zip(arr.classified_ms.tolist(), arr.is_song.tolist(), strict=True)
    ):
        if song and start_ms <= t <= end_ms:
            events.append((t, _CLASSIFY, i))
    events.sort()
    return events


async def arrivals_process(ctx: Ctx, world: World, end_ms: int) -> None:
    """Discover new videos (metadata + first snapshot, §13.1) and classify songs (songs row + four
    forced ``new`` rows at +1.5, 3, 5 and 10 min, §13.2; seed 000 "初始调度").

    Each discovery and classification is its own process, started at its instant: one that
    waits on the network never delays the next (the crawler runs them as separate jobs)."""
    for t, kind, i in arrival_events(world, ctx.now, end_ms):
        await ctx.engine.sleep_until(t)
        aid = world.aid_of(len(world.initial) + i)
        published = int(world.arrivals.published_ms[i])
        if kind == _DISCOVER:
            ctx.engine.spawn(discover_video(ctx, aid, published), name="getVideoInfo")
        else:
            ctx.engine.spawn(classify_song(ctx, aid, published), name="classifyVideo")


async def discover_video(ctx: Ctx, aid: int, published_ms: int) -> None:
    """``getVideoInfo``: the video joins ``bilibili_metadata`` and gets its first snapshot, read
    through the network like any snapshot (§13.1)."""
    await ctx.store.add_video(aid, published_ms)
    ctx.emit.discovered(ctx.now, aid, published_ms)
    try:
        stats = await ctx.upstream.get_video(aid, ctx.now, task="getVideoInfo")
    except UpstreamError:
        return  # no first snapshot; the dispatchers will find the video later
    stored = await ctx.store.insert_snapshot(aid, stats.server_time_ms, stats.views)
    ctx.emit.taken(ctx.now, aid, -1, -1, -1, stats.views, int(not stored), stats.server_time_ms)


async def classify_song(ctx: Ctx, aid: int, published_ms: int) -> bool:
    """``classifyVideo`` with a label != 0 (reference §13.2; seed 000 "new类型 初始调度"): if the
    video is not yet a song, insert it into ``songs`` and schedule the four forced ``new`` rows at
    now + 1.5, 3, 5 and 10 min. Returns False (and does nothing) when it already was a song."""
    if not await ctx.store.add_song(aid, published_ms):
        return False
    ctx.emit.classified(ctx.now, aid, published_ms)
    for offset in ctx.params.new_initial_offsets_ms:
        await schedule_snapshot(
            ctx,
            aid,
            ScheduleType.NEW,
            ctx.worker_now + offset,
            rule=ScheduleRule.FORCED,
            force=True,
        )
    return True
