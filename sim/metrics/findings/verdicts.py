"""A finding: whether one mechanism of the design held in a run, in one sentence with numbers.

A finding is what a run *judges*, where a metric only measures (issue 25). Each has a stable id,
a :class:`Severity`, one sentence with the numbers, the numbers themselves, the evidence (the
worst examples, with local times, aid and schedule type; the report's plots that show it), the
thresholds that decided the severity, and the mechanism in words. Finding reducers
(:mod:`sim.metrics.findings`) are pure folds over the event log like every metric; their
``result()`` is the finding flattened into ``summary.json`` names by :func:`finding_metrics`,
and :func:`findings_in` reads the findings back from a summary (the report, ``sim compare``
and the terminal table read them from there).

Names in ``summary.json`` (``[expect]`` and ``sim check`` gate on them)::

    findings.<id>.severity        "ok" | "info" | "warn" | "fail"
    findings.<id>.title           what is judged, e.g. "Capacity against demand"
    findings.<id>.sentence        the verdict with its numbers
    findings.<id>.mechanism       why, in words
    findings.<id>.examples        the worst examples (a list of small objects)
    findings.<id>.plots           the report's PNG files that show it
    findings.<id>.thresholds.<k>  each threshold that decided the severity
    findings.<id>.<number>        each number of the sentence, under a stable name
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from sim.units import Ms, format_instant_ms


class Severity(StrEnum):
    """How a finding judges the run, from best to worst (the order is the rank)."""

    OK = "ok"  # the mechanism held, within its thresholds
    INFO = "info"  # worth knowing, not a problem of the design (e.g. untracked videos)
    WARN = "warn"  # held, but near a threshold, or with exceptions a reviewer should see
    FAIL = "fail"  # did not hold

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {s: i for i, s in enumerate(Severity)}

PREFIX = "findings."
SCORE_KEYS = ("score", "score_warn", "score_fail")
"""Where a finding's :class:`Score` goes in ``summary.json`` (``findings.<id>.score`` ...)."""


class Score(NamedTuple):
    """The one number a finding's severity is read from, where it has one (higher is worse):
    warn from ``warn_at``, fail beyond ``fail_at``. ``sim capacity`` interpolates on it to find
    where a severity gate flips (sim.scenario.expect, sim.scenario.frontier)."""

    value: float
    warn_at: float
    fail_at: float


_FIXED = ("severity", "title", "sentence", "mechanism", "examples", "plots", *SCORE_KEYS)
EXAMPLES = 5
"""How many examples a finding keeps (the worst first)."""


@dataclass(frozen=True)
class Finding:
    """One judged mechanism (see the module docstring)."""

    id: str
    title: str
    severity: Severity
    sentence: str
    mechanism: str
    numbers: Mapping[str, Any] = field(default_factory=dict)
    examples: tuple[Mapping[str, Any], ...] = ()
    plots: tuple[str, ...] = ()
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    score: Score | None = None


def finding_metrics(finding: Finding) -> dict[str, Any]:
    """``finding`` as ``summary.json`` names (``findings.<id>.*``)."""
    p = f"{PREFIX}{finding.id}."
    clash = set(finding.numbers) & {*_FIXED, "thresholds"}
    if clash:
        raise ValueError(f"finding {finding.id}: numbers may not be named {sorted(clash)}")
    out: dict[str, Any] = {
        p + "severity": finding.severity.value,
        p + "title": finding.title,
        p + "sentence": finding.sentence,
        p + "mechanism": finding.mechanism,
        p + "examples": [dict(e) for e in finding.examples],
        p + "plots": list(finding.plots),
    }
    out.update({p + "thresholds." + k: v for k, v in finding.thresholds.items()})
    out.update({p + k: v for k, v in finding.numbers.items()})
    if finding.score is not None:
        out.update({p + k: v for k, v in zip(SCORE_KEYS, finding.score, strict=True)})
    return out


def findings_in(summary: Mapping[str, Any]) -> list[Finding]:
    """The findings of a run's metrics (``summary.json``), worst first, then by id."""
    groups: dict[str, dict[str, Any]] = {}
    for name, value in summary.items():
        if name.startswith(PREFIX):
            fid, _, rest = name[len(PREFIX) :].partition(".")
            groups.setdefault(fid, {})[rest] = value
    out = []
    for fid, g in groups.items():
        if "severity" not in g:
            continue
        numbers = {
            k: v for k, v in g.items() if k not in _FIXED and not k.startswith("thresholds.")
        }
        out.append(
            Finding(
                id=fid,
                title=str(g.get("title", fid)),
                severity=Severity(g["severity"]),
                sentence=str(g.get("sentence", "")),
                mechanism=str(g.get("mechanism", "")),
                numbers=numbers,
                examples=tuple(g.get("examples", ())),
                plots=tuple(g.get("plots", ())),
                thresholds={
                    k[len("thresholds.") :]: v for k, v in g.items() if k.startswith("thresholds.")
                },
                score=Score(*(g[k] for k in SCORE_KEYS)) if "score" in g else None,
            )
        )
    return worst_first(out)


def worst_first(findings: Iterable[Finding]) -> list[Finding]:
    """Worst severity first; ties by id (a stable order)."""
    return sorted(findings, key=lambda f: (-f.severity.rank, f.id))


def worst(findings: Iterable[Finding]) -> Severity:
    """The worst severity among ``findings`` (``ok`` for none)."""
    return max((f.severity for f in findings), key=lambda s: s.rank, default=Severity.OK)


def verdict_sentence(findings: Iterable[Finding]) -> str:
    """One line over all findings: whether the design held in this run."""
    fs = list(findings)
    by = {s: [f.id for f in fs if f.severity is s] for s in Severity}
    if by[Severity.FAIL]:
        return (
            f"The design did not hold: {len(by[Severity.FAIL])} of {len(fs)} findings fail "
            f"({', '.join(by[Severity.FAIL])})."
        )
    if by[Severity.WARN]:
        return (
            f"The design held, with warnings: {len(by[Severity.WARN])} of {len(fs)} findings "
            f"warn ({', '.join(by[Severity.WARN])})."
        )
    return f"The design held: all {len(fs)} findings are ok or info."


def severity_at_least(value: float, warn_at: float | None, fail_at: float | None) -> Severity:
    """``fail`` when ``value >= fail_at``, else ``warn`` when ``value >= warn_at``, else ``ok``
    (a threshold of None never fires)."""
    if fail_at is not None and value >= fail_at:
        return Severity.FAIL
    if warn_at is not None and value >= warn_at:
        return Severity.WARN
    return Severity.OK


def local(ms: Ms, tz_offset_ms: Ms) -> str:
    """An instant as a person reads it: local ISO time to the second, with its offset."""
    text = format_instant_ms(ms - ms % 1000, tz_offset_ms)
    return text.replace(".000", "")


def duration(ms: float) -> str:
    """A duration as a person reads it: ``"350ms"``, ``"67s"``, ``"95m"``, ``"1h"``, ``"4.5h"``,
    ``"3d"``: the largest unit that fits, or below two of it, unless whole, the next smaller
    one while under 100 of those (67 s is not "1.1m", 1 h is "1h", 119.9 min is "2h")."""
    ms = round(ms)
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    units = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000))
    for k, (unit, size) in enumerate(units):
        if ms < size:
            continue
        if ms < 2 * size and ms % size and k + 1 < len(units) and ms < 100 * units[k + 1][1]:
            unit, size = units[k + 1]
        return sign + f"{ms / size:.1f}".removesuffix(".0") + unit
    return f"{sign}{ms}ms"
