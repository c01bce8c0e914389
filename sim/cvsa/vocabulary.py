"""The words of the scheduler: schedule types, schedule statuses, upstream error kinds, and the
statuses and triggers of a table-driven periodic job's runs (seed 001).

Each is one enum, declared once here; everything else derives from it: the port type hints
(:mod:`sim.ports`), the event-log code tables (:mod:`sim.events.cvsa_kinds`: a word's code is its
position here, written into every log header), the stores' encodings (the memory store's
one-byte columns, the SQL ``text`` columns, reference §2.1) and the rules (:mod:`sim.cvsa`).
The members are ``str`` (``StrEnum``), so a member equals, hashes and prints as its word.

The order of members is part of the event-log format: append, never reorder
(``tests/cvsa/test_vocabulary.py`` pins it).
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ScheduleType(StrEnum):
    """``snapshot_schedule.type`` (seed 000 "调度类型概览"; reference §2.1)."""

    NEW = "new"
    MILESTONE = "milestone"
    NORMAL = "normal"
    ARCHIVE = "archive"


class ScheduleStatus(StrEnum):
    """``snapshot_schedule.status`` (seed 000 "调度状态流转"; reference §2.1, §3), and ``deleted``
    for a row that cleanup removed (§12): the table never holds it, the event log does."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    NO_PROXY = "no_proxy"
    BILI_ERROR = "bili_error"
    DELETED = "deleted"


class ScheduleRule(StrEnum):
    """Which rule asked ``scheduleSnapshot`` for a row (reference §5's callers)."""

    DISPATCHER = "dispatcher"  # a dispatcher pass: milestone §11.5, regular §11.7, archive §13b
    FORCED = "forced"  # classifyVideo's four forced new rows (§13.2; seed 000 new 初始调度)
    CONTINUATION = "continuation"  # the next new row after a new snapshot (§9 step 5)
    REETA = "reeta"  # the re-ETA after a milestone snapshot (§9 step 7)
    BULK_RESCHEDULE = "bulk_reschedule"  # a bulk success reschedules normal rows (§10.3)
    RETRY = "retry"  # the deployed retry of a failed row (§9, §10.2, §10.4)


class UpstreamErrorKind(StrEnum):
    """How an upstream call failed (:class:`sim.ports.UpstreamError`; reference §9, §10, §14).

    The rules map each kind to the deployed outcome and to seed 004's error class
    (:mod:`sim.cvsa.retry`)."""

    BILI_CODE = "bili_code"  # the API body carried a non-zero code (§9 step 4)
    NO_PROXY = "no_proxy"  # every proxy rate-limited right now (§14.3)
    FETCH_ERROR = "fetch_error"  # the request failed or was aborted (§14.4)
    ALICLOUD_ERROR = "alicloud_error"  # a non-200 answer through Ali FC (§14.4)
    TIMEOUT = "timeout"
    HTTP_429 = "http_429"
    HTTP_5XX = "http_5xx"
    HTTP_4XX = "http_4xx"  # a 4xx that is not 429 (seed 004: not retryable), issue 28


class RunStatus(StrEnum):
    """``scheduled_job_run.status``: a run of a table-driven periodic job (seed 001 "调度语义")."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"  # 跳过本次, or a run its job's own conditions declined


class RunTrigger(StrEnum):
    """``scheduled_job_run.trigger``: why a run happened (seed 001 "调度语义")."""

    SCHEDULE = "schedule"  # due: next_run_at <= now
    MANUAL = "manual"  # 立即执行: run_requested_at was set
    SKIP = "skip"  # 跳过本次: the history row of a skipped run


class VideoUnavailable(IntEnum):
    """bilibili's view-API codes for a video without stats, which CVSA stores in
    ``bilibili_metadata.status`` (reference §2.6, §9, §16.12); the world draws them
    (:mod:`sim.world.availability`), findings and reports name them."""

    DELETED = -404  # the video does not exist (deleted; also before an arrival is published)
    HIDDEN = 62002  # invisible: hidden by the uploader or by moderation
    UNDER_REVIEW = 62004  # under review; visible again after it

    @property
    def word(self) -> str:
        return self.name.lower()


class TrafficMode(StrEnum):
    """Seed 003 §5.1's traffic modes (预设几档流量模式: 默认模式、高峰模式、降级模式)."""

    DEFAULT = "default"
    PEAK = "peak"  # a time-of-day schedule: the evening peak
    DEGRADED = "degraded"  # the write backlog passed its mark
