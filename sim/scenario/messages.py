"""Validation errors in ``sim``'s own words: ``file:line: key.path rule (got value)``.

pydantic reports each problem as a type (``greater_than``, ``union_tag_invalid``...) with its
context; this module turns every type our models can produce into a rule a person can act on,
listing the valid choices where there is a list (a fault's ``kind``, a profile, a backend). None
of pydantic's own sentences ("Input tag 'meteor' found using 'kind' does not match...") reach a
user: a type not translated here still reads as a rule, not as the library's wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

# pydantic names the member of a union that failed as an extra location part ("int",
# "literal['never']", "function-after[...]"); no field of a scenario has such a name.
_UNION_MEMBER = re.compile(
    r"(int|float|str|bool|bytes|none|list|tuple|dict|set|frozenset|decimal|model"
    r"|constrained-[a-z]+|[a-z-]+\[.*\])"
)

_PATTERN_WORDS: dict[str, str] = {
    r"^[A-Za-z0-9_.-]+$": "must use only letters, digits, '_', '.' and '-' (it names a directory)",
    r"^[a-z_][a-z0-9_]*$": "must be a lower-case SQL name: letters, digits and '_', not "
    "starting with a digit",
    r"^(memory|reference|sqlite:.+|postgres(ql)?://.+)$": "must be one of memory, reference, "
    "sqlite:PATH or postgresql://USER@HOST:PORT/DB",
    r"^(memory|reference|fakeredis|rediss?://.+|unix://.+)$": "must be one of memory, reference, "
    "fakeredis or redis://HOST:PORT/DB",
}
"""Each ``pattern=`` of the scenario models, said in words (a new pattern falls back to the
regular expression itself, which is still a rule)."""


def format_path(loc: Iterable[Any]) -> str:
    """``("faults", 0, "kind")`` -> ``faults[0].kind`` (union members and key markers dropped)."""
    out = ""
    for part in loc:
        if part == "[key]":  # pydantic's marker for an invalid mapping key: the key is the path
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _UNION_MEMBER.fullmatch(str(part)):
            out += ("." if out else "") + str(part)
    return out


def _choices(expected: str) -> str:
    """pydantic's ``"'a', 'b' or 'c'"`` as ``'a', 'b', 'c'``."""
    return expected.replace(" or ", ", ")


def rule_of(err: Mapping[str, Any]) -> str:
    """The rule one pydantic error breaks, in sim's words ("must be > 0")."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    simple: dict[str, Callable[[], str]] = {
        "greater_than": lambda: f"must be > {ctx['gt']}",
        "greater_than_equal": lambda: f"must be >= {ctx['ge']}",
        "less_than": lambda: f"must be < {ctx['lt']}",
        "less_than_equal": lambda: f"must be <= {ctx['le']}",
        "multiple_of": lambda: f"must be a multiple of {ctx['multiple_of']}",
        "finite_number": lambda: "must be a finite number (not nan or inf)",
        "missing": lambda: "is required",
        "int_type": lambda: "must be an integer",
        "int_parsing": lambda: "must be an integer",
        "int_parsing_size": lambda: "is too large a number",
        "int_from_float": lambda: "must be a whole number",
        "float_type": lambda: "must be a number",
        "float_parsing": lambda: "must be a number",
        "bool_type": lambda: "must be true or false",
        "bool_parsing": lambda: "must be true or false",
        "string_type": lambda: "must be a string",
        "string_unicode": lambda: "must be a string",
        "string_not_ascii": lambda: "must be ASCII text",
        "string_too_short": lambda: (
            "must not be empty"
            if ctx.get("min_length") == 1
            else f"must have at least {ctx.get('min_length')} characters"
        ),
        "string_too_long": lambda: f"must have at most {ctx.get('max_length')} characters",
        "string_pattern_mismatch": lambda: _PATTERN_WORDS.get(
            str(ctx.get("pattern")), f"must match the pattern {ctx.get('pattern')}"
        ),
        "literal_error": lambda: f"must be one of {_choices(str(ctx.get('expected', '')))}",
        "enum": lambda: f"must be one of {_choices(str(ctx.get('expected', '')))}",
        "union_tag_invalid": lambda: (
            f"must be one of {ctx.get('expected_tags', '')} (got {ctx.get('tag')!r})"
        ),
        "none_required": lambda: "must not be set",
        "too_short": lambda: f"must have at least {ctx.get('min_length')} item(s)",
        "too_long": lambda: f"must have at most {ctx.get('max_length')} item(s)",
        "value_error": lambda: str(ctx.get("error", err["msg"])).removeprefix("Value error, "),
        "assertion_error": lambda: str(ctx.get("error", "")).removeprefix("Assertion failed, "),
    }
    if kind in simple:
        return simple[kind]()
    for words, kinds in _SHAPES.items():
        if kind in kinds:
            return words
    # A type none of our models produces today: still a rule, named after the type.
    return f"is not valid ({kind.replace('_', ' ')})"


_SHAPES: dict[str, frozenset[str]] = {
    "must be a list": frozenset(
        {"list_type", "tuple_type", "set_type", "frozen_set_type", "iterable_type", "deque_type"}
    ),
    "must be a table": frozenset(
        {
            "dict_type",
            "mapping_type",
            "model_type",
            "model_attributes_type",
            "dataclass_type",
            "dataclass_exact_type",
            "frozen_dict_type",
            "ordered_dict_type",
        }
    ),
    "must not be a list or table here": frozenset({"set_item_not_hashable", "invalid_key"}),
}


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model of the table at ``loc`` (skipping list indices)."""
    from sim.scenario.document import Scenario

    model: type[BaseModel] | None = Scenario
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            by_alias = [f for f in model.model_fields.values() if f.alias == part]
            field = by_alias[0] if by_alias else None
        if field is None:
            return None
        model = _first_model(field.annotation)
    return model


def _first_model(ann: Any) -> type[BaseModel] | None:
    for candidate in (ann, *_members(ann)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _members(ann: Any) -> list[Any]:
    """The types inside ``ann`` (list[X], X | Y, Annotated[X | Y, ...]), flattened."""
    out: list[Any] = []
    for arg in get_args(ann):
        out.append(arg)
        out.extend(_members(arg))
    return out


def known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys accepted by the table holding the key at ``loc`` (for "unknown key" errors)."""
    model = _model_at(loc[:-1])
    if model is None:
        return []
    return sorted(f.alias or name for name, f in model.model_fields.items())


def tags_at(loc: tuple[Any, ...], discriminator: str) -> list[str]:
    """The values ``discriminator`` may take in the tagged list at ``loc`` (a fault's kinds)."""
    from sim.scenario.document import Scenario

    field = Scenario.model_fields.get(str(loc[0])) if loc else None
    if field is None:
        return []
    tags: list[str] = []
    for member in _members(field.annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            tag_field = member.model_fields.get(discriminator)
            if tag_field is not None and get_origin(tag_field.annotation) is Literal:
                tags.extend(str(t) for t in get_args(tag_field.annotation))
    return tags


def _drop_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """pydantic puts the tag of a tagged union's member after the list index
    (``faults[0].clock_skew.skew``); the user wrote ``faults[0].skew``."""
    if len(loc) < 3 or not isinstance(loc[1], int):
        return loc
    if str(loc[2]) in tags_at(loc, "kind"):
        return (*loc[:2], *loc[3:])
    return loc


def show_value(value: Any) -> str:
    """A value as the user wrote it, cut to 60 characters."""
    if isinstance(value, dict):
        return "a table"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def format_validation_error(
    source: str, exc: ValidationError, lines: Mapping[str, int]
) -> list[str]:
    """One line per problem: ``file:line: key.path rule (got value)``."""
    out: list[str] = []
    seen: set[str] = set()
    for err in exc.errors():
        loc = _drop_tags(tuple(err["loc"]))
        path = format_path(loc)
        kind = err["type"]
        if kind == "extra_forbidden":
            known = known_keys(loc)
            hint = f" (known keys: {', '.join(known)})" if known else ""
            where = f":{lines[path]}" if path in lines else ""
            out.append(f"{source}{where}: {path} is not a known key{hint}")
            continue
        rule = rule_of(err)
        got: str | None = show_value(err.get("input"))
        if kind in ("union_tag_invalid", "union_tag_not_found"):
            discriminator = str((err.get("ctx") or {}).get("discriminator", "kind")).strip("'\"")
            path = f"{path}.{discriminator}"
            tags = ", ".join(repr(t) for t in tags_at(loc, discriminator))
            rule = rule if kind == "union_tag_invalid" else f"is required: one of {tags}"
            got = None
        elif kind == "missing":
            got = None
        elif kind in ("value_error", "assertion_error"):
            path, rule = _blame_field(path, rule)
            # A cross-field validator knows the telling value (a sum, a bound) and states it
            # itself; a whole table is no value to show.
            if "(got " in rule or isinstance(err.get("input"), dict):
                got = None
        if loc and _UNION_MEMBER.fullmatch(str(loc[-1])):
            # A union fails once per member: the first member's rule stands for the key's.
            if path in seen:
                continue
            seen.add(path)
        line = _line_for(path, lines)
        where = f":{line}" if line else ""
        shown = f" (got {got})" if got is not None else ""
        out.append(f"{source}{where}: {path + ' ' if path else ''}{rule}{shown}")
    return out


def _blame_field(path: str, rule: str) -> tuple[str, str]:
    """A table-level validator names the key it blames first ("amplitude must ..."): move that
    key into the path, so the message reads ``curves.amplitude must ...`` and finds its line."""
    m = re.match(r"([a-z_][a-z0-9_.]*(?:\[\d+\])?(?:\.[a-z_][a-z0-9_]*)*) (?=must |is )", rule)
    if not m:
        return path, rule
    return (f"{path}.{m.group(1)}" if path else m.group(1)), rule[m.end() :]


def _line_for(path: str, lines: Mapping[str, int]) -> int | None:
    """The line of ``path``, else of its first sub-key (a table written as dotted keys), else
    of the nearest enclosing table."""
    children = [n for key, n in lines.items() if key.startswith(path + ".")]
    if path not in lines and children:
        return min(children)
    probe = path
    while probe:
        if probe in lines:
            return lines[probe]
        cut = max(probe.rfind("."), probe.rfind("["))
        probe = probe[:cut] if cut > 0 else ""
    return None


__all__ = ["format_path", "format_validation_error", "known_keys", "rule_of"]
