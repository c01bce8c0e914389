"""The findings' names in ``summary.json`` for the metric catalogue (:mod:`sim.metrics.catalogue`),
one line each, ``name | good direction | meaning``, in the catalogue's format.

Every finding writes its fixed fields (``findings.<finding>.severity`` and the rest, the first
block) and its numbers and thresholds under stable names (docs/report.md "Findings" documents
each finding); a finding that scores itself writes ``score``, ``score_warn`` and ``score_fail``.
"""

from __future__ import annotations

from typing import Final

FINDINGS: Final = """
findings.<finding>.severity | lower | ok, info, warn or fail (ranked in that order)
findings.<finding>.title | neither | what the finding judges
findings.<finding>.sentence | neither | the verdict with its numbers
findings.<finding>.mechanism | neither | why, in words
findings.<finding>.examples | neither | the worst examples (a list)
findings.<finding>.plots | neither | the report's plots that show it
findings.capacity.score | lower | peak day's demand over capacity (the score)
findings.capacity.score_warn | neither | the score from which it warns
findings.capacity.score_fail | neither | the score beyond which it fails
findings.capacity.by_day | neither | per local day: demand, uncapped rows, horizons (a list)
findings.capacity.capacity_per_day | neither | capped rows the windows take in a day
findings.capacity.demand_total | neither | capped rows requested
findings.capacity.first_saturated_day | neither | the first day demand exceeded capacity
findings.capacity.fluid_growth_h_per_day | lower | the fluid model's backlog trend, hours per day
findings.capacity.fluid_horizon_end_h | lower | the fluid model's backlog at the end, hours
findings.capacity.headroom | higher | capacity left on the peak day, as a share
findings.capacity.horizon_end_h | lower | a row's wait for a window at the end, hours
findings.capacity.horizon_growth_h_per_day | lower | that wait's trend, hours per day
findings.capacity.horizon_max_h | lower | the furthest any capped row was pushed, hours
findings.capacity.horizon_min_h | lower | the shortest wait since the first saturated day, hours
findings.capacity.horizon_peak_h | lower | the longest wait since the first saturated day, hours
findings.capacity.peak_day | neither | the day of the peak demand
findings.capacity.peak_demand | neither | capped rows requested on the peak day
findings.capacity.peak_share | lower | peak day's demand as a share of capacity
findings.capacity.run_share | lower | mean demand over the run's days as a share of capacity
findings.capacity.saturated_days | lower | days whose demand exceeded capacity
findings.capacity.spilled_rows | lower | fallback and exhausted rows
findings.capacity.uncapped_peak_share | neither | uncapped rows' peak share of capacity
findings.capacity.uncapped_total | neither | milestone and new rows
findings.capacity.thresholds.fail_share | neither | threshold
findings.capacity.thresholds.warn_share | neither | threshold
findings.levelling.rows | neither | capped rows placed
findings.levelling.pushed | lower | capped rows placed in a later window than their target's
findings.levelling.pushed_share | lower | pushed rows as a share
findings.levelling.delay_p99_s | lower | the worst type's p99 delay, seconds
findings.levelling.<type>.rows | neither | capped rows of the type
findings.levelling.<type>.pushed | lower | pushed rows of the type
findings.levelling.<type>.delay_<lstat>_s | lower | delay levelling added, seconds
findings.levelling.thresholds.warn_p99_s | neither | threshold
findings.levelling.thresholds.fail_p99_s | neither | threshold
findings.levelling.thresholds.warn_p99_archive_s | neither | threshold
findings.levelling.thresholds.fail_p99_archive_s | neither | threshold
findings.executed_load.peak_per_window | lower | most snapshots executed in one window
findings.executed_load.windows | neither | windows with snapshots
findings.executed_load.windows_over_cap | lower | windows that executed more than the cap
findings.executed_load.max_over_cap | lower | the worst window's excess over the cap
findings.executed_load.max_over_cap_share | lower | that excess as a share of the cap
findings.executed_load.over_cap_total | lower | snapshots over the cap, summed over windows
findings.executed_load.over_cap_uncapped_share | neither | excess share from uncapped rows
findings.executed_load.over_cap_carried_share | lower | excess share from rows run late
findings.executed_load.no_proxy_requests | lower | requests that found every proxy rate-limited
findings.executed_load.requests.<proxy>.peak | lower | most requests through the proxy in one window
findings.executed_load.requests.<proxy>.limit | neither | the proxy's limit per window
findings.executed_load.requests.<proxy>.windows_over | lower | windows over the proxy's limit
findings.executed_load.requests.<proxy>.bulk.peak | lower | most bulk requests in one window
findings.executed_load.requests.<proxy>.bulk.limit | neither | the bulk task limit per window
findings.executed_load.requests.<proxy>.bulk.windows_over | lower | windows over the bulk limit
findings.executed_load.thresholds.warn_over_cap_share | neither | threshold
findings.executed_load.thresholds.fail_over_cap_share | neither | threshold
findings.executed_load.thresholds.window_cap | neither | threshold
findings.executed_load.thresholds.request_limit.<proxy> | neither | threshold
findings.executed_load.thresholds.bulk_request_limit.<proxy> | neither | threshold
findings.milestones.tracked | neither | crossings of tracked songs
findings.milestones.tracked_captured | higher | tracked crossings captured in time
findings.milestones.tracked_missed | lower | tracked crossings missed
findings.milestones.tracked_undecided | neither | tracked crossings whose deadline is after the end
findings.milestones.latency_p50_s | lower | capture latency, seconds
findings.milestones.latency_p99_s | lower | capture latency, seconds
findings.milestones.latency_max_s | lower | capture latency, seconds
findings.milestones.bracket_p50_s | lower | bracket width, seconds
findings.milestones.bracket_p99_s | lower | bracket width, seconds
findings.milestones.missed.<cause> | lower | tracked misses by their first broken link
findings.milestones.untracked | neither | crossings of videos the design does not track
findings.milestones.untracked_captured | neither | of those, captured anyway
findings.milestones.untracked_missed | neither | of those, not followed
findings.milestones.untracked_missed.<cause> | neither | untracked misses by cause
findings.milestones.hidden | neither | crossings of hidden videos, not judged
findings.milestones.thresholds.capture_target_s | neither | threshold
findings.milestones.thresholds.fail_missed | neither | threshold
findings.milestones.thresholds.warn_latency_p99_s | neither | threshold
findings.milestones.thresholds.warn_bracket_p99_s | neither | threshold
findings.staleness.songs | neither | songs followed
findings.staleness.stale_songs | lower | available songs with a gap over the bound
findings.staleness.stale_gaps | lower | gaps over the bound
findings.staleness.longest_gap_h | lower | the longest gap of an available song, hours
findings.staleness.unavailable_songs | neither | songs stale while unavailable (excused)
findings.staleness.unavailable.<unavailable> | neither | excused songs by code
findings.staleness.thresholds.max_interval_h | neither | threshold
findings.staleness.thresholds.slack_h | neither | threshold
findings.staleness.thresholds.fail_stale_songs | neither | threshold
findings.lost_work.rows_created | neither | rows created
findings.lost_work.deleted | lower | rows deleted by cleanup
findings.lost_work.deleted.<type>.<status> | lower | deleted rows by type and status
findings.lost_work.deleted_during_fault | lower | deleted rows while a fault was on
findings.lost_work.deleted_never_taken_up | lower | deleted rows no job took up
findings.lost_work.finished_without_snapshot | lower | rows that finished without a snapshot
findings.lost_work.not_taken.<type>.<failed> | lower | those by type and final status
findings.lost_work.duplicates | lower | duplicate snapshots
findings.lost_work.redispatched | neither | rows dispatched again after a crash
findings.lost_work.jobs_lost | lower | jobs lost with a crashed worker
findings.lost_work.lost | lower | rows lost
findings.lost_work.lost_share | lower | lost rows as a share of rows created
findings.lost_work.lost_undecided | neither | rows still open at the end
findings.lost_work.thresholds.warn_lost | neither | threshold
findings.lost_work.thresholds.fail_lost_share | neither | threshold
findings.lateness.<type>.snapshots | neither | snapshots of the type with a due time
findings.lateness.<type>.p99_s | lower | p99 lateness, seconds
findings.lateness.<type>.tail.<part>_s | lower | one part of the latest 1 %'s lateness, s
findings.lateness.rebooked | neither | snapshots whose row replaced an earlier one
findings.lateness.rebook_mean_s | lower | mean time lost to rebooking, seconds
findings.lateness.thresholds.warn_p99_s | neither | threshold
findings.lateness.thresholds.fail_p99_s | neither | threshold
findings.ticks.iterations | neither | iterations of the ticks
findings.ticks.missed_slots | lower | tick slots missed
findings.ticks.missed_slots_during_faults | neither | of those, while a fault was on
findings.ticks.overlong_iterations | lower | iterations longer than their period
findings.ticks.peak_queue_depth | lower | most jobs waiting on the snapshot queue
findings.ticks.queue_wait_p99_s | lower | p99 wait of a job on the queue, seconds
findings.ticks.thresholds.warn_missed_slots | neither | threshold
findings.ticks.thresholds.warn_queue_wait_s | neither | threshold
findings.periodic.runs | neither | runs of the periodic jobs
findings.periodic.missed_slots | lower | slots nobody ran
findings.periodic.slots_run_twice | lower | slots run twice
findings.periodic.reentries | lower | runs that started while the job's previous run was on
findings.periodic.failed_runs | lower | runs that failed
findings.periodic.skipped_runs | neither | runs that skipped themselves
findings.periodic.interrupted_runs | lower | runs cut off by a crash
findings.periodic.offline_s | lower | time no scheduler ran the jobs, seconds
findings.periodic.thresholds.warn_twice | neither | threshold
findings.periodic.thresholds.warn_reentries | neither | threshold
findings.delivery.stalled | lower | jobs found stalled
findings.delivery.redelivered_stalled | neither | stalled jobs redelivered
findings.delivery.redelivered_retry | neither | failed deliveries retried
findings.delivery.redelivered_finished | neither | redelivered jobs that finished
findings.delivery.redelivered_rows_started | neither | rows a redelivered job started
findings.delivery.retried | neither | deliveries retried
findings.delivery.dropped_stalled_limit | lower | jobs dropped after too many stalls
findings.delivery.dropped_delivery_cap | lower | jobs dropped after too many deliveries
findings.delivery.duplicates_skipped | neither | duplicate deliveries skipped
findings.delivery.abandoned | lower | jobs abandoned
findings.delivery.lost | lower | jobs lost
findings.delivery.thresholds.warn_dropped | neither | threshold
findings.rules.<monitor>.violations | lower | violations of one invariant
findings.rules.<monitor>.checked | neither | events it checked
findings.rules.no_schedule_before_creation.allowed | neither | allowed exceptions
findings.rules.no_schedule_before_creation.clamped_to_now | neither | allowed exceptions
findings.rules.one_active_per_type.forced_parallel | neither | allowed exceptions
findings.rules.single_path_processing.redispatched | neither | allowed exceptions
findings.rules.single_path_processing.unmarked_bulk_overlap | lower | unmarked bulk overlaps
findings.rules.window_cap.exhausted | lower | rows inserted over the cap
findings.rules.window_cap.over_cap_uncapped | neither | uncapped increments over the cap
findings.write_path.rows_written | neither | rows written to the database
findings.write_path.rows_stored | neither | rows stored
findings.write_path.flushes | neither | flushes issued
findings.write_path.peak_backlog_rows | lower | most rows fetched but not yet written
findings.write_path.longest_backlog_s | lower | the longest backlog stretch, seconds
findings.write_path.backlog_stretches | neither | stretches with a backlog
findings.write_path.drained | higher | true when the backlog drained by the end
findings.write_path.backpressure_episodes | lower | times backpressure turned on
findings.write_path.backpressure_s | lower | time under backpressure, seconds
findings.write_path.dispatch_runs_held_back | lower | dispatcher runs held back by backpressure
findings.write_path.p99_connection_wait_s | lower | p99 wait for a database connection, seconds
findings.write_path.rows_lost_in_crash | lower | rows lost in a crash before their write
findings.write_path.thresholds.warn_drain | neither | threshold
findings.modes.mode_changes | neither | mode changes
findings.modes.peak_s | neither | time in peak mode, seconds
findings.modes.degraded_s | lower | time in degraded mode, seconds
findings.modes.taken_in_mode_rows | neither | cold rows deferred in a mode
findings.modes.backfilled_rows | neither | deferred rows back-filled after it
findings.modes.lost_rows | lower | deferred rows lost
findings.modes.longest_catch_up_s | lower | the longest catch-up after a mode, seconds
findings.modes.hot_p99_late_in_modes_s | lower | hot rows' p99 lateness in a mode, seconds
findings.modes.hot_p99_late_outside_s | lower | hot rows' p99 lateness outside one, seconds
findings.modes.thresholds.warn_lost | neither | threshold
findings.modes.thresholds.warn_catch_up | neither | threshold
findings.throttle.score | lower | the peak throttled share (the severity's score)
findings.throttle.score_warn | neither | the score from which it warns
findings.throttle.score_fail | neither | the score beyond which it fails
findings.throttle.answers | neither | upstream answers
findings.throttle.throttled | lower | throttled answers (-412, 429)
findings.throttle.throttled_share | lower | throttled answers as a share
findings.throttle.peak_share | lower | the peak window's throttled share
findings.throttle.blocked_412 | lower | -412 answers
findings.throttle.http_4xx | lower | plain 4xx answers
findings.throttle.http_4xx_answers | neither | answers a 4xx could have been
findings.throttle.http_4xx_retried | lower | 4xx answers retried (they should not be)
findings.throttle.storm_answers | neither | answers during a storm
findings.throttle.storm_throttled_share | lower | throttled share during a storm
findings.throttle.storm_held_back | neither | dispatches held back during a storm
findings.throttle.held_back | neither | dispatches held back by the adaptive rate
findings.throttle.rate_changes | neither | changes of the adaptive rate
findings.throttle.rate_drops | neither | cuts of the adaptive rate
findings.throttle.lowest_factor | neither | the lowest rate factor
findings.throttle.final_factor | higher | the rate factor at the end
findings.throttle.restored_after_s | lower | time to restore the full rate, seconds
findings.throttle.retry_after_honoured | neither | Retry-After answers honoured
findings.throttle.rate_limited_retries | neither | retries of rate-limited calls
findings.throttle.rate_limited_retry_median_s | neither | their median delay, seconds
findings.throttle.other_retries | neither | other retries
findings.throttle.other_retry_median_s | neither | their median delay, seconds
findings.throttle.thresholds.warn_share | neither | threshold
findings.throttle.thresholds.fail_share | neither | threshold
findings.throttle.thresholds.peak_window_s | neither | threshold
findings.throttle.thresholds.peak_min_answers | neither | threshold
"""
"""The findings' entries (``findings.<id>.*``)."""
