"""``[switches]``: per-scenario overrides of the design-vs-deployed switches.

Every key is optional; a missing key keeps the default of the scenario's ``profile``. The meaning,
defaults and citations of each switch live with the switches themselves (``sim.cvsa.profile``,
rendered in ``docs/profiles.md``); this table only validates what a scenario may write, so that
the scenario layer does not import the model layer. A test pins the two field lists together.

The design's numbers (the cap, the look-backs, the batch size, ...) are ``[design]`` keys
(:mod:`sim.scenario.design`); a scenario that writes one here is told where it moved.

Keys ending in ``_ms`` take a duration string (``"90s"``, ``"2h"``) or an integer number of
**milliseconds** (the unit in the name; unlike other scenario durations a bare number is not
seconds). Switches whose profile value can be "no bound" take a word for it: ``"unbounded"`` for
the tick look-backs and ``"never"`` for the periodic window refresh.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import PlainValidator, StrictBool, model_validator

from sim.scenario.types import Section
from sim.units import DurationError, parse_duration_ms

NONE_WORDS: dict[str, str] = {
    "single_tick_lookback_ms": "unbounded",
    "bulk_tick_lookback_ms": "unbounded",
    "window_refresh_every_ms": "never",
}
"""The word a scenario writes for a switch whose value is None (TOML has no null)."""


def _ms(word: str | None, minimum: int) -> PlainValidator:
    """A validator for a millisecond switch: a duration string, an int of ms, or ``word``."""
    accepted = "a duration such as '90s' or '2h', or an integer number of milliseconds"
    if word is not None:
        accepted += f", or '{word}'"

    def check(value: Any) -> int | str:
        if isinstance(value, str):
            if word is not None and value.strip() == word:
                return word
            try:
                value = parse_duration_ms(value)
            except DurationError:
                raise ValueError(f"must be {accepted}") from None
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"must be {accepted}")
        if value < minimum:
            raise ValueError(f"must be >= {minimum} ms")
        return value

    return PlainValidator(check, json_schema_input_type=int | str)


# PlainValidator (not a union) keeps error locations to the bare key: "switches.x must be ...".
LookbackMs = Annotated[int | Literal["unbounded"], _ms("unbounded", 1)]
RefreshMs = Annotated[int | Literal["never"], _ms("never", 1)]
DelayMs = Annotated[int, _ms(None, 0)]


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
        """The switches this table sets, as :func:`sim.cvsa.profile.resolve` takes them: a
        none-word is None (durations are already milliseconds)."""
        return {k: None if NONE_WORDS.get(k) == v else v for k, v in self.as_overrides().items()}
