"""``[[world.videos]]``: named videos pinned to chosen curves, so a test can follow one video.

The catalogue is drawn as always; each pinned video then takes the place of one drawn video
(:mod:`sim.world.pinned` says which) with the aid, publication time and curve written here, and
every other video keeps its aid, curve and availability. So a scenario that pins nothing keeps
its event log byte for byte, and one that pins a video changes only what that video causes.

A curve is the world's closed form (:mod:`sim.world.curves`): views grow by ``rate_per_hour``
per *traffic hour* (an hour at the day's mean traffic: faster in the evening, slower before
dawn, ``[curves] hourly_profile``), plus a launch burst of ``burst`` views reaching half at
``half_life``, plus a surge of ``surge`` views centred ``surge_after`` the start, minus the
recount corrections. ``views`` is the count at the start; the curve's offset is derived from it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from sim.scenario.types import DurationMs, Section

FAMILY_TERMS: dict[str, frozenset[str]] = {
    "dormant": frozenset(),
    "steady": frozenset({"rate_per_hour"}),
    "approacher": frozenset({"rate_per_hour"}),
    "fresh": frozenset({"rate_per_hour", "burst", "half_life"}),
    "viral": frozenset({"rate_per_hour", "surge", "surge_after", "rise", "decay"}),
    "recount": frozenset({"rate_per_hour", "recounts"}),
}
"""The curve terms each family may set (``[curves.weights]`` describes the families)."""

_REQUIRED: dict[str, tuple[str, ...]] = {
    "fresh": ("burst", "half_life"),
    "viral": ("surge", "surge_after"),
    "recount": ("recounts",),
}
_TERMS = (
    "rate_per_hour",
    "burst",
    "half_life",
    "surge",
    "surge_after",
    "rise",
    "decay",
    "recounts",
)


class Recount(Section):
    """One downward correction of a pinned video's count (reference §18 Q10)."""

    after: DurationMs = Field(gt=0)
    """When, after the start."""
    fraction: float = Field(gt=0, le=1)
    """The drop as a fraction of the views just before it (at least one view)."""


class PinnedVideo(Section):
    """``[[world.videos]]``: one video of the initial catalogue with the aid and curve given."""

    aid: int = Field(ge=1, le=999_999_999_999_999)
    """The video's aid (unique among the pinned videos)."""
    song: bool = True
    """In the ``songs`` table (else only in ``bilibili_metadata``)."""
    family: Literal["dormant", "steady", "approacher", "fresh", "viral", "recount"]
    """The curve family (``[curves.weights]``); it decides which terms below may be set."""
    age: DurationMs = Field(gt=0)
    """Published this long before the start."""
    views: int = Field(ge=0, le=2_000_000_000)
    """Views at the start."""
    rate_per_hour: float = Field(default=0.0, ge=0)
    """Linear growth, views per traffic hour (not for ``dormant``)."""
    burst: float | None = Field(default=None, gt=0)
    """``fresh``: the launch burst, views gained over the video's life on top of the line."""
    half_life: DurationMs | None = Field(default=None, gt=0)
    """``fresh``: traffic time after publication at which half the burst is reached."""
    surge: float | None = Field(default=None, gt=0)
    """``viral``: views the surge adds."""
    surge_after: DurationMs | None = Field(default=None, ge=0)
    """``viral``: the surge's centre (half its views), this long after the start."""
    rise: DurationMs | None = Field(default=None, ge=360_000)
    """``viral``: rise time in traffic time (default ``[curves] viral_rise_median``)."""
    decay: DurationMs | None = Field(default=None, ge=360_000)
    """``viral``: decay time in traffic time (default ``[curves] viral_decay_median``)."""
    recounts: tuple[Recount, ...] = ()
    """``recount``: the corrections, ``{after = "2h", fraction = 0.05}`` each, in time order."""

    @model_validator(mode="after")
    def _family_terms(self) -> PinnedVideo:
        allowed = FAMILY_TERMS[self.family]
        for term in _TERMS:
            value = getattr(self, term)
            if term not in allowed and value not in (None, 0.0, ()):
                may = ", ".join(sorted(allowed)) or "none"
                raise ValueError(
                    f"{term} is not a term of the {self.family} family (it takes: {may})"
                )
        missing = [t for t in _REQUIRED.get(self.family, ()) if getattr(self, t) in (None, ())]
        if missing:
            raise ValueError(f"a {self.family} curve needs {' and '.join(missing)}")
        afters = [r.after for r in self.recounts]
        if afters != sorted(set(afters)):
            raise ValueError("recounts must be in time order, one per instant")
        return self


class WorldSection(Section):
    """``[world]``: videos the scenario fixes rather than draws."""

    videos: tuple[PinnedVideo, ...] = ()
    """Pinned videos (``[[world.videos]]``), each replacing one drawn video."""

    @field_validator("videos")
    @classmethod
    def _unique(cls, videos: tuple[PinnedVideo, ...]) -> tuple[PinnedVideo, ...]:
        aids = [v.aid for v in videos]
        for aid in aids:
            if aids.count(aid) > 1:
                raise ValueError(f"has aid {aid} {aids.count(aid)} times: each aid is one video")
        return videos
