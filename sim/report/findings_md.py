"""``findings.md``: the verdict and the findings of a run in Markdown, for a design review.

Written beside ``summary.json`` whenever a run writes its directory
(:func:`sim.report.run_files.write_run_files`) and again by ``sim plot``; read from the summary
only (:mod:`sim.report.findings_view`), so it is byte-identical for the same scenario and seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim.metrics.findings.verdicts import Finding, findings_in
from sim.report.findings_view import numbers, records_table, thresholds, verdict_line
from sim.report.tables import write_atomic
from sim.scenario import Scenario

FINDINGS_FILE = "findings.md"
BADGE = {"ok": "✅ ok", "info": "ℹ️ info", "warn": "⚠️ warn", "fail": "❌ fail"}
"""How a severity reads in Markdown (an emoji survives pasting where colour does not)."""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(_cell(h) for h in header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows),
    ]


def _instant(manifest: dict[str, Any], key: str) -> str:
    """The manifest's ``start``/``end`` without its zero milliseconds."""
    return str(manifest.get(key, "")).replace(".000", "")


def _finding(f: Finding, tz_ms: int) -> list[str]:
    lines = [f"## {BADGE[f.severity.value]} · `{f.id}`: {f.title}", "", f.sentence, ""]
    nums = numbers(f, tz_ms)
    if nums:
        lines += [*_table(["number", "value"], [[f"`{k}`", v] for k, v in nums]), ""]
    if f.examples:
        header, rows = records_table(f.examples, tz_ms)
        lines += [f"Worst examples ({len(rows)}):", "", *_table(header, rows), ""]
    ths = thresholds(f)
    if ths:
        shown = ", ".join(f"`{k}` = {v}" for k, v in ths)
        lines += [f"Thresholds (`[findings.{f.id}]`): {shown}.", ""]
    if f.mechanism:
        lines += [f"Why: {f.mechanism}", ""]
    if f.plots:
        lines += ["Plots: " + ", ".join(f"[{p}]({p})" for p in f.plots) + ".", ""]
    return lines


def findings_markdown(scenario: Scenario, manifest: dict[str, Any], summary: dict[str, Any]) -> str:
    """The text of ``findings.md``."""
    fs = findings_in(summary)
    tz_ms = scenario.timezone
    sha = str(manifest.get("event_log_sha256", ""))[:12]
    lines = [
        f"# {scenario.name}: findings",
        "",
        f"Profile `{scenario.profile}`, seed {scenario.seed}, "
        f"{_instant(manifest, 'start')} → {_instant(manifest, 'end')}"
        + (f"; event log `{sha}`." if sha else "."),
        "",
    ]
    if manifest.get("partial"):
        lines += [
            f"> **Partial run**: interrupted at {_instant(manifest, 'end')}; the findings cover "
            "the "
            "simulated time up to that instant only.",
            "",
        ]
    lines += [f"**Verdict.** {verdict_line(fs)}", ""]
    if fs:
        rows = [[BADGE[f.severity.value], f"`{f.id}`", f.sentence] for f in fs]
        lines += [*_table(["severity", "id", "finding"], rows), ""]
    for f in fs:
        lines += _finding(f, tz_ms)
    return "\n".join(lines).rstrip("\n") + "\n"


def write_findings_md(
    out_dir: Path, scenario: Scenario, manifest: dict[str, Any], summary: dict[str, Any]
) -> Path:
    """Write ``findings.md`` into ``out_dir``; returns its path."""
    path = out_dir / FINDINGS_FILE
    write_atomic(path, findings_markdown(scenario, manifest, summary).encode("utf-8"))
    return path
