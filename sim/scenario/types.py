"""Field types shared by every scenario section: durations, instants, offsets, the base model."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer

from sim.units import (
    SECOND_MS,
    format_duration_ms,
    parse_duration_ms,
    parse_instant_ms,
    parse_utc_offset_ms,
)


class Section(BaseModel):
    """Base of every scenario table: frozen, unknown keys rejected (a typo is an error)."""

    # Attribute docstrings become field descriptions: docs/scenario.md is generated from them.
    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_default=True, use_attribute_docstrings=True
    )


def _duration(value: Any) -> Any:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return parse_duration_ms(value)
    return value


DurationMs = Annotated[
    int,
    BeforeValidator(_duration),
    PlainSerializer(format_duration_ms, return_type=str, when_used="json"),
]
"""A duration written ``"90s"``, ``"5m"``, ``"1.2h"``, ``"7d"`` (a number means seconds); in ms."""


def duration_default(text: str) -> Any:
    """A ``DurationMs`` default spelled as in a scenario file (``"7d"``, ``"250ms"``).

    ``Section`` validates defaults like input, and a bare number in a ``DurationMs`` field means
    seconds; so the default is handed over in seconds and the field holds ms as usual.
    """
    ms = parse_duration_ms(text)
    return ms // SECOND_MS if ms % SECOND_MS == 0 else ms / SECOND_MS


def _instant(value: Any) -> Any:
    return parse_instant_ms(value) if isinstance(value, str) else value


InstantMs = Annotated[int, BeforeValidator(_instant)]
"""An ISO 8601 instant with a UTC offset; held as epoch ms."""


def _offset(value: Any) -> Any:
    return parse_utc_offset_ms(value) if isinstance(value, str) else value


UtcOffsetMs = Annotated[int, BeforeValidator(_offset)]
"""A fixed UTC offset written ``"UTC+8"`` or ``"+08:00"``; held in ms."""
