"""Scenario tables for the simulated world: ``[catalog]``, ``[curves]`` and ``[arrivals]``.

The reference leaves the world unspecified: "population sizes (songs, metadata rows, view
distribution); arrival rate of new category-30 videos and the label != 0 rate" must be
parameterised (cvsa-scheduler.md §17, last row). The defaults describe a plausible bilibili
VOCALOID·UTAU category (rid 30) of about a million videos; none of them is a measured figure.

Units: counts are plain numbers, durations are ``DurationMs`` strings (``"12h"``, ``"7d"``),
rates say their unit in the name (``_per_hour``, ``_per_day``). A ``_sigma`` is the standard
deviation of the natural logarithm of a log-normal quantity whose ``_median`` sits beside it.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from sim.scenario.types import DurationMs, Section, duration_default

# bilibili's hourly traffic in UTC+8 has a trough before dawn and a peak around 21:00 (the
# reason CVSA's archive targets and our day/night cycle are in local time, reference §13b.5).
# Values at the start of each local hour; only their shape matters (they are normalised).
DEFAULT_HOURLY_PROFILE: tuple[float, ...] = (
    0.95, 0.70, 0.45, 0.30, 0.22, 0.20, 0.25, 0.40, 0.60, 0.75, 0.85, 0.90,
    1.00, 1.00, 0.95, 0.95, 1.00, 1.05, 1.15, 1.30, 1.45, 1.55, 1.50, 1.25,
)  # fmt: skip


def _check_profile(profile: tuple[float, ...], amplitude: float) -> None:
    """The hourly shape must keep every hour's traffic positive once the amplitude is applied.

    A positive floor keeps the traffic clock strictly increasing, which the exact inverses in
    :mod:`sim.world.traffic` and the monotone view curves rely on.
    """
    if len(profile) != 24:
        raise ValueError(f"hourly_profile must have 24 values (got {len(profile)})")
    if min(profile) < 0:
        raise ValueError(f"hourly_profile must be >= 0 everywhere (got {min(profile)})")
    mean = sum(profile) / 24
    if mean <= 0:
        raise ValueError("hourly_profile must have a positive mean (got 0)")
    lowest = 1 + amplitude * (min(profile) / mean - 1)
    if lowest < 0.05:
        raise ValueError(
            "day_night_amplitude must leave the quietest hour at >= 5% of the mean traffic "
            f"(got {lowest:.3g})"
        )


class _Weights(Section):
    """A table of relative shares: each is divided by the total, which must be positive."""

    def as_tuple(self) -> tuple[float, ...]:
        """The shares in field order."""
        return tuple(float(getattr(self, name)) for name in type(self).model_fields)

    @model_validator(mode="after")
    def _positive_total(self) -> _Weights:
        total = sum(self.as_tuple())
        if total <= 0:
            raise ValueError(f"must sum to > 0 (got {total:g})")
        return self


class FamilyWeights(_Weights):
    """``[curves.weights]``: relative shares of the curve families in the initial catalog.

    They need not sum to 1; each is divided by the total.
    """

    dormant: float = Field(default=0.38, ge=0)
    """No growth at all: the 72 h regular interval (reference §11.6)."""
    steady: float = Field(default=0.61, ge=0)
    """Slow growth that follows the day/night cycle."""
    fresh: float = Field(default=0.003, ge=0)
    """Published within ``curves.fresh_window`` before the start: fast growth decaying over days
    (the default matches a week of ``arrivals.per_day`` in a catalog of a million)."""
    viral: float = Field(default=0.002, ge=0)
    """Steady videos that get a second surge (a re-share, a ranking list) during the run."""
    approacher: float = Field(default=0.00005, ge=0)
    """Placed just below a milestone (100k, 1M, N x 1M) that they cross during the run. The default
    (5 in 100,000) is about the natural density of videos that close below a milestone in this
    catalogue's view distribution; the milestone-storm scenario raises it to stress tracking:
    each one is polled every few seconds in its last views (the geometric approach, §11.4)."""
    recount: float = Field(default=0.002, ge=0)
    """Steady videos whose count bilibili corrects downwards during the run (reference §18 Q10)."""


class ErrorCodeWeights(_Weights):
    """``[catalog.error_codes]``: which bilibili error code an unavailable video answers with."""

    deleted: float = Field(default=0.5, ge=0)
    """Code -404: the video is deleted (permanent)."""
    hidden: float = Field(default=0.3, ge=0)
    """Code 62002: the video is invisible (permanent)."""
    review: float = Field(default=0.2, ge=0)
    """Code 62004: the video is under review; it becomes visible again (``review_median``)."""


class ApproachTargets(_Weights):
    """``[curves.approach_targets]``: which milestone an approacher is placed below."""

    hundred_k: float = Field(default=0.5, ge=0)
    """Relative share heading for 100k."""
    one_m: float = Field(default=0.3, ge=0)
    """Relative share heading for 1M."""
    multi: float = Field(default=0.2, ge=0)
    """Relative share heading for N x 1M with N log-uniform in 2..``multi_max``."""


class CatalogSection(Section):
    """``[catalog]``: the videos known at the start (``songs`` and the rest of
    ``bilibili_metadata``, reference §2.5-2.6) and how videos become unavailable."""

    songs: int = Field(default=60_000, ge=0)
    """Rows of the ``songs`` table at the start (count)."""
    non_songs: int = Field(default=940_000, ge=0)
    """Other rows of ``bilibili_metadata`` at the start (count)."""
    max_age: DurationMs = Field(default=duration_default("5475d"), gt=0)
    """The oldest video was published this long before the start (15 years by default)."""
    age_scale: DurationMs = Field(default=duration_default("1100d"), gt=0)
    """Scale of the exponential age distribution: uploads grew over the years, so most videos
    are recent."""
    song_views_median: float = Field(default=2_500.0, gt=0)
    """Median views of a song at the start (views)."""
    song_views_sigma: float = Field(default=1.9, ge=0, le=6)
    """Log-normal spread of songs' views at the start (natural-log units)."""
    other_views_median: float = Field(default=250.0, gt=0)
    """Median views of a non-song video at the start (views)."""
    other_views_sigma: float = Field(default=1.7, ge=0, le=6)
    """Log-normal spread of non-songs' views at the start (natural-log units)."""
    unavailable_at_start: float = Field(default=0.002, ge=0, le=1)
    """Share of catalog videos already deleted or hidden at the start (fraction)."""
    unavailable_per_day: float = Field(default=2e-5, ge=0, le=1)
    """Chance per video and day that a visible video becomes unavailable (per day)."""
    error_codes: ErrorCodeWeights = ErrorCodeWeights()
    """Which error code an unavailable video answers with."""
    review_median: DurationMs = Field(default=duration_default("12h"), gt=0)
    """Median time a video stays under review before it is visible again."""

    @model_validator(mode="after")
    def _ages(self) -> CatalogSection:
        if self.age_scale > 100 * self.max_age:
            raise ValueError(f"age_scale must be <= 100 x max_age (got {self.age_scale} ms)")
        return self


class CurvesSection(Section):
    """``[curves]``: the families of view curves and the distributions of their parameters."""

    weights: FamilyWeights = FamilyWeights()
    """Relative shares of the families in the initial catalog."""
    hourly_profile: tuple[float, ...] = DEFAULT_HOURLY_PROFILE
    """Relative traffic at the start of each local hour (24 values, local = ``timezone``)."""
    day_night_amplitude: float = Field(default=1.0, ge=0, le=3)
    """0 = flat traffic, 1 = the hourly profile as written, >1 exaggerates it."""
    steady_rate_ratio_median: float = Field(default=0.3, gt=0, le=0.9)
    """A steady video's current growth rate as a fraction of its lifetime average rate."""
    steady_rate_ratio_sigma: float = Field(default=1.0, ge=0, le=4)
    """Log-normal spread of that fraction (capped at 0.9)."""
    fresh_window: DurationMs = Field(default=duration_default("7d"), gt=0)
    """Fresh videos of the initial catalog were published within this before the start."""
    fresh_total_median: float = Field(default=800.0, gt=0)
    """Median views a fresh release gains from its launch burst (views)."""
    fresh_total_sigma: float = Field(default=1.6, ge=0, le=6)
    """Log-normal spread of the launch burst size."""
    fresh_half_median: DurationMs = Field(default=duration_default("10h"), gt=0)
    """Median time to gain half the launch burst, in traffic-weighted hours."""
    fresh_half_sigma: float = Field(default=0.5, ge=0, le=3)
    """Log-normal spread of that half-time."""
    fresh_tail_per_day: float = Field(default=0.002, ge=0, le=1)
    """Long-tail growth after the burst, as a fraction of the burst size per day."""
    viral_surge_median: float = Field(default=8_000.0, gt=0)
    """Median views added by a viral surge (views)."""
    viral_surge_sigma: float = Field(default=1.3, ge=0, le=6)
    """Log-normal spread of the surge size."""
    viral_rise_median: DurationMs = Field(default=duration_default("4h"), ge=360_000)
    """Median rise time of a surge (at least 6 minutes)."""
    viral_decay_median: DurationMs = Field(default=duration_default("36h"), ge=360_000)
    """Median decay time of a surge (at least 6 minutes)."""
    viral_width_sigma: float = Field(default=0.5, ge=0, le=2)
    """Log-normal spread of the rise and decay times."""
    approach_rate_min: float = Field(default=2.0, gt=0)
    """Slowest approacher (views per hour; rates are log-uniform between min and max)."""
    approach_rate_max: float = Field(default=5_000.0, gt=0)
    """Fastest approacher (views per hour)."""
    approach_gap_max: float = Field(default=0.1, gt=0, le=0.9)
    """At the start an approacher is at most this fraction of its milestone below it."""
    approach_targets: ApproachTargets = ApproachTargets()
    """Which milestone approachers are placed below."""
    approach_multi_max: int = Field(default=12, ge=2, le=10_000)
    """Largest N of an N x 1M target (N is log-uniform in 2..max)."""
    recount_steps_max: int = Field(default=3, ge=1, le=8)
    """A recounted video gets 1..max downward corrections during the run (count)."""
    recount_drop_median: float = Field(default=0.02, gt=0, le=1)
    """Median size of one correction as a fraction of the views at that instant."""
    recount_drop_sigma: float = Field(default=0.8, ge=0, le=4)
    """Log-normal spread of the correction size (capped at the whole count)."""

    @model_validator(mode="after")
    def _consistent(self) -> CurvesSection:
        _check_profile(self.hourly_profile, self.day_night_amplitude)
        if self.approach_rate_max < self.approach_rate_min:
            raise ValueError(
                "approach_rate_max must be >= approach_rate_min "
                f"(got {self.approach_rate_max:g} < {self.approach_rate_min:g})"
            )
        return self


class ArrivalsSection(Section):
    """``[arrivals]``: videos published during the run, found by ``getLatestVideos`` and
    labelled by ``classifyVideo`` (reference §13.1-13.2)."""

    per_day: float = Field(default=400.0, ge=0)
    """Mean number of new category-30 videos per day (Poisson; videos per day)."""
    hourly_profile: tuple[float, ...] = DEFAULT_HOURLY_PROFILE
    """Relative upload rate at the start of each local hour (24 values)."""
    day_night_amplitude: float = Field(default=0.7, ge=0, le=3)
    """0 = uploads uniform over the day, 1 = ``hourly_profile`` as written."""
    song_fraction: float = Field(default=0.35, ge=0, le=1)
    """Share of new videos the classifier labels as songs (label != 0) (fraction)."""
    viral_fraction: float = Field(default=0.01, ge=0, le=1)
    """Share of new videos that get a later surge on top of the launch burst (fraction)."""
    discovery_delay_mean: DurationMs = Field(default=duration_default("90s"), ge=0)
    """Mean delay from publication to discovery in the newlist (exponential)."""
    classification_delay_median: DurationMs = Field(default=duration_default("4m"), ge=0)
    """Median delay from discovery to the classifier's label (log-normal)."""
    classification_delay_sigma: float = Field(default=0.6, ge=0, le=3)
    """Log-normal spread of the classification delay."""

    @model_validator(mode="after")
    def _consistent(self) -> ArrivalsSection:
        _check_profile(self.hourly_profile, self.day_night_amplitude)
        return self
