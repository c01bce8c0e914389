"""One vocabulary: the enums of sim.cvsa.vocabulary and everything derived from them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType, UpstreamErrorKind
from sim.events.cvsa_kinds import SCHEDULE_STATUS, SNAPSHOT_TYPE, UPSTREAM_ERROR
from sim.events.log import header_bytes
from sim.events.schema import ENUMS

SCHEDULER = Path(__file__).resolve().parents[2] / "sim" / "scheduler"


def test_word_tables_are_the_enums_in_order() -> None:
    # The order is part of the event-log format: a word's code is its position.
    assert SNAPSHOT_TYPE.words == ("new", "milestone", "normal", "archive")
    assert SCHEDULE_STATUS.words == (
        "pending",
        "processing",
        "completed",
        "failed",
        "no_proxy",
        "bili_error",
        "deleted",
    )
    assert UPSTREAM_ERROR.words == (
        "bili_code",
        "no_proxy",
        "fetch_error",
        "alicloud_error",
        "timeout",
        "http_429",
        "http_5xx",
        "http_4xx",  # appended (issue 28)
    )
    assert tuple(ScheduleType) == SNAPSHOT_TYPE.words
    assert tuple(ScheduleStatus) == SCHEDULE_STATUS.words
    assert tuple(UpstreamErrorKind) == UPSTREAM_ERROR.words
    assert SCHEDULE_STATUS.code(ScheduleStatus.BILI_ERROR) == 5
    assert SNAPSHOT_TYPE.word(2) == ScheduleType.NORMAL


def test_word_tables_are_declared_for_the_log_header() -> None:
    assert ENUMS["snapshot_type"] is SNAPSHOT_TYPE
    enums = json.loads(header_bytes([]))["enums"]
    assert enums["schedule_status"] == [s.value for s in ScheduleStatus]
    assert enums["snapshot_type"] == [t.value for t in ScheduleType]
    assert enums["upstream_error"] == [k.value for k in UpstreamErrorKind]


def _string_literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module except docstrings (string statements) and the names
    of random streams (``streams.stream("archive")`` names a seed, not a schedule type)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skip.add(id(node.value))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "stream"
        ):
            skip.update(id(arg) for arg in node.args)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


def test_the_scheduler_spells_no_status_type_or_error_kind_as_a_string() -> None:
    words = {w.value for e in (ScheduleType, ScheduleStatus, UpstreamErrorKind) for w in e}
    found = [
        f"{path.name}:{line}: {value!r}"
        for path in sorted(SCHEDULER.glob("*.py"))
        for line, value in _string_literals(path)
        if value in words
    ]
    assert found == [], "use the enums of sim.cvsa.vocabulary: " + ", ".join(found)


def test_the_guard_finds_a_literal(tmp_path: Path) -> None:
    module = tmp_path / "job.py"
    module.write_text('"""Doc."""\nSTATUS = "pending"\n', encoding="utf-8")
    assert _string_literals(module) == [(2, "pending")]


def test_every_fault_kind_has_its_word_in_the_log() -> None:
    from typing import get_args

    from sim.events.cvsa_kinds import FAULT_KIND
    from sim.scenario.faults import Fault

    union = get_args(Fault)[0]
    kinds = [get_args(m.model_fields["kind"].annotation)[0] for m in get_args(union)]
    assert sorted(kinds) == sorted(FAULT_KIND.words)
