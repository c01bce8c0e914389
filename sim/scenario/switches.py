"""``[switches]``: per-scenario overrides of the design-vs-deployed switches.

Every key is optional; a missing key keeps the default of the scenario's ``profile``. The meaning,
defaults and citations of each switch live with the switches themselves (``sim.cvsa.profile``,
rendered in ``docs/profiles.md``); this table only validates what a scenario may write, so that
the scenario layer does not import the model layer. A test pins the two field lists together.

The design's numbers (the cap, the look-backs, the batch size, ...) are ``[design]`` keys
(:mod:`sim.scenario.design`); a scenario that writes one here is told where it moved.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import StrictBool, model_validator

from sim.scenario.types import Section

MOVED_TO_DESIGN = (
    "window_cap",
    "forward_search_windows",
    "backward_search_windows",
    "single_tick_lookback_ms",
    "bulk_tick_lookback_ms",
    "bulk_batch_size",
    "archive_bulk_priority",
    "new_speed_floor_after_ms",
    "window_refresh_every_ms",
)
"""Numbers that were switches before every number of the design became a ``[design]`` key."""


class SwitchOverrides(Section):
    """``[switches]``: unset (None) keeps the profile's value; see ``docs/profiles.md``."""

    @model_validator(mode="before")
    @classmethod
    def _moved(cls, data: Any) -> Any:
        moved = [k for k in MOVED_TO_DESIGN if isinstance(data, dict) and k in data]
        if moved:
            raise ValueError(
                f"{moved[0]} is a number of the design: write it as design.{moved[0]} "
                f"(got switches.{moved[0]} = {data[moved[0]]!r})"
            )
        return data

    fallback_bare_window_start: StrictBool | None = None
    single_tick_takes_archive: StrictBool | None = None
    bulk_aids_as_ids_bug: StrictBool | None = None
    new_successors_forced: StrictBool | None = None
    new_stop_at_bounds: StrictBool | None = None
    collect_songs_fallback: StrictBool | None = None
    piecewise_factor: StrictBool | None = None
    wide_milestone_candidates: StrictBool | None = None
    milestone_reeta_clamped: StrictBool | None = None
    milestone_move_processing: StrictBool | None = None
    milestone_reached_strict: StrictBool | None = None
    regular_target_from_last_snapshot: StrictBool | None = None
    bulk_reschedules_normal: StrictBool | None = None
    dispatch_time_caps: StrictBool | None = None
    dispatcher_locks: StrictBool | None = None
    lock_release_bug: StrictBool | None = None
    archive_keeps_time_of_day: StrictBool | None = None
    bulk_failure_archive_to_normal: StrictBool | None = None
    cleanup_decrements: StrictBool | None = None
    bili_error_blocks_aid: StrictBool | None = None
    retry_policy: Literal["backoff", "cvsa"] | None = None

    def as_overrides(self) -> dict[str, object]:
        """The switches this table sets, by name (none-words kept as written)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}

    def values(self) -> dict[str, object]:
        """The switches this table sets, as :func:`sim.cvsa.profile.resolve` takes them."""
        return self.as_overrides()
