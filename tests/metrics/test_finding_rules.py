"""Finding ``rules``: the invariant monitors' verdict, with what they checked and set aside."""

from __future__ import annotations

from sim.metrics.findings import RuleChecks, Severity, findings_in
from sim.metrics.invariants import LifecycleInvariants, WindowCapInvariant
from tests.metrics.loglib import NAMES, T0, Log


def _finding(log: Log) -> object:
    monitors = [WindowCapInvariant(2), LifecycleInvariants(bulk_marks_processing=True)]
    rules = RuleChecks(monitors)
    for chunk in log.chunks(cuts=(2,)):
        for m in monitors:
            m.feed(chunk, NAMES)
        rules.feed(chunk, NAMES)
    (f,) = findings_in(rules.result())
    return f


def test_held_rules_say_what_they_checked_and_set_aside() -> None:
    log = Log()
    log.created(T0, 0, 100, count=1)
    log.created(T0, 1, 101, count=2)
    log.created(T0, 2, 102, "milestone", count=3, placement="exact")  # uncapped: allowed
    f = _finding(log)
    assert f.severity is Severity.OK
    assert f.numbers["window_cap.checked"] == 2
    assert f.numbers["window_cap.over_cap_uncapped"] == 1
    assert f.sentence == (
        "All 3 rule checks held: window_cap (2 capped reservations; set aside: 1 uncapped "
        "milestone/new increments over the cap (§19.12)); one_active_per_type (3 creations); "
        "single_path_processing (0 single-path dispatches)."
    )


def test_a_broken_rule_fails_and_names_its_examples() -> None:
    log = Log()
    log.created(T0, 0, 100, count=3)  # a capped reservation over the cap of 2
    log.created(T0, 1, 100)  # a second active normal row of aid 100, not forced
    f = _finding(log)
    assert f.severity is Severity.FAIL
    assert f.sentence == (
        "2 rule(s) broken: window_cap: 1 of 2 capped reservations broke it; "
        "one_active_per_type: 1 of 2 creations broke it; held: single_path_processing."
    )
    assert [e["rule"] for e in f.examples] == ["window_cap", "one_active_per_type"]
