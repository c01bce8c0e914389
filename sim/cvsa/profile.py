"""Profiles: every behaviour on which the design note and the deployed CVSA code differ.

A :class:`Switches` value decides each difference; the rules and jobs read it, never the profile
name. Two profiles are named (style-anchors R8: "faithful" versus "fixed" is a scenario choice):

* ``design`` (:data:`DESIGN`): the design note (seed 000) where it speaks; **where the note is
  silent, the deployed code**. Each such value is marked "note silent" below and in the docs.
* ``cvsa-2026`` (:data:`CVSA_2026`): the deployed code at 421da02, bugs included (reference §16,
  §19).

A scenario picks a profile and may override single switches in its ``[switches]`` table (the
scenario layer validates the values); :func:`resolve` combines the two. The design's numbers,
each profile's own, are :class:`~sim.cvsa.params.Params` (:func:`params_of`, with a
scenario's ``[design]`` overrides).
``docs/profiles.md`` is generated from both by :mod:`sim.scenario.profile_doc`
(``python -m sim.scenario.profile_doc docs/profiles.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from sim.cvsa.param_rules import ParamProblem, check_params
from sim.cvsa.params import CVSA_2026_PARAMS, DESIGN_PARAMS, Params

RetryPolicy = Literal["backoff", "cvsa"]


def _meta(doc: str, cite: str, basis: str) -> dict[str, str]:
    """Field metadata: what the switch changes, where it is specified, why design has its value."""
    return {"doc": doc, "cite": cite, "basis": basis}


SILENT: Final = "note silent: deployed"


@dataclass(frozen=True, kw_only=True)
class Switches:
    """One value per design-vs-deployed difference (reference §16); see ``docs/profiles.md``."""

    # --- adjustSnapshotTime (§6) ---
    fallback_bare_window_start: bool = field(
        metadata=_meta(
            "the fallback returns the bare window start (no jitter, may be in the past) instead of "
            "jitter and never-before-now",
            "reference §6.2 step 3, §16.9, §19.4",
            "note: 同上逻辑",
        )
    )
    cleanup_decrements: bool = field(
        metadata=_meta(
            "cleanup decrements the windows of the pending rows it deletes",
            "seed 000; reference §6.4, §12, §16.11",
            "issue text (the note is silent)",
        )
    )
    # --- ticks (§7, §8) ---
    single_tick_takes_archive: bool = field(
        metadata=_meta(
            "snapshotTick (type != normal) also takes archive rows",
            "reference §7.1, §16.1, §19.9",
            "note: archive is scanned by bulkSnapshotTick (类型概览)",
        )
    )
    bulk_aids_as_ids_bug: bool = field(
        metadata=_meta(
            "the bulk tick passes aids as schedule ids: batch rows stay pending (re-enqueued every "
            "tick) and rows whose id equals an aid become processing",
            "reference §8.3, §16.3, Q4",
            "issue text (a bug)",
        )
    )
    # --- new rows (§9, §13) ---
    new_successors_forced: bool = field(
        metadata=_meta(
            "each new continuation is forced, so the 4 initial rows become 4 parallel chains "
            "(design: only the initial rows are forced; a continuation is dropped while another "
            "new row is active)",
            "reference §9 step 5, §13.3, §16.4",
            "issue text (the 4 initial rows must be forced for the note's list to work)",
        )
    )
    new_stop_at_bounds: bool = field(
        metadata=_meta(
            "the new continuation also stops at exactly 48 h of age or exactly 10 views/h "
            "(deployed: only beyond them, age > 48 h or vph < 10)",
            "seed 000; reference §9 step 5",
            "note: 发布时间 < 48小时且速度 > 10/小时 → 继续",
        )
    )
    collect_songs_fallback: bool = field(
        metadata=_meta(
            "collectSongs adds a +10 min new row for label != 0 videos missing from songs",
            "reference §13.2, §16.4",
            SILENT,
        )
    )
    # --- milestones (§5, §9, §11) ---
    piecewise_factor: bool = field(
        metadata=_meta(
            "acceleration factor is piecewise (above 455 views to go: log10(x + 1), no +0.601)",
            "seed 000; reference §11.4, §16.6",
            "note: one formula",
        )
    )
    wide_milestone_candidates: bool = field(
        metadata=_meta(
            "milestone candidates add set A (songs in [60k, 100k), [900k, 1M) or above 1M)",
            "seed 000; reference §11.1, §16.5",
            "note: near a milestone or ETA < 2300 h",
        )
    )
    milestone_reeta_clamped: bool = field(
        metadata=_meta(
            "the re-ETA after a milestone snapshot uses the dispatcher's [2 s, 1.2 h] clamp "
            "(deployed: unclamped, up to 144 h)",
            "seed 000; reference §9 step 7, §16.7",
            "note: 重新计算ETA并调度下一次, read as the dispatcher's rule",
        )
    )
    milestone_move_processing: bool = field(
        metadata=_meta(
            "an earlier milestone target moves the latest active row even when it is processing "
            "(design: the latest pending row)",
            "seed 000; reference §5 step 2, §19.11",
            "note: 已有同类型待处理调度",
        )
    )
    milestone_reached_strict: bool = field(
        metadata=_meta(
            "after a milestone snapshot, the milestone counts as reached only above it (exactly "
            "100,000 views is not reached; the re-ETA aims at 1M)",
            "seed 000; reference §9 step 7",
            "note: 若已达成成就则不再调度 (reached at the milestone)",
        )
    )
    # --- regular rows (§10, §11) ---
    regular_target_from_last_snapshot: bool = field(
        metadata=_meta(
            "the regular dispatcher targets last snapshot + interval clamped to >= now + 1 ms "
            "(design: now + interval)",
            "reference §11.7, §16.8",
            "issue text (the note gives only the interval)",
        )
    )
    bulk_reschedules_normal: bool = field(
        metadata=_meta(
            "every bulk success reschedules normal rows at now + interval (design: the 30-min "
            "dispatcher does)",
            "reference §10.3, §16.8",
            "note: normal 调度来源 = dispatchRegularSnapshots",
        )
    )
    dispatch_time_caps: bool = field(
        metadata=_meta(
            "the regular (25 min) and archive (30 min) dispatchers stop when a run lasts longer",
            "reference §11.7, §13b.4, §16.8, §16.10",
            "issue text (the note names no cap)",
        )
    )
    dispatcher_locks: bool = field(
        metadata=_meta(
            "the regular and archive dispatchers skip a run while their Redis lock "
            "(cvsa:lock:<name>, TTL 30 min) is held by another run",
            "reference §2.8, §11.7 steps 1-2, §13b.1",
            SILENT,
        )
    )
    lock_release_bug: bool = field(
        metadata=_meta(
            "a dispatcher run that found its lock held still releases it (the finally block), "
            "freeing the other run's lock",
            "reference §11.7 step 1, §13b.1, §15",
            "issue text (a bug)",
        )
    )
    # --- archive (§13b) ---
    archive_keeps_time_of_day: bool = field(
        metadata=_meta(
            "archive targets keep the time of day (design: next Saturday 00:00; non-songs "
            "from next Monday 00:00)",
            "seed 000; reference §13b.2, §16.10",
            "note: 下周六 / 下周一 (dates; 00:00 as before 87d9066)",
        )
    )
    bulk_failure_archive_to_normal: bool = field(
        metadata=_meta(
            "a failed or proxy-less bulk batch re-queues its archive rows as normal",
            "reference §4, §10.2, §10.4, §16.10",
            "note: normal rows are for songs (在songs表中)",
        )
    )
    # --- errors and retries (§9, §10) ---
    bili_error_blocks_aid: bool = field(
        metadata=_meta(
            "a bilibili error code blocks every later single-path snapshot of the aid (rows stay "
            "processing until cleanup)",
            "reference §9 step 2, §16.12",
            SILENT,
        )
    )
    retry_policy: RetryPolicy = field(
        metadata=_meta(
            "backoff: seed 004 exponential backoff with jitter; cvsa: the deployed retry table",
            "seed 004; reference §9, §10.2-10.4, §16.13, §17",
            "issue text: seed 004",
        )
    )


DESIGN: Final = Switches(
    fallback_bare_window_start=False,  # seed 000: the fallback loop is "同上逻辑"
    cleanup_decrements=True,  # issue text: design decrements the windows of deleted pending rows
    single_tick_takes_archive=False,  # seed 000: snapshotTick handles milestone and new
    bulk_aids_as_ids_bug=False,
    new_successors_forced=False,  # initial 4 rows forced, continuations not (one chain)
    new_stop_at_bounds=True,  # seed 000: 继续 only when < 48小时 and > 10/小时
    collect_songs_fallback=True,  # note silent: deployed (reference §13.2)
    piecewise_factor=False,  # seed 000: log(4.5 / log(x + 100), 1.054) + 0.601
    wide_milestone_candidates=False,  # seed 000: near a milestone or ETA < 2300 h
    milestone_reeta_clamped=True,  # seed 000: re-ETA "重新计算ETA并调度下一次", same clamp
    milestone_move_processing=False,  # seed 000: "已有同类型待处理调度"
    milestone_reached_strict=False,  # seed 000: 若已达成成就则不再调度
    regular_target_from_last_snapshot=False,
    bulk_reschedules_normal=False,  # seed 000: normal rows come from dispatchRegularSnapshots
    dispatch_time_caps=False,
    dispatcher_locks=True,  # note silent: deployed (reference §11.7, §13b)
    lock_release_bug=False,
    archive_keeps_time_of_day=False,  # seed 000: 下周六 / 下周一到再下周一
    bulk_failure_archive_to_normal=False,
    bili_error_blocks_aid=True,  # note silent: deployed (reference §9 step 2)
    retry_policy="backoff",  # seed 004
)
"""The ``design`` profile: seed 000, and the deployed code where the note is silent."""

CVSA_2026: Final = Switches(
    fallback_bare_window_start=True,
    cleanup_decrements=False,
    single_tick_takes_archive=True,
    bulk_aids_as_ids_bug=True,
    new_successors_forced=True,
    new_stop_at_bounds=False,
    collect_songs_fallback=True,
    piecewise_factor=True,
    wide_milestone_candidates=True,
    milestone_reeta_clamped=False,
    milestone_move_processing=True,
    milestone_reached_strict=True,
    regular_target_from_last_snapshot=True,
    bulk_reschedules_normal=True,
    dispatch_time_caps=True,
    dispatcher_locks=True,
    lock_release_bug=True,
    archive_keeps_time_of_day=True,
    bulk_failure_archive_to_normal=True,
    bili_error_blocks_aid=True,
    retry_policy="cvsa",
)
"""The ``cvsa-2026`` profile: the deployed code at 421da02 (reference §16, §19)."""

PROFILES: Final[Mapping[str, Switches]] = {"design": DESIGN, "cvsa-2026": CVSA_2026}

SWITCH_NAMES: Final = tuple(f.name for f in dataclasses.fields(Switches))


PROFILE_PARAMS: Final[Mapping[str, Params]] = {
    "design": DESIGN_PARAMS,
    "cvsa-2026": CVSA_2026_PARAMS,
}
"""Each profile's numbers (:mod:`sim.cvsa.params`): most shared, the cap and the look-backs not."""

PARAM_NAMES: Final = tuple(f.name for f in dataclasses.fields(Params))


class UnknownSwitch(ValueError):
    """An override names no switch, or a profile name is unknown (the user's input)."""


def _known_profile(profile_name: str) -> None:
    if profile_name not in PROFILES:
        raise UnknownSwitch(
            f"unknown profile {profile_name!r} (known profiles: {', '.join(PROFILES)})"
        )


def resolve(profile_name: str, overrides: Mapping[str, object]) -> Switches:
    """The switches of ``profile_name`` with ``overrides`` applied (reference §16).

    Args:
        profile_name: ``"design"`` or ``"cvsa-2026"``.
        overrides: switch name to value, already checked by the scenario layer
            (``SwitchOverrides.values()``): durations in ms, None for "unbounded"/"never".

    Raises:
        UnknownSwitch: for an unknown profile or switch name; the message lists the known ones.
    """
    _known_profile(profile_name)
    unknown = sorted(set(overrides) - set(SWITCH_NAMES))
    if unknown:
        raise UnknownSwitch(
            f"unknown switch(es) {', '.join(unknown)} (known switches: {', '.join(SWITCH_NAMES)})"
        )
    changes: dict[str, Any] = dict(overrides)
    return dataclasses.replace(PROFILES[profile_name], **changes)


class InvalidParams(ValueError):
    """Overrides of the design's numbers that break a rule of :func:`check_params`."""

    def __init__(self, problems: list[ParamProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.name} {p.rule} (got {p.value!r})" for p in problems))


def params_of(profile_name: str, overrides: Mapping[str, object] | None = None) -> Params:
    """The design's numbers under ``profile_name`` with ``overrides`` (a scenario's
    ``[design]`` table, already typed by the scenario layer) applied.

    Raises:
        UnknownSwitch: for an unknown profile or parameter name.
        InvalidParams: when the combination breaks a rule (:func:`check_params`).
    """
    _known_profile(profile_name)
    base = PROFILE_PARAMS[profile_name]
    if not overrides:
        return base
    unknown = sorted(set(overrides) - set(PARAM_NAMES))
    if unknown:
        raise UnknownSwitch(f"unknown parameter(s) {', '.join(unknown)}")
    changes: dict[str, Any] = dict(overrides)
    params = dataclasses.replace(base, **changes)
    problems = check_params(params)
    if problems:
        raise InvalidParams(problems)
    return params
