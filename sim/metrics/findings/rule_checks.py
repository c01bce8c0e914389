"""Finding ``rules``: the invariant monitors' verdict, with what each verified and excluded.

The monitors of :mod:`sim.metrics.invariants` check the design's rules on every event they
apply to. A check that finds nothing says how many events it looked at and which legitimate
exceptions it set aside (so "no violation" never hides them), and expected behaviour is never
a violation: uncapped milestone/new increments over the cap (§19.12), forced parallel rows,
jitter clamped to now. Rows lost by cleanup are finding ``lost_work``; milestones and stale
songs have findings of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.events.log import Chunk
from sim.metrics.base import Reducer
from sim.metrics.findings.verdicts import EXAMPLES, Finding, Severity, finding_metrics

# (rule, what was checked, the exceptions set aside: metric suffix -> words)
_RULES: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        "window_cap",
        "capped reservations",
        {
            "over_cap_uncapped": "uncapped milestone/new increments over the cap (§19.12)",
            "exhausted": "rows placed with every window full (§6.2 step 4)",
        },
    ),
    (
        "one_active_per_type",
        "creations",
        {"forced_parallel": "forced rows next to an active one (§3)"},
    ),
    (
        "no_schedule_before_creation",
        "creations and moves",
        {
            "allowed": "bare-fallback rows at a past window start (§6.2 step 3)",
            "clamped_to_now": "jittered times clamped to now (§6.2)",
        },
    ),
    (
        "single_path_processing",
        "single-path dispatches",
        {
            "unmarked_bulk_overlap": "dispatches beside an unmarked bulk job (reference §8.3)",
            "redispatched": "rows dispatched again while in a job (reference §8.3)",
        },
    ),
)


class RuleChecks:
    """Reducer of finding ``rules``: reads the ``monitors`` (fed the same log in the same
    group) at the end; it folds nothing itself."""

    ID = "rules"

    def __init__(self, monitors: Sequence[Reducer]) -> None:
        self.monitors = list(monitors)

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        pass  # the monitors are fed by the sink: this finding only reads their results

    def finding(self) -> Finding:
        merged: dict[str, Any] = {}
        for m in self.monitors:
            merged.update(m.result())
        numbers: dict[str, Any] = {}
        held: list[str] = []
        broken: list[str] = []
        examples: list[dict[str, Any]] = []
        for rule, what, exceptions in _RULES:
            p = f"invariants.{rule}."
            if p + "violations" not in merged:
                continue
            violations, checked = int(merged[p + "violations"]), int(merged.get(p + "checked", 0))
            numbers[f"{rule}.checked"] = checked
            numbers[f"{rule}.violations"] = violations
            aside = []
            for key, words in exceptions.items():
                n = int(merged.get(p + key, 0))
                numbers[f"{rule}.{key}"] = n
                if n:
                    aside.append(f"{n:,} {words}")
            text = f"{rule} ({checked:,} {what}" + (
                f"; set aside: {', '.join(aside)})" if aside else ")"
            )
            if violations:
                broken.append(f"{rule}: {violations:,} of {checked:,} {what} broke it")
                examples.extend({"rule": rule, **e} for e in merged[p + "examples"][:2])
            else:
                held.append(text)
        if broken:
            sentence = f"{len(broken)} rule(s) broken: {'; '.join(broken)}."
            if held:
                sentence = sentence[:-1] + f"; held: {', '.join(r.split(' (')[0] for r in held)}."
        else:
            sentence = f"All {len(held)} rule checks held: {'; '.join(held)}."
        return Finding(
            id=self.ID,
            title="Rule checks",
            severity=Severity.FAIL if broken else Severity.OK,
            sentence=sentence,
            mechanism=(
                "Invariant monitors follow every row through the log (sim.metrics.invariants): "
                "capped reservations never leave a window over the cap (§6.2), one active row "
                "per video and type unless forced (§3), no due time before its creation except "
                "the deployed bare fallback (§6.2 step 3), and no single-path dispatch while "
                "another row of the video is processing (§7.2). Legitimate exceptions are "
                "counted apart, never as violations."
            ),
            numbers=numbers,
            examples=tuple(examples[:EXAMPLES]),
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
