"""Comparing two runs: every metric side by side with its delta, and regression gates.

A metric *regresses* when it moved in its bad direction by more than the tolerance. A tolerance
is ``METRIC=LIMIT`` where METRIC is a metric name or an ``fnmatch`` pattern
(``lateness.*.p99_s``) and LIMIT is a percentage of run A's value (``5%``) or an absolute amount
in the metric's unit (``2``), optionally signed:

* ``+5%``: an increase of more than 5 % fails;
* ``-5%``: a decrease of more than 5 % fails;
* ``5%``: a move in the metric's bad direction (the opposite of its good direction in
  :mod:`sim.metrics.catalogue`) fails; a metric with none (a count of work) fails on a move
  either way;
* ``+-5%`` (or ``±5%``): a move either way fails.

A relative tolerance on a metric that was 0 in run A fails on any move in the bad direction.
A name or pattern that no run can write is refused before anything is compared
(:func:`unknown_tolerances`). A named metric missing from either run fails. A pattern judges
the numeric metrics present in both runs (those in one run only are listed, not judged) and
fails when it matches none.

The comparison is read from the two runs' files (``summary.json``, ``manifest.json``) and, with an
output directory, written as ``comparison.csv`` and ``comparison.json``, beside the overlay plot of
the two runs' series (:mod:`sim.report.overlay`).
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from sim.metrics.catalogue import Good, good_direction, unknown_metric
from sim.metrics.findings import Severity
from sim.report.findings_view import SeverityChange, changes_lines, severity_changes
from sim.report.numbers import percent, show_number
from sim.report.overlay import draw_overlay
from sim.report.run_differences import run_differences, scenario_of
from sim.report.run_files import read_manifest, read_summary
from sim.report.tables import Table, to_csv, write_atomic

Direction = Literal["up", "down", "both"]
_BAD: dict[Good, Direction] = {Good.LOWER: "up", Good.HIGHER: "down"}
_LIMIT = re.compile(r"(\+-|±|\+|-)?\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)")


def bad_direction(metric: str) -> Direction | None:
    """The direction in which ``metric`` gets worse, if it has one: the opposite of its good
    direction in :mod:`sim.metrics.catalogue` (none for counts of work and settings)."""
    good = good_direction(metric)
    return None if good is None else _BAD.get(good)


@dataclass(frozen=True)
class Tolerance:
    """A parsed ``--tolerance`` (see the module docstring)."""

    text: str
    pattern: str
    limit: float
    relative: bool
    sign: Literal["+", "-", "+-", ""]

    def direction(self, metric: str) -> Direction:
        if self.sign == "+":
            return "up"
        if self.sign == "-":
            return "down"
        if self.sign == "+-":
            return "both"
        return bad_direction(metric) or "both"


def parse_tolerance(spec: str) -> Tolerance:
    """``"lateness.new.p99_s=+10%"`` -> Tolerance; ``ValueError`` says what is accepted."""
    pattern, sep, limit = spec.rpartition("=")
    m = _LIMIT.fullmatch(limit.strip())
    if not sep or not pattern.strip() or m is None:
        raise ValueError(
            f"--tolerance {spec!r}: expected METRIC=LIMIT such as lateness.new.p99_s=10%, "
            "windows.max_count=+5%, cleanup.deleted=-2% or invariants.*.violations=+0"
        )
    sign = {"±": "+-", None: ""}.get(m.group(1), m.group(1))
    return Tolerance(spec, pattern.strip(), float(m.group(2)), m.group(3) == "%", sign)  # type: ignore[arg-type]


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


@dataclass(frozen=True)
class MetricDelta:
    """One metric in both runs. ``change``: same, better, worse, changed (no bad direction),
    added (only in B), removed (only in A), or differs (not a number)."""

    metric: str
    a: Any
    b: Any
    delta: float | None
    pct: float | None
    """``delta`` as a percentage of ``|a|`` (None when ``a`` is 0 or either is not a number)."""
    change: str


def delta_of(metric: str, a: Any, b: Any, *, in_a: bool = True, in_b: bool = True) -> MetricDelta:
    if not in_b:
        return MetricDelta(metric, a, None, None, None, "removed")
    if not in_a:
        return MetricDelta(metric, None, b, None, None, "added")
    x, y = _number(a), _number(b)
    if x is None or y is None:
        x, y = _rank(a), _rank(b)  # a finding's severity moves by rank, ok < info < warn < fail
        if x is None or y is None or x == y:
            return MetricDelta(metric, a, b, None, None, "same" if a == b else "differs")
        return MetricDelta(metric, a, b, None, None, _label(metric, y - x))
    d = y - x
    pct = d / abs(x) * 100 if x else None
    return MetricDelta(
        metric, a, b, round(d, 9), None if pct is None else round(pct, 6), _label(metric, d)
    )


def _label(metric: str, d: float) -> str:
    """``better``/``worse`` for a metric with a good direction, ``changed`` for one without."""
    if d == 0:
        return "same"
    bad = bad_direction(metric)
    return "changed" if bad is None else ("worse" if (d > 0) == (bad == "up") else "better")


def _rank(value: Any) -> float | None:
    if isinstance(value, str) and value in {s.value for s in Severity}:
        return float(Severity(value).rank)
    return None


@dataclass(frozen=True)
class Verdict:
    """A tolerance checked on one metric (or on nothing, when it matched none)."""

    tolerance: str
    metric: str
    direction: Direction | None
    moved: float | None
    """How far the metric moved in the bad direction: % of A for a relative tolerance, units
    for an absolute one (inf: from 0); None when it could not be judged."""
    passed: bool
    reason: str


def check(tol: Tolerance, a: dict[str, Any], b: dict[str, Any]) -> list[Verdict]:
    """Judge ``tol`` on every metric it names (module docstring)."""
    out: list[Verdict] = []
    if any(ch in tol.pattern for ch in "*?["):
        names = [n for n in sorted(set(a) | set(b)) if fnmatch.fnmatchcase(n, tol.pattern)]
        for name in names:
            if (name in a) != (name in b):
                where = "A" if name in a else "B"
                out.append(Verdict(tol.text, name, None, None, True, f"only in run {where}"))
        names = [
            n for n in names if _number(a.get(n)) is not None and _number(b.get(n)) is not None
        ]
        if not names:
            return [*out, Verdict(tol.text, tol.pattern, None, None, False, "matches no number")]
    else:
        names = [tol.pattern]
    for name in names:
        direction = tol.direction(name)
        if name not in a or name not in b:
            where = "A" if name not in a else "B"
            out.append(Verdict(tol.text, name, direction, None, False, f"missing in run {where}"))
            continue
        x, y = _number(a[name]), _number(b[name])
        if x is None or y is None:
            out.append(Verdict(tol.text, name, direction, None, False, "not a number"))
            continue
        d = y - x
        bad = {"up": d, "down": -d, "both": abs(d)}[direction]
        if tol.relative:
            moved = bad / abs(x) * 100 if x else (math.inf if bad > 0 else 0.0)
        else:
            moved = bad
        unit = "%" if tol.relative else ""
        reason = (
            f"moved {_show(moved)}{unit} {direction} (limit {tol.limit:g}{unit})"
            if moved > 0
            else "did not move in the bad direction"
        )
        out.append(Verdict(tol.text, name, direction, moved, moved <= tol.limit, reason))
    return out


CELL_CHARS = 30
"""The most characters of a text value a comparison table shows (a sentence is cut with "…";
lists and tables say how many items they hold)."""


def metric_cell(value: Any) -> str:
    """A metric value in the terminal's comparison table: blank when absent, numbers for people
    (:mod:`sim.report.numbers`), lists and tables by size, text cut to :data:`CELL_CHARS`."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return show_number(value)
    if isinstance(value, list):
        return f"{len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return f"table of {len(value)}"
    text = str(value)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def delta_cells(row: MetricDelta) -> tuple[str, str]:
    """The delta and the delta in percent of a row, signed, for people (blank when none)."""
    delta = "" if row.delta is None else show_number(row.delta, signed=True)
    pct = "" if row.pct is None else percent(row.pct)
    return delta, pct


def _show(x: float) -> str:
    return "from 0" if math.isinf(x) else show_number(x, 4)


@dataclass
class Comparison:
    """Two runs compared: every metric, and the tolerance verdicts."""

    a: dict[str, Any]
    """Run A: ``dir``, ``scenario``, ``seed``, ``event_log_sha256``."""
    b: dict[str, Any]
    rows: list[MetricDelta]
    verdicts: list[Verdict]
    files: list[Path]
    notes: list[str] = field(default_factory=list)
    """What could not be done (e.g. the overlay of a run without CSV series)."""
    findings: list[SeverityChange] = field(default_factory=list)
    """The findings whose severity changed from A to B, worse first (what a comparison opens
    with)."""
    warnings: list[str] = field(default_factory=list)
    """How the runs differ besides their metrics (scenario, settings, duration, seed,
    completeness; :func:`run_differences`): said before the table."""

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    def changed(self) -> list[MetricDelta]:
        return [r for r in self.rows if r.change != "same"]

    def text(self, *, every: bool = False, match: str = "*") -> str:
        """The metrics that differ (``every``: all) whose names match the ``fnmatch`` pattern
        ``match``, and the verdicts, as a plain-text table."""
        rows = [
            r
            for r in (self.rows if every else self.changed())
            if fnmatch.fnmatchcase(r.metric, match)
        ]
        cells = [("metric", "A", "B", "delta", "delta %", "change")]
        for r in rows:
            cells.append((r.metric, metric_cell(r.a), metric_cell(r.b), *delta_cells(r), r.change))
        widths = [max(len(c[i]) for c in cells) for i in range(6)]
        lines = [f"warning: {w}" for w in self.warnings]
        lines += [*changes_lines(self.findings), ""]
        lines += [
            "  ".join(
                c.ljust(w) if i in (0, 5) else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in cells
        ]
        lines += [
            f"{'pass' if v.passed else 'FAIL'}  {v.tolerance}: {v.metric}: {v.reason}"
            for v in self.verdicts
        ]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "passed": self.passed,
            "findings_changed": [
                {
                    "id": c.id,
                    "a": c.a and c.a.value,
                    "b": c.b and c.b.value,
                    "sentence_a": c.sentence_a,
                    "sentence_b": c.sentence_b,
                }
                for c in self.findings
            ],
            "tolerances": [asdict(v) for v in self.verdicts],
            "metrics": [asdict(r) for r in self.rows],
            "files": [str(p) for p in self.files],
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }


def unknown_tolerances(
    tolerances: list[Tolerance], a: dict[str, Any], b: dict[str, Any]
) -> list[str]:
    """A line per tolerance whose name or pattern no run can write (by the catalogue, or in
    either run): ``--tolerance 'x=5%': no run writes a metric named x; did you mean ...?``."""
    known = set(a) | set(b)
    out = []
    for tol in tolerances:
        why = unknown_metric(tol.pattern, known)
        if why is not None:
            out.append(f"--tolerance {tol.text!r}: {why}")
    return out


def _run_facts(run_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    keys = ("scenario", "seed", "profile", "event_log_sha256", "partial")
    return {"dir": str(run_dir), **{k: manifest.get(k) for k in keys}}


def compare_runs(
    a_dir: Path, b_dir: Path, tolerances: list[Tolerance], out_dir: Path | None = None
) -> Comparison:
    """Compare the ``summary.json`` of two run directories; with ``out_dir``, also write
    ``comparison.csv``, ``comparison.json`` and the overlay plot ``overlay.png`` there."""
    a, b = read_summary(a_dir), read_summary(b_dir)
    rows = [
        delta_of(n, a.get(n), b.get(n), in_a=n in a, in_b=n in b) for n in sorted(set(a) | set(b))
    ]
    verdicts = [v for tol in tolerances for v in check(tol, a, b)]
    manifest_a, manifest_b = read_manifest(a_dir), read_manifest(b_dir)
    facts_a, facts_b = _run_facts(a_dir, manifest_a), _run_facts(b_dir, manifest_b)
    result = Comparison(facts_a, facts_b, rows, verdicts, [], findings=severity_changes(a, b))
    result.warnings = run_differences(
        (manifest_a, scenario_of(a_dir)), (manifest_b, scenario_of(b_dir))
    )
    if out_dir is not None:
        result.files = write_comparison(result, a_dir, b_dir, out_dir)
    return result


def comparison_table(result: Comparison) -> Table:
    """``comparison.csv``: one row per metric (values as text, JSON for lists and tables)."""

    def text(v: Any) -> str:
        return "" if v is None else v if isinstance(v, str) else json.dumps(v, sort_keys=True)

    rows = result.rows
    return Table(
        {
            "metric": np.array([r.metric for r in rows], dtype=np.str_),
            "a": np.array([text(r.a) for r in rows], dtype=np.str_),
            "b": np.array([text(r.b) for r in rows], dtype=np.str_),
            "delta": np.array([np.nan if r.delta is None else r.delta for r in rows], np.float64),
            "delta_pct": np.array([np.nan if r.pct is None else r.pct for r in rows], np.float64),
            "change": np.array([r.change for r in rows], dtype=np.str_),
        }
    )


def comparison_json(result: Comparison) -> dict[str, Any]:
    """``comparison.json``: :meth:`Comparison.to_json` without the files, infinities as null."""
    doc = result.to_json()
    doc.pop("files")
    for verdict in doc["tolerances"]:
        moved = verdict["moved"]
        if isinstance(moved, float) and not math.isfinite(moved):
            verdict["moved"] = None
    return doc


def write_comparison(result: Comparison, a_dir: Path, b_dir: Path, out_dir: Path) -> list[Path]:
    """Write ``comparison.csv``, ``comparison.json`` and ``overlay.png`` into ``out_dir``; the
    overlay needs both runs' CSV series and scenario.json (it is skipped, with a note in
    ``result.notes``, when one lacks them)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / "comparison.csv", out_dir / "comparison.json"
    write_atomic(csv_path, to_csv(comparison_table(result)).encode())
    doc = json.dumps(comparison_json(result), indent=2, sort_keys=True) + "\n"
    write_atomic(json_path, doc.encode())
    try:
        png = draw_overlay(a_dir, b_dir, out_dir / "overlay.png")
    except FileNotFoundError as exc:
        result.notes.append(f"no overlay plot: {exc}")
        return [csv_path, json_path]
    return [csv_path, json_path, png]
