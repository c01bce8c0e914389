"""``report.html``: one self-contained page (no network) per run, rendered with Jinja2.

It holds the ``[expect]`` verdicts, every plot as a base64 PNG, every metric of ``summary.json``
grouped by the first part of its name (so a new reducer's metrics appear without a change here),
the run's identifying manifest fields and switches, and links to the CSV files. Wall-clock
fields of the manifest are left out: the page is byte-identical for the same scenario and seed.
"""

from __future__ import annotations

import base64
import json
from importlib import resources
from pathlib import Path
from typing import Any

from sim.report.tables import Table, write_atomic
from sim.scenario import Scenario
from sim.scenario.expect import evaluate

WALL_CLOCK_FIELDS = frozenset({"wall_seconds", "compression_ratio", "compiled"})
"""Manifest fields that depend on the machine or the install, never on the page."""
OPEN_GROUPS = frozenset(
    {"cleanup", "invariants", "lateness", "milestones", "snapshots", "upstream", "windows"}
)
"""Metric groups shown unfolded; the others start folded."""
TABLE_DOCS = {
    "windows": "per 5-min window: rows reserved and snapshots executed by type, peak counter",
    "snapshots_per_minute": "snapshots taken per minute by type",
    "lateness_hourly": "per local hour and type: count and p50/p90/p99/max of executed - due (s)",
    "cleanup_hourly": "rows deleted by scheduleCleanup per local hour and type",
    "upstream": "per 5 min, path and event: upstream requests, retries and failures",
    "queue_depth": "per minute and queue: the most jobs waiting and active",
    "milestones": "per milestone crossing: capture latency and bracket width (s)",
}
OTHER_FILES = [
    ("summary.json", "every metric, by dotted name"),
    ("manifest.json", "fingerprint, seed, versions and wall-clock timings"),
    ("scenario.json", "the validated scenario (with every --set applied)"),
]


def _show(value: Any) -> tuple[str, bool]:
    """A metric value as text, and whether it needs a block (lists and tables)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value), False
    if isinstance(value, int):
        return f"{value:,}", False
    if isinstance(value, float):
        return f"{value:,.6g}", False
    if isinstance(value, str):
        return value, False
    return json.dumps(value, indent=1, sort_keys=True), True


def metric_groups(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Metrics grouped by the first dotted part, groups and names sorted."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(summary):
        value, block = _show(summary[name])
        groups.setdefault(name.split(".", 1)[0], []).append(
            {"name": name, "value": value, "block": block}
        )
    return [
        {"name": g, "rows": rows, "open": g in OPEN_GROUPS} for g, rows in sorted(groups.items())
    ]


def _template() -> Any:
    import jinja2

    text = resources.files("sim.report").joinpath("templates/report.html").read_text("utf-8")
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return env.from_string(text)


def render(
    scenario: Scenario,
    manifest: dict[str, Any],
    summary: dict[str, Any],
    pngs: list[Path],
    tables: dict[str, Table],
) -> str:
    """The page's HTML text."""
    from sim.report.figures import RUN_FIGURES

    captions = {name: caption for name, caption, _ in RUN_FIGURES}
    figures = [
        {
            "id": p.stem,
            "file": p.name,
            "caption": captions.get(p.name, ""),
            "data": base64.b64encode(p.read_bytes()).decode("ascii"),
        }
        for p in pngs
    ]
    verdicts = [
        {
            "metric": v.metric,
            "condition": v.condition,
            "passed": v.passed,
            "shown": "missing" if v.missing else _show(v.value)[0],
        }
        for v in evaluate(scenario.expect, summary)
    ]
    facts = [
        (k, _show(v)[0] if not isinstance(v, dict) else json.dumps(v, sort_keys=True))
        for k, v in sorted(manifest.items())
        if k not in WALL_CLOCK_FIELDS
    ]
    overrides = sorted(
        (k, json.dumps(v))
        for k, v in scenario.switches.model_dump(mode="json").items()
        if v is not None
    )
    files = [
        {"name": f"{name}.csv", "rows": f"{len(tables[name]):,}", "what": TABLE_DOCS.get(name, "")}
        for name in sorted(tables)
    ] + [{"name": n, "rows": "", "what": w} for n, w in OTHER_FILES]
    return str(
        _template().render(
            name=scenario.name,
            profile=scenario.profile,
            seed=scenario.seed,
            start=manifest.get("start", ""),
            end=manifest.get("end", ""),
            tz=f"UTC{scenario.timezone / 3_600_000:+g}" if scenario.timezone else "UTC",
            partial=bool(manifest.get("partial")),
            verdicts=verdicts,
            figures=figures,
            groups=metric_groups(summary),
            n_metrics=len(summary),
            run_facts=facts,
            overrides=overrides,
            files=files,
        )
    )


def write_html(
    path: Path,
    scenario: Scenario,
    manifest: dict[str, Any],
    summary: dict[str, Any],
    pngs: list[Path],
    tables: dict[str, Table],
) -> Path:
    """Render and write ``report.html``; returns its path."""
    write_atomic(path, render(scenario, manifest, summary, pngs, tables).encode("utf-8"))
    return path
