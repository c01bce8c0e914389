"""A parameter grid over a scenario (``sim sweep``): ``--set`` values split into axes, and the
cartesian product of their values, each point a list of ``--set`` overrides.

``--set design.window_cap=1000,2000,3000 --set arrivals.per_day=200,400`` is a grid of six
points (the first key varies slowest); a ``--set`` with one value applies to every point. Values
are TOML, split at top-level commas (``scheduler.history=["1d","0ms"]`` is one value).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sim.scenario.parse import parse_override


@dataclass(frozen=True)
class Axis:
    """One swept key and its values (TOML text, as given)."""

    key: str
    values: tuple[str, ...]


def split_values(raw: str) -> list[str]:
    """Split ``raw`` at commas outside brackets, braces and quotes."""
    parts, depth, quote, current = [], 0, "", ""
    for ch in raw:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    parts.append(current.strip())
    return parts


def parse_sets(specs: Sequence[str]) -> tuple[list[Axis], list[str]]:
    """``--set`` specs -> (swept axes, fixed overrides). Raises ``ValueError`` on a bad spec."""
    axes: list[Axis] = []
    fixed: list[str] = []
    for spec in specs:
        key, sep, raw = spec.partition("=")
        if not sep:
            raise ValueError(f"--set {spec}: expected key.path=value[,value...]")
        values = split_values(raw)
        if any(not v for v in values):
            raise ValueError(f"--set {spec}: an empty value")
        if len(values) == 1:
            fixed.append(spec)
        else:
            name = ".".join(parse_override(f"{key}=0")[0])
            if any(a.key == name for a in axes):
                raise ValueError(f"--set {spec}: {name} is swept twice")
            axes.append(Axis(name, tuple(values)))
    return axes, fixed


def grid(axes: Sequence[Axis]) -> list[dict[str, str]]:
    """Every point of the grid, the first axis varying slowest."""
    return [
        dict(zip([a.key for a in axes], combo, strict=True))
        for combo in itertools.product(*(a.values for a in axes))
    ]


def point_overrides(fixed: Sequence[str], point: dict[str, str]) -> list[str]:
    """The ``--set`` overrides of one point: the fixed ones, then the point's values."""
    return [*fixed, *(f"{k}={v}" for k, v in point.items())]


def point_label(index: int, point: dict[str, str], width: int) -> str:
    """``03_window_cap=2000``: a directory name for a point (index first, so names are unique)."""
    body = ",".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in point.items())
    return f"{index:0{width}d}_" + re.sub(r"[^A-Za-z0-9_.,=+-]", "_", body)[:80]


def point_labels(points: Sequence[dict[str, str]]) -> list[str]:
    """Every point's label, the indexes zero-padded to one width."""
    width = len(str(max(len(points) - 1, 0)))
    return [point_label(i, p, width) for i, p in enumerate(points)]


def parse_seeds(text: str) -> list[int]:
    """``"1-20"``, ``"1,2,5"`` or ``"1-5,9"`` -> the seeds, in the order given, each once.
    Raises ``ValueError`` saying what is accepted."""
    seeds: list[int] = []
    seen: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise ValueError(f"must be seeds such as 1-20 or 1,2,5 (got {text!r})")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if hi < lo:
            raise ValueError(f"must give a range low first, such as 1-20 (got {part!r})")
        if hi >= 2**63:
            raise ValueError(f"must be seeds below 2^63 (got {part!r})")
        if hi - lo >= 10_000:
            raise ValueError(f"must be at most 10,000 seeds (got {part!r})")
        for seed in range(lo, hi + 1):
            if seed not in seen:
                seen.add(seed)
                seeds.append(seed)
    return seeds
