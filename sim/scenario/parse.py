"""Reading scenario files: TOML -> overrides -> validation, with errors a person can act on.

Every error names the file, the line when it can be found, the key path, the rule and the value,
attrs/pydantic style (README "Design rules" 5)::

    scenarios/x.toml:12: scheduler.window_cap must be > 0 (got 0)

Validation happens once, here; a broken file never produces a partial run. Nothing else in
``sim`` reads TOML or handles raw dicts: the engine takes the validated :class:`Scenario`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import tomli
from pydantic import ValidationError

from sim.scenario.document import Scenario


class ScenarioError(ValueError):
    """The user's scenario (file or ``--set``) is wrong; ``problems`` lists every issue found."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def _format_path(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if part == "[key]":  # pydantic's marker for an invalid mapping key: the key is the path
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def locate_keys(text: str) -> dict[str, int]:
    """Map each key path of a TOML document to its 1-based line (tables, arrays of tables,
    dotted keys). No maintained TOML library keeps positions (libraries.md §2), hence this scan."""
    lines: dict[str, int] = {}
    prefix = ""
    array_counts: dict[str, int] = {}
    in_multiline: str | None = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if in_multiline:
            if in_multiline in line:
                in_multiline = None
            continue
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[\[\s*([^\]]+?)\s*\]\]\s*(#.*)?", line)
        if m:
            name = _unquote_path(m.group(1))
            idx = array_counts.get(name, 0)
            array_counts[name] = idx + 1
            prefix = f"{name}[{idx}]"
            lines.setdefault(prefix, n)
            continue
        m = re.fullmatch(r"\[\s*([^\]]+?)\s*\]\s*(#.*)?", line)
        if m:
            prefix = _unquote_path(m.group(1))
            lines.setdefault(prefix, n)
            continue
        m = re.match(
            r"""((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""",
            line,
        )
        if m:
            key = _unquote_path(m.group(1))
            path = f"{prefix}.{key}" if prefix else key
            lines.setdefault(path, n)
            rest = line[m.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) == 1:
                    in_multiline = quote
    return lines


def _unquote_path(text: str) -> str:
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', text)
    return ".".join(a or b or c for a, b, c in parts)


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


def _rule(err: Mapping[str, Any]) -> str:
    """An attrs-style rule for one pydantic error ("must be > 0")."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    simple: dict[str, Callable[[], str]] = {
        "greater_than": lambda: f"must be > {ctx['gt']}",
        "greater_than_equal": lambda: f"must be >= {ctx['ge']}",
        "less_than": lambda: f"must be < {ctx['lt']}",
        "less_than_equal": lambda: f"must be <= {ctx['le']}",
        "missing": lambda: "is required",
        "int_type": lambda: "must be an integer",
        "int_parsing": lambda: "must be an integer",
        "int_from_float": lambda: "must be a whole number",
        "float_type": lambda: "must be a number",
        "float_parsing": lambda: "must be a number",
        "bool_type": lambda: "must be true or false",
        "bool_parsing": lambda: "must be true or false",
        "string_type": lambda: "must be a string",
        "literal_error": lambda: f"must be one of {ctx.get('expected', '')}",
        "list_type": lambda: "must be a list",
        "dict_type": lambda: "must be a table",
        "model_type": lambda: "must be a table",
        "too_short": lambda: f"must have at least {ctx.get('min_length')} item(s)",
        "too_long": lambda: f"must have at most {ctx.get('max_length')} item(s)",
    }
    if kind in simple:
        return simple[kind]()
    if kind == "value_error":
        return str(ctx.get("error", err["msg"])).removeprefix("Value error, ")
    return str(err["msg"]).removeprefix("Value error, ")


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys accepted by the table at ``loc`` (for "unknown key" errors)."""
    from pydantic import BaseModel

    model: Any = Scenario
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        args = getattr(ann, "__args__", ()) or ()
        candidates = [ann, *args]
        model = next(
            (c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None
        )
        if model is None:
            return []
    fields = getattr(model, "model_fields", {})
    return sorted(f.alias or name for name, f in fields.items())


def format_validation_error(
    source: str, exc: ValidationError, lines: Mapping[str, int]
) -> list[str]:
    """One line per problem: ``file:line: key.path rule (got value)``."""
    out = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = _format_path(loc)
        if err["type"] == "extra_forbidden":
            known = _known_keys(loc)
            hint = f" (known keys: {', '.join(known)})" if known else ""
            where = f":{lines[path]}" if path in lines else ""
            out.append(f"{source}{where}: {path} is not a known key{hint}")
            continue
        rule = _rule(err)
        if err["type"] == "value_error":
            path, rule = _blame_field(path, rule)
        line = _line_for(path, lines)
        where = f":{line}" if line else ""
        # A cross-field validator knows the telling value (a sum, a bound) and states it itself.
        stated = err["type"] == "value_error" and "(got " in rule
        got = "" if err["type"] == "missing" or stated else f" (got {_show(err.get('input'))})"
        out.append(f"{source}{where}: {path + ' ' if path else ''}{rule}{got}")
    return out


def _blame_field(path: str, rule: str) -> tuple[str, str]:
    """A table-level validator names the key it blames first ("amplitude must ..."): move that
    key into the path, so the message reads ``curves.amplitude must ...`` and finds its line."""
    m = re.match(r"([a-z_][a-z0-9_.]*) (?=must |is )", rule)
    if not m:
        return path, rule
    return (f"{path}.{m.group(1)}" if path else m.group(1)), rule[m.end() :]


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_override(spec: str) -> tuple[tuple[str, ...], Any]:
    """``"a.b=3000"`` -> ``(("a", "b"), 3000)``. The key is a TOML key, so a segment with dots can
    be quoted (``expect."lateness.new.p99_s"="< 5"``); the value is read as TOML, else as text."""
    key, sep, raw = spec.partition("=")
    if not sep:
        raise ScenarioError([f"--set {spec}: expected key.path=value"])
    try:
        node: Any = tomli.loads(f"{key.strip()} = 0")
    except tomli.TOMLDecodeError:
        raise ScenarioError(
            [f"--set {spec}: {key.strip()!r} is not a key path such as design.window_cap"]
        ) from None
    parts: list[str] = []
    while isinstance(node, dict):
        ((name, node),) = node.items()
        parts.append(name)
    try:
        value = tomli.loads(f"v = {raw.strip()}")["v"]
    except tomli.TOMLDecodeError:
        value = raw.strip()
    return tuple(parts), value


def apply_overrides(doc: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Set each ``key.path=value`` into the raw document (tables are created as needed)."""
    for spec in overrides:
        parts, value = parse_override(spec)
        node = doc
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ScenarioError([f"--set {spec}: {part} is not a table"])
            node = child
        node[parts[-1]] = value
    return doc


def load_scenario(
    path: str | Path, *, overrides: Iterable[str] = (), seed: int | None = None
) -> Scenario:
    """Read, override and validate a scenario file; raise :class:`ScenarioError` on any problem."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError([f"{source}: no such scenario file"]) from None
    except OSError as exc:
        raise ScenarioError([f"{source}: cannot read ({exc.strerror})"]) from None
    return parse_scenario(text, source=source, overrides=overrides, seed=seed)


def parse_scenario(
    text: str, *, source: str = "<scenario>", overrides: Iterable[str] = (), seed: int | None = None
) -> Scenario:
    """Validate scenario text (see :func:`load_scenario`)."""
    try:
        doc = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        where = f":{exc.lineno}" if getattr(exc, "lineno", None) else ""
        raise ScenarioError([f"{source}{where}: not valid TOML: {exc.msg}"]) from None
    overrides = list(overrides)
    doc = apply_overrides(doc, overrides)
    if seed is not None:
        doc["seed"] = seed
    lines = locate_keys(text)
    try:
        return Scenario.model_validate(doc)
    except ValidationError as exc:
        problems = format_validation_error(source, exc, lines)
        set_keys = {".".join(parse_override(s)[0]): s for s in overrides}
        problems = [_blame_override(p, set_keys) for p in problems]
        raise ScenarioError(problems) from None


def _blame_override(problem: str, set_keys: Mapping[str, str]) -> str:
    for key, spec in set_keys.items():
        if f": {key} " in problem:
            return f"{problem} [from --set {spec}]"
    return problem


def scenario_sha256(scenario: Scenario) -> str:
    """SHA-256 of the validated scenario in canonical JSON (comments and layout do not count)."""
    doc = scenario.model_dump(mode="json")
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()
