"""How event kinds are declared, and the registry the log format is built from.

An event kind is a ``NamedTuple`` whose fields are all ``int`` (times in epoch ms, ids, counts,
and enum codes for words such as a schedule type). Every record starts with ``seq`` (its position
in the run's log) and ``t_ms`` (the virtual time it happened). Keeping every field an integer lets
the log store events as int64 columns: compact, fast to hash, and ready for numpy reducers.

Kinds are registered with a fixed numeric code by :func:`event`; the codes and field lists are
part of the on-disk format and of the fingerprint (docs/event-log-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, get_type_hints

T = TypeVar("T", bound=tuple[Any, ...])

HEAD_FIELDS = ("seq", "t_ms")


@dataclass(frozen=True)
class EventKind:
    """One registered kind: its code, name, fields (after ``seq`` and ``t_ms``) and record type."""

    code: int
    name: str
    fields: tuple[str, ...]
    record: type[tuple[Any, ...]]
    doc: str

    @property
    def width(self) -> int:
        """Columns per row, counting ``seq`` and ``t_ms``."""
        return len(self.fields) + 2


KINDS: dict[int, EventKind] = {}
BY_RECORD: dict[type, EventKind] = {}
BY_NAME: dict[str, EventKind] = {}


def event(code: int) -> Any:
    """Class decorator: register a ``NamedTuple`` record type under ``code``."""

    def register(cls: type[T]) -> type[T]:
        names: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
        if names[:2] != HEAD_FIELDS:
            raise TypeError(f"{cls.__name__}: the first fields must be {HEAD_FIELDS}")
        hints = get_type_hints(cls)
        bad = [n for n in names if hints.get(n) is not int]
        if bad:
            raise TypeError(f"{cls.__name__}: every field must be int (not: {', '.join(bad)})")
        if code in KINDS:
            raise ValueError(f"event code {code} is used by {KINDS[code].name} and {cls.__name__}")
        if cls.__name__ in BY_NAME:
            raise ValueError(f"event name {cls.__name__} is used twice")
        kind = EventKind(code, cls.__name__, names[2:], cls, (cls.__doc__ or "").strip())
        KINDS[code] = kind
        BY_RECORD[cls] = kind
        BY_NAME[kind.name] = kind
        return cls

    return register


def kind_of(record_type: type) -> EventKind:
    """The registered kind of a record type."""
    return BY_RECORD[record_type]


class Enum(NamedTuple):
    """A small integer code table for words stored in int fields (e.g. schedule types)."""

    name: str
    words: tuple[str, ...]

    def code(self, word: str) -> int:
        return self.words.index(word)

    def word(self, code: int) -> str:
        return self.words[code]

    def codes(self) -> dict[str, int]:
        """Word -> code, for hot paths: :meth:`code` is an interpreted call (this module is not
        compiled) and a list search; callers keep the dict as a module constant."""
        return {word: i for i, word in enumerate(self.words)}


ENUMS: dict[str, Enum] = {}


def enum(name: str, *words: str) -> Enum:
    """Declare an enum whose table is written into every log header."""
    if name in ENUMS:
        raise ValueError(f"enum {name} declared twice")
    e = Enum(name, words)
    ENUMS[name] = e
    return e
