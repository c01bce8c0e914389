"""The findings of a run as a person reads them: what the terminal (:mod:`.findings_term`),
the opening of ``report.html``, ``findings.md`` (:mod:`.findings_md`) and ``sim compare`` show
(issue 25, "Where findings appear").

Everything is read back from ``summary.json`` (:func:`~sim.metrics.findings.findings_in`), so it
works for any number of findings and for runs saved before a finding existed. Instants are shown
as local ISO times in the scenario's time zone, never as epoch milliseconds: an example field or
a number named ``…_ms`` whose values are instants (see :func:`instant_column`) is rendered with
:func:`~sim.metrics.findings.verdicts.local` and loses its ``_ms`` suffix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sim.metrics.findings.verdicts import Finding, Severity, findings_in, local, verdict_sentence
from sim.units import Ms

INSTANT_MIN_MS = 100_000_000_000
"""An ``…_ms`` value at least this large (March 1973) is an instant, not a duration: no duration
a run measures is three years long, and every scenario starts long after 1973."""


def verdict_line(findings: Sequence[Finding]) -> str:
    """:func:`verdict_sentence`, or what to say when the run judged nothing."""
    if not findings:
        return "No finding was judged in this run (its summary.json has no findings.* names)."
    return verdict_sentence(findings)


def show(value: Any) -> str:
    """A value as text: integers grouped, floats to 6 significant digits, JSON for the rest."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.6g}"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def instant_column(key: str, values: Iterable[Any]) -> bool:
    """Whether ``key``'s values are epoch-ms instants: named ``…_ms``, and every integer among
    them at least :data:`INSTANT_MIN_MS` or negative (-1 says "none", as the invariants write
    ``last_below_ms``); a duration in ms has values in between."""
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return key.endswith("_ms") and bool(ints) and all(v < 0 or v >= INSTANT_MIN_MS for v in ints)


def identifier(key: str) -> bool:
    """Whether ``key`` names an identifier (an aid, a schedule id): shown without grouping."""
    return key in ("aid", "id", "schedule") or key.endswith(("_aid", "_id"))


def _cell(key: str, value: Any) -> str:
    if identifier(key) and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return show(value)


def _instant(value: Any, tz_ms: Ms) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return local(value, tz_ms) if value >= 0 else "none"
    return show(value)


LEADING = ("aid", "type", "schedule")
"""The columns an example table starts with: which video, which schedule."""


def records_table(
    records: Sequence[Mapping[str, Any]], tz_ms: Ms
) -> tuple[list[str], list[list[str]]]:
    """A list of small objects (a finding's examples, an invariant's) as a header and rows of
    text, instants as local times. Columns: :data:`LEADING` ones first, then the others in
    first-seen order (``summary.json`` sorts them by name)."""
    keys: list[str] = []
    for r in records:
        keys.extend(k for k in r if k not in keys)
    keys.sort(key=lambda k: LEADING.index(k) if k in LEADING else len(LEADING))
    instants = {k for k in keys if instant_column(k, (r.get(k) for r in records))}
    header = [k[: -len("_ms")] if k in instants else k for k in keys]
    rows = [
        [_instant(r[k], tz_ms) if k in instants else _cell(k, r[k]) if k in r else "" for k in keys]
        for r in records
    ]
    return header, rows


def is_records(value: Any) -> bool:
    """Whether a metric value is a non-empty list of small objects (shown as a table)."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def numbers(finding: Finding, tz_ms: Ms) -> list[tuple[str, str]]:
    """A finding's headline numbers by name (instants as local times), in name order. A series
    (a list of records, such as ``capacity``'s ``by_day``) is no headline: its plot shows it."""
    out = []
    for name, value in sorted(finding.numbers.items()):
        if is_records(value):
            continue
        if instant_column(name, [value]):
            out.append((name[: -len("_ms")], _instant(value, tz_ms)))
        else:
            out.append((name, show(value)))
    return out


def thresholds(finding: Finding) -> list[tuple[str, str]]:
    """The thresholds that decided a finding's severity, by name."""
    return [(k, show(v)) for k, v in sorted(finding.thresholds.items())]


@dataclass(frozen=True)
class SeverityChange:
    """A finding whose severity differs between run A and run B (None: the run lacks it)."""

    id: str
    a: Severity | None
    b: Severity | None
    sentence_a: str
    sentence_b: str

    @property
    def worse(self) -> bool:
        return _rank(self.b) > _rank(self.a)

    def arrow(self) -> str:
        """``ok -> warn`` (``none`` for a run without the finding)."""
        return f"{self.a.value if self.a else 'none'} -> {self.b.value if self.b else 'none'}"


def _rank(s: Severity | None) -> int:
    return -1 if s is None else s.rank


def severity_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[SeverityChange]:
    """The findings whose severity changed from run A's summary to run B's: those that got worse
    first, then by B's severity (worst first), then by id."""
    fa = {f.id: f for f in findings_in(a)}
    fb = {f.id: f for f in findings_in(b)}
    out = []
    for fid in sorted(set(fa) | set(fb)):
        x, y = fa.get(fid), fb.get(fid)
        sa, sb = (x.severity if x else None), (y.severity if y else None)
        if sa != sb:
            out.append(
                SeverityChange(fid, sa, sb, x.sentence if x else "", y.sentence if y else "")
            )
    return sorted(out, key=lambda c: (not c.worse, -_rank(c.b), c.id))


def changes_lines(changes: Sequence[SeverityChange]) -> list[str]:
    """The changes as plain text (the terminal and ``Comparison.text``)."""
    if not changes:
        return ["Findings: no finding changed severity."]
    lines = [f"Findings whose severity changed ({len(changes)}):"]
    for c in changes:
        lines.append(f"  {c.id}: {c.arrow()}{'  (worse)' if c.worse else ''}")
        lines.append(f"    A: {c.sentence_a or '(not in run A)'}")
        lines.append(f"    B: {c.sentence_b or '(not in run B)'}")
    return lines
