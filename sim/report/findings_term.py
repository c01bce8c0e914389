"""The findings on the terminal (rich): the table ``sim run`` ends with and the severity changes
``sim compare`` opens with (:mod:`sim.report.findings_view` has the text they share)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.metrics.findings.verdicts import Finding, Severity
from sim.report.findings_view import SeverityChange, verdict_line

SEVERITY_STYLE = {
    Severity.OK: "green",
    Severity.INFO: "cyan",
    Severity.WARN: "yellow",
    Severity.FAIL: "bold red",
}
"""rich styles of the severities (report.html and findings.md have their own badges)."""


def _badge(s: Severity | None) -> Any:
    from rich.text import Text

    return Text("none") if s is None else Text(s.value, style=SEVERITY_STYLE[s])


def findings_table(findings: Sequence[Finding]) -> Any:
    """Severity (coloured), id and the sentence of each finding, in the given order."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Findings", title_justify="left", show_lines=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("id", no_wrap=True)
    table.add_column("finding")
    for f in findings:
        table.add_row(_badge(f.severity), Text(f.id), Text(f.sentence))  # Text: "[" is no markup
    return table


def print_findings(console: Any, findings: Sequence[Finding], *, partial_end: str = "") -> None:
    """What ``sim run`` ends with: a partial run says so, then the table (worst first, as
    :func:`~sim.metrics.findings.findings_in` orders them) and the one-line verdict."""
    from rich.text import Text

    if partial_end:
        console.print(
            Text.assemble(
                ("PARTIAL run", "bold yellow"),
                f": the findings cover the simulated time up to {partial_end} only.",
            )
        )
    if findings:
        console.print(findings_table(findings))
    console.print(Text.assemble(("Verdict. ", "bold"), verdict_line(findings)))


def print_changes(console: Any, changes: Sequence[SeverityChange]) -> None:
    """What ``sim compare`` opens with: each finding whose severity changed, A -> B, with both
    sentences; or that none did."""
    from rich.table import Table
    from rich.text import Text

    if not changes:
        console.print("Findings: no finding changed severity.")
        return
    table = Table(title="Findings whose severity changed", title_justify="left", show_lines=True)
    for col in ("id", "A", "B", "sentences (A, then B)"):
        table.add_column(col, no_wrap=col != "sentences (A, then B)")
    for c in changes:
        text = Text.assemble(
            ("A: ", "bold"), c.sentence_a or "(not in run A)", "\n",
            ("B: ", "bold"), c.sentence_b or "(not in run B)",
        )  # fmt: skip
        table.add_row(Text(c.id), _badge(c.a), _badge(c.b), text)
    console.print(table)
