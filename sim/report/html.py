"""``report.html``: one self-contained page (no network) per run, rendered with Jinja2.

It opens with the verdict and the findings (:mod:`sim.report.findings_view`: each with its
sentence, numbers, worst examples, thresholds, mechanism and the plots it names), then holds the
``[expect]`` verdicts, every plot as a base64 PNG, every metric of ``summary.json`` grouped by the
first part of its name (so a new reducer's metrics appear without a change here), the run's
identifying manifest fields and switches, and links to the CSV files. Lists of examples are
tables with instants as local times. Wall-clock fields of the manifest are left out: the page is
byte-identical for the same scenario and seed.
"""

from __future__ import annotations

import base64
import json
from importlib import resources
from pathlib import Path
from typing import Any

from sim.metrics.findings.verdicts import Finding, findings_in, worst
from sim.report.findings_view import is_records, numbers, records_table, thresholds, verdict_line
from sim.report.tables import Table, write_atomic
from sim.scenario import Scenario
from sim.scenario.expect import evaluate
from sim.units import Ms

WALL_CLOCK_FIELDS = frozenset({"wall_seconds", "compression_ratio", "compiled", "reducers"})
"""Manifest fields that depend on the machine or the install, never on the page (``reducers``
holds the reducer process's peak memory)."""
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
    "proxies": "per 5 min, proxy and outcome: the requests sent through it",
}
OTHER_FILES = [
    ("findings.md", "the verdict and the findings in Markdown, for a design review"),
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


def metric_groups(summary: dict[str, Any], tz_ms: Ms = 0) -> list[dict[str, Any]]:
    """Metrics grouped by the first dotted part, groups and names sorted; a list of examples
    becomes a table (``records``) with local times."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(summary):
        value, block = _show(summary[name])
        records = records_table(summary[name], tz_ms) if is_records(summary[name]) else None
        groups.setdefault(name.split(".", 1)[0], []).append(
            {"name": name, "value": value, "block": block, "records": records}
        )
    return [
        {"name": g, "rows": rows, "open": g in OPEN_GROUPS} for g, rows in sorted(groups.items())
    ]


def _fact(key: str, value: Any) -> str:
    """A manifest field as text (the seed is a name, not a quantity: not grouped)."""
    if key == "seed":
        return str(value)
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else _show(value)[0]


def _template() -> Any:
    import jinja2

    text = resources.files("sim.report").joinpath("templates/report.html").read_text("utf-8")
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return env.from_string(text)


def finding_views(
    findings: list[Finding], tz_ms: Ms, figures: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """What the page shows of each finding, worst first; its plots are the run's own figures."""
    by_file = {fig["file"]: fig for fig in figures}
    return [
        {
            "id": f.id,
            "title": f.title,
            "severity": f.severity.value,
            "sentence": f.sentence,
            "mechanism": f.mechanism,
            "numbers": numbers(f, tz_ms),
            "examples": records_table(f.examples, tz_ms) if f.examples else None,
            "thresholds": thresholds(f),
            "plots": [
                by_file.get(p, {"file": p, "id": "", "caption": "", "data": ""}) for p in f.plots
            ],
        }
        for f in findings
    ]


def render(
    scenario: Scenario,
    manifest: dict[str, Any],
    summary: dict[str, Any],
    pngs: list[Path],
    tables: dict[str, Table],
) -> str:
    """The page's HTML text."""
    from sim.report.figures import RUN_FIGURES, SUMMARY_FIGURES

    captions = {name: caption for name, caption, _ in [*RUN_FIGURES, *SUMMARY_FIGURES]}
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
    facts = [(k, _fact(k, v)) for k, v in sorted(manifest.items()) if k not in WALL_CLOCK_FIELDS]
    overrides = sorted(
        (k, json.dumps(v))
        for k, v in scenario.switches.model_dump(mode="json").items()
        if v is not None
    )
    fs = findings_in(summary)
    files = [
        {"name": f"{name}.csv", "rows": f"{len(tables[name]):,}", "what": TABLE_DOCS.get(name, "")}
        for name in sorted(tables)
    ] + [{"name": n, "rows": "", "what": w} for n, w in OTHER_FILES]
    return str(
        _template().render(
            name=scenario.name,
            profile=scenario.profile,
            seed=scenario.seed,
            start=str(manifest.get("start", "")).replace(".000", ""),
            end=str(manifest.get("end", "")).replace(".000", ""),
            tz=f"UTC{scenario.timezone / 3_600_000:+g}" if scenario.timezone else "UTC",
            partial=bool(manifest.get("partial")),
            verdict=verdict_line(fs),
            worst=worst(fs).value if fs else "none",
            findings=finding_views(fs, scenario.timezone, figures),
            verdicts=verdicts,
            figures=figures,
            groups=metric_groups(summary, scenario.timezone),
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
