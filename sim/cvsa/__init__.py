"""The CVSA scheduler model: pure, sans-IO rules (reference ``cvsa-scheduler.md``; seed 000).

Nothing in this package awaits, reads a clock or touches a global random generator: ``now`` and
random streams are arguments, and multi-step procedures whose races matter (the window search)
are generators that yield their effects (style-anchors R1, R2, R8). The engine-facing jobs are
built on top of these functions.

Modules:
    vocabulary   the words: schedule types, schedule statuses, upstream error kinds
    profile      the design-vs-deployed switches and the two named profiles
    params       the design's numbers (``Params``), which both profiles share, with citations
    milestones   milestone ladder, acceleration factor, ETA
    intervals    regular intervals, new-song continuation, regular target
    windows      adjustSnapshotTime as an effect generator; window keys
    calendar     next Saturday / next Monday archive targets
    retry        seed-004 backoff and the deployed retry table
    lifecycle    the status state machine of a schedule row
    schedule     scheduleSnapshot's decision (§5)
    ticks        tick bounds, orders, batches and priorities; cleanup cutoff
    snapshots    the snapshot record and the closest-snapshot lookups
    jsmath       JavaScript number semantics the formulas depend on
"""
