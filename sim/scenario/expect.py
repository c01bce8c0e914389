"""``[expect]``: thresholds on a run's metrics, for ``sim check`` (k6 thresholds, anchors.md C).

Each key is a metric name from ``summary.json`` (quoted, since names contain dots; a name no run
writes, by :mod:`sim.metrics.catalogue`, fails at load with the closest names), each value a
condition::

    [expect]
    "lateness.milestone.p99_s" = "< 5"
    "windows.max_reserved" = "<= 1000"
    "invariants.window_cap.violations" = "== 0"
    "cleanup.deleted" = "between 0 and 50"
    "findings.capacity.severity" = "<= info"

A condition whose bound is a severity word (``ok``, ``info``, ``warn``, ``fail``) compares a
finding's severity by rank, ok < info < warn < fail (:class:`~sim.metrics.findings.Severity`):
``"<= info"`` holds for ok and info. Conditions are parsed and checked at load, so a typo
(``"<= infoo"``) fails before anything runs.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, RootModel

from sim.metrics.catalogue import hint, specs_for
from sim.metrics.findings.verdicts import Severity

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_NUMBER = r"[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_COMPARE = re.compile(rf"\s*(<=|>=|==|!=|<|>)\s*({_NUMBER})\s*")
_BETWEEN = re.compile(rf"\s*between\s+({_NUMBER})\s+and\s+({_NUMBER})\s*", re.IGNORECASE)
_WORD = r"[A-Za-z][A-Za-z_-]*"
_COMPARE_WORD = re.compile(rf"\s*(<=|>=|==|!=|<|>)\s*({_WORD})\s*")
_BETWEEN_WORDS = re.compile(rf"\s*between\s+({_WORD})\s+and\s+({_WORD})\s*", re.IGNORECASE)
_WORDS = [s.value for s in Severity]
SEVERITY_WORDS = ", ".join(_WORDS[:-1]) + " or " + _WORDS[-1]
"""``ok, info, warn or fail``: the words a severity condition accepts, best first."""
_NAME = re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_#-]+)+")


@dataclass(frozen=True)
class Condition:
    """A parsed threshold: ``op`` applied to (metric value, ``bound``), or an inclusive range."""

    text: str
    op: str
    bound: float
    upper: float | None = None
    severity: bool = False
    """The bounds are severity ranks: the value is a severity word, compared by its rank."""

    def holds(self, value: Any) -> bool:
        """Whether ``value`` (a metric) meets the condition; a value of the wrong kind (a
        severity for a number, a number or a list for a severity) does not."""
        x: float
        if self.severity:
            if not (isinstance(value, str) and value in _WORDS):
                return False
            x = Severity(value).rank
        elif isinstance(value, int | float):  # bool too: True is 1
            x = float(value)
        else:
            return False
        if math.isnan(x):
            return False
        if self.op == "between":
            assert self.upper is not None
            return self.bound <= x <= self.upper
        return _OPS[self.op](x, self.bound)


def _rank(word: str, text: str) -> float:
    try:
        return float(Severity(word.lower()).rank)
    except ValueError:
        raise ValueError(
            f"must compare with a severity: {SEVERITY_WORDS} (got {word!r} in {text!r})"
        ) from None


def parse_condition(text: str) -> Condition:
    """``"< 5"`` or ``"<= info"`` -> Condition; raises ValueError saying what is accepted."""
    m = _COMPARE_WORD.fullmatch(text)
    if m:
        return Condition(text.strip(), m.group(1), _rank(m.group(2), text), severity=True)
    m = _BETWEEN_WORDS.fullmatch(text)
    if m:
        lo, hi = (_rank(g, text) for g in m.groups())
        if lo > hi:
            raise ValueError(f"must have its lower bound first (got {text!r})")
        return Condition(text.strip(), "between", lo, hi, severity=True)
    m = _COMPARE.fullmatch(text)
    if m:
        return Condition(text.strip(), m.group(1), float(m.group(2).replace("_", "")))
    m = _BETWEEN.fullmatch(text)
    if m:
        lo, hi = (float(g.replace("_", "")) for g in m.groups())
        if lo > hi:
            raise ValueError(f"must have its lower bound first (got {text!r})")
        return Condition(text.strip(), "between", lo, hi)
    raise ValueError(
        "must be a condition such as '< 5', '<= 1000', '== 0', 'between 1 and 3' or, on a "
        f"finding's severity, '<= info' (got {text!r})"
    )


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError("is not a metric name such as 'lateness.milestone.p99_s'")
    if not specs_for(name):  # a typo would otherwise run the whole scenario, then fail "missing"
        raise ValueError(f"is not a metric any run writes (got {name!r}){hint(name)}")
    return name


def _check_condition(text: str) -> str:
    parse_condition(text)
    return text


MetricName = Annotated[str, AfterValidator(_check_name)]
ConditionText = Annotated[str, AfterValidator(_check_condition)]


class ExpectSection(RootModel[dict[MetricName, ConditionText]]):
    """``[expect]``: metric name -> condition."""

    root: dict[MetricName, ConditionText] = {}

    def conditions(self) -> dict[str, Condition]:
        return {name: parse_condition(text) for name, text in sorted(self.root.items())}


@dataclass(frozen=True)
class Verdict:
    """One threshold, checked against a run."""

    metric: str
    condition: str
    value: Any
    passed: bool
    missing: bool = False
    margin: float | None = None
    """How far the value is from the bound, as a log ratio (> 0 holds): ``log(1000 / 573)``
    for 573 against ``<= 1000``; for a severity, the finding's score against the score at
    which the severity would cross the bound. None where no ratio means anything (``== 0``,
    a bound of 0, a finding without a score). The capacity search interpolates on it."""


def evaluate(expect: ExpectSection, metrics: dict[str, Any]) -> list[Verdict]:
    """Check every threshold against ``metrics`` (a missing metric fails, naming itself)."""
    out = []
    for name, cond in expect.conditions().items():
        if name not in metrics:
            out.append(Verdict(name, cond.text, None, False, missing=True))
            continue
        value = metrics[name]
        margin = _margin(name, cond, value, metrics)
        out.append(Verdict(name, cond.text, value, cond.holds(value), margin=margin))
    return out


def _ratio(value: Any, bound: float, upper: bool) -> float | None:
    """``log(bound / value)`` for an upper bound, ``log(value / bound)`` for a lower one; a
    value of 0 against an upper bound counts as a millionth of it."""
    if not isinstance(value, int | float) or isinstance(value, bool) or bound <= 0:
        return None
    if value < 0 or not math.isfinite(value) or (not upper and value == 0):
        return None
    v = max(float(value), bound * 1e-6)
    return math.log(bound / v) if upper else math.log(v / bound)


def score_names(name: str, cond: Condition) -> tuple[str, str] | None:
    """For a severity gate, the metrics of its finding's score and of the score at which the
    severity crosses the bound (:class:`sim.metrics.findings.verdicts.Score`): ``"<= info"``
    (or ``"< warn"``) is crossed at the warn score, ``"<= warn"`` at the fail score; other
    bounds (``"<= ok"``, ``">= warn"``) have none."""
    if not cond.severity:
        return None
    worst = {"<=": cond.bound, "<": cond.bound - 1}.get(cond.op)  # the worst rank allowed
    crossing = {float(Severity.INFO.rank): "score_warn", float(Severity.WARN.rank): "score_fail"}
    at = crossing.get(worst) if worst is not None else None
    stem = name.removesuffix(".severity")
    return None if at is None else (f"{stem}.score", f"{stem}.{at}")


def _margin(name: str, cond: Condition, value: Any, metrics: dict[str, Any]) -> float | None:
    if cond.severity:
        names = score_names(name, cond)
        crossed = metrics.get(names[1]) if names else None
        if names is None or not isinstance(crossed, int | float):
            return None
        return _ratio(metrics.get(names[0]), float(crossed), upper=True)
    if cond.op in ("<", "<="):
        return _ratio(value, cond.bound, upper=True)
    if cond.op in (">", ">="):
        return _ratio(value, cond.bound, upper=False)
    if cond.op == "between" and cond.upper is not None:
        low, high = _ratio(value, cond.bound, False), _ratio(value, cond.upper, True)
        return None if low is None or high is None else min(low, high)
    return None
