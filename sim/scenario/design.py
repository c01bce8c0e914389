"""``[design]``: any number of the design, overriding the scenario's profile.

The keys are the fields of :class:`sim.cvsa.params.Params` (the six periods, the look-aheads and
look-backs, the LIMITs, the window length and cap, the search windows, the priorities, the
milestone ladder, clamps, thresholds and factor, the interval tables, the new-song offsets and
stop rule, the archive calendar, the retry delays), so the table is built from that class: a
field added to the rule book is a key here, with its meaning, at once. Unset keys keep the
profile's value (``docs/profiles.md`` lists both profiles'); a scenario that sets none runs as
before, byte for byte. Types are checked here; the ranges and cross-field rules (a window
length divides a day, a clamp's min is below its max, interval thresholds ascend) are the rule
book's (:func:`sim.cvsa.param_rules.check_params`), checked against the profile's values by the
scenario. A group of numbers (``milestone_factor``, ``milestone_ladder``) is a sub-table whose
keys each keep the profile's value when unset.

Keys ending in ``_ms`` take a duration (``"90s"``, ``"2h"``) or an integer number of
**milliseconds** (the unit is in the name; unlike other scenario durations a bare number is not
seconds); the look-backs take ``"unbounded"`` and the window
refresh ``"never"`` for "no value". The worker concurrency is ``scheduler.snapshot_concurrency``
(a deployment's number, not the rule book's).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, PlainValidator, StrictInt, create_model

from sim.cvsa.params import DESIGN_PARAMS, Params
from sim.cvsa.profile import params_of
from sim.scenario.types import Section
from sim.units import DurationError, format_duration_ms, parse_duration_ms

NONE_WORDS: dict[str, str] = {
    "single_tick_lookback_ms": "unbounded",
    "bulk_tick_lookback_ms": "unbounded",
    "window_refresh_every_ms": "never",
}
"""The word a scenario writes for a number whose value is None (TOML has no null)."""


def _ms(word: str | None, minimum: int) -> PlainValidator:
    """A validator for a millisecond key: a duration string, an int of ms, or ``word``."""
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


# PlainValidator (not a union) keeps error locations to the bare key: "design.x must be ...".
LookbackMs = Annotated[int | Literal["unbounded"], _ms("unbounded", 1)]
RefreshMs = Annotated[int | Literal["never"], _ms("never", 1)]
DelayMs = Annotated[int, _ms(None, 0)]


Number = Annotated[float, Field(allow_inf_nan=False)]


class _GroupOverrides(Section):
    """A sub-table over a group of numbers (``[design.milestone_factor]``,
    ``[design.milestone_ladder]``): each key unset keeps the profile's."""

    def merged(self, default: Any) -> Any:
        """``default`` (a named tuple) with the numbers this table sets."""
        return default._replace(**{k: v for k, v in self.model_dump().items() if v is not None})


def _group_table(name: str, default: Any) -> type[_GroupOverrides]:
    """The sub-table of a named tuple of numbers, its keys typed by the profile's values."""
    fields: dict[str, Any] = {
        key: ((StrictInt if isinstance(value, int) else Number) | None, None)
        for key, value in zip(default._fields, default, strict=True)
    }
    model: type[_GroupOverrides] = create_model(
        f"{type(default).__name__}Overrides", __base__=_GroupOverrides, **fields
    )
    model.__doc__ = f"``[design.{name}]``: {type(default).__doc__}"
    return model


def _key_type(name: str, default: object) -> Any:
    """The scenario type of a :class:`Params` field, from its name and the profile's value (the
    compiled class keeps no annotations to read, sim._native): ``_ms`` is a duration, a
    ``_bands`` table maps a rate to hours, a ``_ladder`` a rate to a duration."""
    if name in NONE_WORDS:
        return LookbackMs if NONE_WORDS[name] == "unbounded" else RefreshMs
    if isinstance(default, tuple) and hasattr(default, "_fields"):
        return _group_table(name, default)
    if isinstance(default, tuple):
        if name.endswith("_bands"):
            return list[tuple[Number, StrictInt]]
        if name.endswith("_ladder"):
            return list[tuple[Number, DelayMs]]
        if name.endswith("_ms"):
            return list[DelayMs]
    elif isinstance(default, int) and not isinstance(default, bool):
        return DelayMs if name.endswith("_ms") else StrictInt
    elif isinstance(default, float):
        return Number
    raise TypeError(f"Params.{name}: no scenario type for {default!r}")


def _build() -> type[Section]:
    fields: dict[str, Any] = {
        f.name: (
            _key_type(f.name, getattr(DESIGN_PARAMS, f.name)) | None,
            Field(default=None, description=f"{f.metadata['doc']} ({f.metadata['cite']})"),
        )
        for f in dataclasses.fields(Params)
    }
    return create_model(
        "DesignOverrides",
        __base__=_DesignBase,
        __doc__="``[design]``: unset (None) keeps the profile's number; see docs/profiles.md.",
        **fields,
    )


class _DesignBase(Section):
    def values(self, profile: str) -> dict[str, object]:
        """The numbers this table sets, as :func:`sim.cvsa.profile.params_of` takes them for
        ``profile``: lists as tuples, a none-word as None, a sub-table's numbers merged over
        the profile's group."""
        out: dict[str, object] = {}
        for name, value in self:
            if value is None:
                continue
            if isinstance(value, list):
                value = tuple(tuple(v) if isinstance(v, list | tuple) else v for v in value)
            elif isinstance(value, _GroupOverrides):
                value = value.merged(getattr(params_of(profile), name))
            elif NONE_WORDS.get(name) == value:
                value = None
            out[name] = value
        return out

    def params(self, profile: str) -> Params:
        """The run's numbers: ``profile``'s with this table's overrides.

        Raises:
            InvalidParams: when the combination breaks a rule of the book; the scenario reports
                it as ``design.<key> <rule> (got <value>)``.
        """
        return params_of(profile, self.values(profile))


if TYPE_CHECKING:  # type checkers see the base; pydantic validates the generated model
    DesignOverrides = _DesignBase
else:
    DesignOverrides = _build()
    """The ``[design]`` table's model (fields: :class:`~sim.cvsa.params.Params`'s)."""


def show_param(name: str, value: object) -> str:
    """A number of the design as a scenario writes it (durations with units, none-words)."""
    if value is None:
        return f'"{NONE_WORDS[name]}"'
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        pairs = zip(value._fields, value, strict=True)
        return "{" + ", ".join(f"{k} = {v!r}" for k, v in pairs) + "}"
    if isinstance(value, tuple) and name.endswith("_ladder"):  # (rate, duration) pairs
        return "[" + ", ".join(f"[{a!r}, {show_param('_ms', b)}]" for a, b in value) + "]"
    if isinstance(value, tuple):
        return "[" + ", ".join(show_param(name, v) for v in value) + "]"
    if name.endswith("_ms") and isinstance(value, int) and value:
        return f'"{format_duration_ms(value)}"'
    return repr(value)
