"""Every metric a run can write to ``summary.json``, declared once: its name, its good direction
and what it means.

A name is dotted; a part in angle brackets is a *placeholder* for a word of the scheduler's
vocabulary (``lateness.<type>.p99_s``: one metric per schedule type). The placeholders' words come
from the vocabularies themselves (:mod:`sim.cvsa.vocabulary`, the event-log word tables of
:mod:`sim.events`, the periodic jobs of :mod:`sim.cvsa.job_table`, the finding ids of
:mod:`sim.metrics.finding_names`), so a new word is a new metric without an edit here. A few
placeholders are *open*: proxy names and port methods come from the scenario and the
backends, so any word fits them.

The good direction says which way a change is an improvement: ``lower`` (lateness, violations,
failures), ``higher`` (milestones captured, headroom) or ``neither`` (counts of work done, a
run's settings, text): ``sim compare`` labels a change ``better`` or ``worse`` only for the first
two, and a tolerance without a sign judges the move in the bad direction.

Who reads it: ``sim compare`` (:mod:`sim.report.compare`) for directions and to refuse a
``--tolerance`` that names no metric, ``[expect]`` (:mod:`sim.scenario.expect`) to refuse an
unknown name at load, with the closest names suggested. ``tests/metrics/test_catalogue.py`` runs
scenarios with every mechanism on and checks that each metric they write matches exactly one
entry, so a new metric without a declaration fails; docs/report.md "Metric names" is generated
from :data:`CATALOGUE` (``python -m sim.metrics.catalogue docs/report.md``).
"""

from __future__ import annotations

import difflib
import fnmatch
import itertools
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Final

from sim.cvsa.job_table import PERIODIC_JOBS, SNAPSHOT_QUEUE, WORKER_JOBS
from sim.cvsa.vocabulary import ScheduleStatus, VideoUnavailable
from sim.events import cvsa_kinds as K
from sim.events.schema import KINDS
from sim.metrics.base import PERCENTILES
from sim.metrics.finding_names import FINDINGS as _FINDINGS
from sim.metrics.findings.lateness import PARTS
from sim.metrics.findings.milestone_causes import CAUSES


class Good(StrEnum):
    """Which way a metric improves."""

    LOWER = "lower"
    HIGHER = "higher"
    NEITHER = "neither"


@dataclass(frozen=True)
class Placeholder:
    """The words a ``<name>`` part of a metric name stands for. ``open``: any word fits (the
    words listed are examples); a ``deployment`` suffix (``#2``, a second scheduler instance)
    may follow the word."""

    words: tuple[str, ...]
    open: bool = False
    deployment: bool = False


_FAILED_STATUSES = tuple(
    s.value
    for s in ScheduleStatus
    if s
    not in (
        ScheduleStatus.PENDING,
        ScheduleStatus.PROCESSING,
        ScheduleStatus.COMPLETED,
        ScheduleStatus.DELETED,
    )
)
STATS: Final = (*(f"p{p}" for p in PERCENTILES), "max", "mean")
"""The statistics of a distribution (:func:`sim.metrics.base.percentiles`), besides its count."""

# --- the metrics -------------------------------------------------------------------------------
# One entry a line: name, good direction, meaning. Sections follow the reducers (sim/metrics/).

_RUN = """
events.total | neither | records in the event log
events.by_kind.<kind> | neither | records of one event kind
run.simulated_s | neither | simulated seconds the log covers
run.partial | neither | true when the run was interrupted and its report covers the time so far
jobs.<queue>.<job>.wait_s.count | neither | jobs of that name started on that queue
jobs.<queue>.<job>.wait_s.<stat> | lower | wait from a job's due time to its start, seconds
jobs.<queue>.<job>.failed | lower | jobs that finished failed
periodic.<periodic>.iterations | neither | iterations of a periodic job, busy and idle
periodic.<periodic>.idle | neither | iterations that found nothing to do
periodic.<periodic>.missed_slots | lower | slots skipped because an iteration overran its period
queries.<job>.reads | lower | SQL-equivalent reads of a job (an idle iteration adds one)
queries.<job>.writes | lower | SQL-equivalent writes of a job
queries.<job>.redis_ops | lower | window-counter round trips of a job
locks.<periodic>.busy | neither | runs that found the dispatcher lock held and did nothing
locks.<periodic>.released_other | lower | runs that released another run's lock (the bug, §11.7)
"""

_SCHEDULES = """
schedules.created.<type> | neither | rows created
schedules.created_by.<rule> | neither | rows created, by the rule that asked for them
schedules.not_created.<not_created> | neither | requests for a row that were refused, by reason
schedules.moved | neither | pending milestone rows moved to an earlier time
dispatch.<type> | neither | rows the ticks dispatched into jobs
dispatch.skipped.<skip> | lower | rows the ticks or workers skipped, by reason
finished.<type>.completed | neither | rows that finished with a snapshot
finished.<type>.<failed> | lower | rows that finished without one, by final status
cleanup.deleted | lower | rows deleted by scheduleCleanup
cleanup.deleted.<type>.<status> | lower | rows deleted by scheduleCleanup, by type and status
snapshots.total | neither | snapshots written
snapshots.<type> | neither | snapshots written for rows of the type
snapshots.discovery | neither | snapshots no row asked for (new videos found)
snapshots.duplicates | lower | snapshots refused as duplicates
lateness.<type>.count | neither | snapshots of the type with a due time
lateness.<type>.<stat>_s | lower | executed minus due, seconds
windows.max_reserved | lower | the highest count a capped reservation left (at most the cap)
windows.max_count | lower | the highest count any increment left (uncapped rows included)
windows.probes.total | lower | windows probed by reservations
windows.probes.max | lower | the most windows one reservation probed
windows.placement.exact | neither | rows placed at their target without a cap check (milestone, new)
windows.placement.forward | neither | capped rows placed searching forward
windows.placement.fallback | lower | capped rows placed only by the backward fallback
windows.placement.exhausted | lower | capped rows that found every window full
windows.placement.unadjusted | neither | rows placed with levelling off
upstream.failed.<error> | lower | upstream calls that failed, by kind
upstream.retries | lower | retries scheduled after a failure
"""

_INVARIANTS = """
invariants.<invariant>.violations | lower | violations of the invariant
invariants.<invariant>.examples | neither | the first violations (a list)
invariants.<invariant>.checked | neither | events the invariant checked
invariants.lost_schedules.<type> | lower | rows lost (never finished nor deleted), by type
invariants.lost_schedules.stray_deleted | lower | rows deleted that were never logged as created
invariants.lost_schedules.undecided | neither | rows still open at the end of the log
invariants.missed_milestones.bound_s | neither | the capture bound, seconds
invariants.missed_milestones.undecided | neither | crossings whose deadline is after the end
invariants.missed_milestones.untracked | neither | misses of videos the design does not track
invariants.no_schedule_before_creation.allowed | neither | rows due before creation (bare fallback)
invariants.no_schedule_before_creation.clamped_to_now | neither | jittered rows clamped to now
invariants.one_active_per_type.forced_parallel | neither | forced rows next to an active row
invariants.single_path_processing.redispatched | neither | rows dispatched again after a crash
invariants.single_path_processing.unmarked_bulk_overlap | lower | beside an unmarked bulk job
invariants.stale_songs.bound_s | neither | the staleness bound, seconds
invariants.stale_songs.songs | neither | songs followed
invariants.stale_songs.max_gap_s | lower | the longest gap between two snapshots of a song, seconds
invariants.stale_songs.unavailable | neither | over-bound gaps of unavailable songs (excused)
invariants.unlogged_schedules | lower | rows seen without a creation record
invariants.window_cap.cap | neither | the window cap
invariants.window_cap.over_cap_uncapped | neither | uncapped increments over the cap
invariants.window_cap.exhausted | lower | rows inserted over the cap (every window full)
milestones.crossed | neither | milestone crossings of visible videos
milestones.captured | higher | crossings captured by a snapshot
milestones.tracked | neither | crossings of songs (the design tracks them)
milestones.hidden | neither | crossings of hidden videos, not judged
milestones.capture_latency.count | neither | captured crossings
milestones.capture_latency.<stat>_s | lower | capture minus crossing, seconds
milestones.bracket_width.count | neither | captures with a snapshot below the milestone
milestones.bracket_width.<stat>_s | lower | capture minus the last snapshot below, seconds
"""

_LOAD = """
load.ops.<op>.count | neither | calls of one port method (sim load)
load.ops.<op>.<stat>_ms | lower | wall latency of one port method, milliseconds
load.jobs.<job>.count | neither | runs of a periodic job (sim load)
load.jobs.<job>.overruns | lower | runs longer than the job's period in wall time
load.jobs.<job>.overrun_fraction | lower | overruns as a share of the runs
load.jobs.<job>.lag.count | neither | runs whose start lag was measured
load.jobs.<job>.lag.<stat>_s | lower | how far behind schedule a run started, virtual seconds
load.lag.p99_s | lower | p99 start lag over every periodic job, virtual seconds
load.lag.max_s | lower | largest start lag, virtual seconds
"""


_INVARIANT_NAMES: Final = (
    "lost_schedules",
    "missed_milestones",
    "no_schedule_before_creation",
    "one_active_per_type",
    "single_path_processing",
    "stale_songs",
    "window_cap",
)
"""The invariant monitors (:mod:`sim.metrics.invariants`)."""
_RULE_NAMES: Final = tuple(
    n
    for n in _INVARIANT_NAMES
    if n not in ("lost_schedules", "missed_milestones", "stale_songs")  # findings of their own
)


@cache
def _placeholders() -> dict[str, Placeholder]:
    findings = sorted(
        {line.split(".")[1] for line in _FINDINGS.split("\n") if line.startswith("findings.")}
        - {"<finding>"}
    )
    return {
        "type": Placeholder(K.SNAPSHOT_TYPE.words),
        "status": Placeholder(K.SCHEDULE_STATUS.words),
        "failed": Placeholder(_FAILED_STATUSES),
        "rule": Placeholder(K.SCHEDULE_RULE.words),
        "not_created": Placeholder(K.NOT_CREATED.words),
        "skip": Placeholder(K.SKIP_REASON.words),
        "error": Placeholder(K.UPSTREAM_ERROR.words),
        "kind": Placeholder(tuple(sorted(k.name for k in KINDS.values()))),
        "queue": Placeholder((SNAPSHOT_QUEUE,), deployment=True),
        "job": Placeholder((*PERIODIC_JOBS, *WORKER_JOBS), deployment=True),
        "periodic": Placeholder(PERIODIC_JOBS, deployment=True),
        "stat": Placeholder(STATS),
        "lstat": Placeholder(("p50", "p90", "p99", "max")),
        "part": Placeholder(PARTS),
        "cause": Placeholder(CAUSES[1:]),  # run_ended is not a miss (tracked_undecided)
        "unavailable": Placeholder(tuple(v.word for v in VideoUnavailable)),
        "invariant": Placeholder(_INVARIANT_NAMES),
        "monitor": Placeholder(_RULE_NAMES),
        "finding": Placeholder(tuple(findings)),
        "proxy": Placeholder(("alicloud_hangzhou", "cf-worker", "native"), open=True),
        "op": Placeholder(("store.due_schedules", "counter.incr"), open=True),
    }


_PLACEHOLDER = re.compile(r"<([a-z_]+)>")


@dataclass(frozen=True)
class MetricSpec:
    """One declared metric (or family of metrics, with placeholders)."""

    name: str
    good: Good
    meaning: str

    @property
    def regex(self) -> re.Pattern[str]:
        return _regex(self.name)

    def matches(self, metric: str) -> bool:
        return self.regex.fullmatch(metric) is not None

    def names(self) -> list[str]:
        """Every concrete name (an open placeholder stays written as ``<proxy>``)."""
        return _expand(self.name)


def _parse(block: str) -> list[MetricSpec]:
    out = []
    for line in block.strip().splitlines():
        name, good, meaning = (part.strip() for part in line.split("|"))
        out.append(MetricSpec(name, Good(good), meaning))
    return out


def _word_regex(ph: Placeholder, name: str) -> str:
    if ph.open:
        body = r"[A-Za-z0-9_-]+\.[A-Za-z0-9_]+" if name == "op" else r"[A-Za-z0-9_-]+"
    else:
        body = "(?:" + "|".join(re.escape(w) for w in ph.words) + ")"
    return body + (r"(?:#\d+)?" if ph.deployment else "")


@cache
def _regex(name: str) -> re.Pattern[str]:
    places = _placeholders()
    parts, last = [], 0
    for m in _PLACEHOLDER.finditer(name):
        parts.append(re.escape(name[last : m.start()]))
        parts.append(_word_regex(places[m.group(1)], m.group(1)))
        last = m.end()
    parts.append(re.escape(name[last:]))
    return re.compile("".join(parts))


def _expand(name: str) -> list[str]:
    places = _placeholders()
    keys = _PLACEHOLDER.findall(name)
    choices = [(f"<{k}>",) if places[k].open else places[k].words for k in keys]
    template = _PLACEHOLDER.sub("{}", name)
    return [template.format(*combo) for combo in itertools.product(*choices)]


CATALOGUE: Final = [
    *_parse(_RUN),
    *_parse(_SCHEDULES),
    *_parse(_INVARIANTS),
    *_parse(_LOAD),
    *_parse(_FINDINGS),
]
"""Every metric, in the order docs/report.md lists them."""


def specs_for(metric: str) -> list[MetricSpec]:
    """The entries ``metric`` matches (one for every metric a run writes; none for a name no run
    writes)."""
    return [s for s in CATALOGUE if s.matches(metric)]


def good_direction(metric: str) -> Good | None:
    """Which way ``metric`` improves; None when no entry declares it."""
    found = specs_for(metric)
    return found[0].good if found else None


@cache
def concrete_names() -> tuple[str, ...]:
    """Every name a run can write, placeholders expanded (open ones left as ``<proxy>``)."""
    return tuple(sorted({n for s in CATALOGUE for n in s.names()}))


def _as_pattern(name: str, pattern: str) -> str | None:
    """``name`` with the parts where ``pattern`` has a wildcard replaced by the pattern's
    (``lateness.new.p99_s`` as ``latenes.*.p99_s`` reads ``lateness.*.p99_s``)."""
    parts, wild = name.split("."), pattern.split(".")
    if len(parts) != len(wild):
        return None
    return ".".join(
        w if any(c in w for c in "*?[") else p for p, w in zip(parts, wild, strict=True)
    )


def closest(name: str, extra: Iterable[str] = (), n: int = 3) -> list[str]:
    """The declared names (and ``extra`` ones) nearest ``name``, best first; for a pattern, the
    patterns nearest it."""
    pool = sorted({*concrete_names(), *extra})
    pattern = any(ch in name for ch in "*?[")
    if pattern:
        pool = sorted({p for p in (_as_pattern(n, name) for n in pool) if p is not None})
    found = difflib.get_close_matches(name, pool, n=n, cutoff=0.6)
    if not found and not pattern:  # a long name with one wrong part
        found = difflib.get_close_matches(name, pool, n=n, cutoff=0.4)
    return found


def unknown_metric(name: str, extra: Iterable[str] = ()) -> str | None:
    """Why ``name`` (a metric name, or an ``fnmatch`` pattern when it has ``*?[``) names no metric
    a run can write, with the closest names; None when it names one. ``extra``: names known to
    exist (those of the runs being compared)."""
    known = list(extra)
    if any(ch in name for ch in "*?["):
        if any(fnmatch.fnmatchcase(n, name) for n in (*concrete_names(), *known)):
            return None
        if any(fnmatch.fnmatchcase(s.name, name) for s in CATALOGUE):
            return None
        return f"the pattern {name} matches no metric a run writes{hint(name, known)}"
    if name in known or specs_for(name):
        return None
    return f"no run writes a metric named {name}{hint(name, known)}"


def hint(name: str, extra: Iterable[str] = ()) -> str:
    """``"; did you mean A or B?"`` with the names closest to ``name``, or where to look."""
    near = closest(name, extra)
    if not near:
        return "; docs/report.md lists every name under 'Metric names'"
    listed = near[0] if len(near) == 1 else ", ".join(near[:-1]) + " or " + near[-1]
    return f"; did you mean {listed}?"


def markdown() -> str:
    """The catalogue as the table of docs/report.md 'Metric names' (between its markers)."""
    places = _placeholders()
    lines = ["| metric | good | meaning |", "|---|---|---|"]
    lines += [f"| `{s.name}` | {s.good.value} | {s.meaning} |" for s in CATALOGUE]
    lines += ["", "| placeholder | words |", "|---|---|"]
    for key in sorted({k for s in CATALOGUE for k in _PLACEHOLDER.findall(s.name)}):
        ph = places[key]
        words = ", ".join(f"`{w}`" for w in ph.words)
        if ph.open:
            words = "any word, e.g. " + words
        if ph.deployment:
            words += " (a second deployment's end in `#2`)"
        lines.append(f"| `<{key}>` | {words} |")
    return "\n".join(lines) + "\n"


BEGIN = "<!-- metric-names: generated by `python -m sim.metrics.catalogue docs/report.md` -->"
END = "<!-- /metric-names -->"


def with_table(doc: str) -> str:
    """``doc`` (docs/report.md) with the generated table between :data:`BEGIN` and :data:`END`."""
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{markdown()}{END}{tail}"


def main(argv: list[str]) -> int:
    """Rewrite the table in ``argv[0]`` (docs/report.md), or print it."""
    if not argv:
        sys.stdout.write(markdown())
        return 0
    with open(argv[0], encoding="utf-8") as fh:
        doc = fh.read()
    with open(argv[0], "w", encoding="utf-8") as fh:
        fh.write(with_table(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
