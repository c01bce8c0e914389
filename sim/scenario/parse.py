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
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import tomli
from pydantic import ValidationError

from sim.scenario.document import Scenario
from sim.scenario.messages import format_validation_error


class ScenarioError(ValueError):
    """The user's scenario (file or ``--set``) is wrong; ``problems`` lists every issue found."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


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
    text = read_scenario_text(path)
    return parse_scenario(text, source=str(path), overrides=overrides, seed=seed)


MAX_SCENARIO_BYTES = 64 * 2**20
"""A scenario is a page of TOML; anything this large is the wrong file (or ``/dev/zero``)."""


def read_scenario_text(path: Path) -> str:
    """The file's text, or a :class:`ScenarioError` that says in one line why it cannot be read
    (missing, a directory, unreadable, too large, not UTF-8: then the byte's offset and line)."""
    source = str(path)
    try:
        with path.open("rb") as f:
            data = f.read(MAX_SCENARIO_BYTES + 1)
    except FileNotFoundError:
        raise ScenarioError([f"{source}: no such scenario file"]) from None
    except IsADirectoryError:
        raise ScenarioError([f"{source}: is a directory, not a scenario file"]) from None
    except OSError as exc:
        raise ScenarioError([f"{source}: cannot read ({exc.strerror or exc})"]) from None
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            [f"{source}: larger than {MAX_SCENARIO_BYTES // 2**20} MiB: not a scenario file"]
        )
    bom = b"\xef\xbb\xbf"  # some editors start UTF-8 files with it
    skip = len(bom) if data.startswith(bom) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        line = data.count(b"\n", 0, offset) + 1
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        raise ScenarioError(
            [
                f"{source}:{line}: not UTF-8 text: byte 0x{data[offset]:02x} at offset {offset} "
                f"(column {column}) cannot be decoded; save the file as UTF-8"
            ]
        ) from None
    # As text-mode reading would: Windows and old-Mac line ends become "\n".
    return text.replace("\r\n", "\n").replace("\r", "\n")


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
        flags = {".".join(parse_override(s)[0]): f"--set {s}" for s in overrides}
        if seed is not None:
            flags["seed"] = "--seed"
        raise ScenarioError([_blame_flag(p, source, flags) for p in problems]) from None


def _blame_flag(problem: str, source: str, flags: Mapping[str, str]) -> str:
    """A problem with a value given by a flag names the flag, and not the file's line: that
    line holds the value the flag replaced."""
    m = re.match(rf"{re.escape(source)}(?::\d+)?: (.*)", problem)
    if not m:
        return problem
    for key, flag in flags.items():
        if m.group(1).startswith(f"{key} "):
            return f"{source}: {m.group(1)} [from {flag}]"
    return problem


def scenario_sha256(scenario: Scenario) -> str:
    """SHA-256 of the validated scenario in canonical JSON (comments and layout do not count)."""
    doc = scenario.model_dump(mode="json")
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()
