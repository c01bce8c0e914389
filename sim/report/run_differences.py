"""How two runs differ besides their metrics: what ``sim compare`` warns about before its table.

A comparison tells the truth only when the reader knows what was compared: two runs of different
scenarios, lengths or seeds, or a run cut short by Ctrl-C, differ in their metrics for reasons
other than the change under study. Each difference is one line, ``the runs differ in seed: 1 (A)
and 2 (B)``, read from each run's ``manifest.json`` and ``scenario.json``:

* the scenario's name;
* each setting of the scenario that differs (``design.window_cap: 1000 (A) and 2000 (B)``; the
  ``[expect]`` gates are left out, they judge a run and do not change it), up to
  :data:`MAX_SETTINGS` of them;
* the simulated duration, the seed;
* completeness: a partial run (interrupted) against a whole one, or two partial runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim.metrics.findings.verdicts import duration
from sim.report.run_files import SCENARIO_FILE
from sim.units import SECOND_MS

MAX_SETTINGS = 8
"""Settings named one a line; more are counted in one last line."""
_APART = ("name", "seed", "duration", "expect")
"""Keys of scenario.json said on their own line (or, for ``expect``, not at all)."""


def scenario_of(run_dir: Path) -> dict[str, Any] | None:
    """The run's ``scenario.json``, or None when it has none (an older run)."""
    path = run_dir / SCENARIO_FILE
    if not path.exists():
        return None
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _flat(doc: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(doc, dict):
        return {prefix: doc}
    out: dict[str, Any] = {}
    for key, value in doc.items():
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 40 else text[:39] + "…"


def _pair(what: str, a: Any, b: Any) -> str:
    return f"the runs differ in {what}: {_value(a)} (A) and {_value(b)} (B)"


def _span(manifest: dict[str, Any], scenario: dict[str, Any] | None) -> str | None:
    """The run's planned duration: the scenario's, else the manifest's simulated seconds."""
    if scenario is not None and isinstance(scenario.get("duration"), str):
        return str(scenario["duration"])
    seconds = manifest.get("simulated_seconds")
    return duration(seconds * SECOND_MS) if isinstance(seconds, int | float) else None


def run_differences(
    a: tuple[dict[str, Any], dict[str, Any] | None], b: tuple[dict[str, Any], dict[str, Any] | None]
) -> list[str]:
    """One line per difference between runs A and B, each given as (manifest, scenario.json or
    None); see the module docstring."""
    (man_a, sc_a), (man_b, sc_b) = a, b
    out = []
    if man_a.get("scenario") != man_b.get("scenario"):
        out.append(_pair("scenario", man_a.get("scenario"), man_b.get("scenario")))
    if sc_a is not None and sc_b is not None:
        flat_a = {k: v for k, v in _flat(sc_a).items() if k.split(".")[0] not in _APART}
        flat_b = {k: v for k, v in _flat(sc_b).items() if k.split(".")[0] not in _APART}
        keys = sorted(k for k in set(flat_a) | set(flat_b) if flat_a.get(k) != flat_b.get(k))
        out += [
            _pair(k, flat_a.get(k, "unset"), flat_b.get(k, "unset")) for k in keys[:MAX_SETTINGS]
        ]
        if len(keys) > MAX_SETTINGS:
            out.append(f"the runs differ in {len(keys) - MAX_SETTINGS} more settings")
    elif man_a.get("scenario_sha256") != man_b.get("scenario_sha256"):
        out.append("the runs differ in their scenarios' settings (scenario_sha256)")
    span_a, span_b = _span(man_a, sc_a), _span(man_b, sc_b)
    if span_a != span_b:
        out.append(_pair("duration", span_a, span_b))
    if man_a.get("seed") != man_b.get("seed"):
        out.append(_pair("seed", man_a.get("seed"), man_b.get("seed")))
    out += _completeness(man_a, man_b)
    return out


def _state(manifest: dict[str, Any]) -> str:
    if not manifest.get("partial"):
        return "complete"
    seconds = manifest.get("simulated_seconds")
    done = duration(seconds * SECOND_MS) if isinstance(seconds, int | float) else "?"
    return f"partial, interrupted after {done}"


def _completeness(man_a: dict[str, Any], man_b: dict[str, Any]) -> list[str]:
    state_a, state_b = _state(man_a), _state(man_b)
    if state_a == state_b == "complete":
        return []
    if man_a.get("partial") and man_b.get("partial"):
        return [f"both runs are partial: {state_a} (A) and {state_b} (B)"]
    return [_pair("completeness", state_a, state_b)]
