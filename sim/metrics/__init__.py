"""Metrics: pure streaming reducers over the event log."""

from sim.metrics.base import Reducer, ReducerSink, Samples, percentiles
from sim.metrics.engine import EventCounts, IterationMetrics, JobMetrics, engine_reducers

__all__ = [
    "EventCounts",
    "IterationMetrics",
    "JobMetrics",
    "Reducer",
    "ReducerSink",
    "Samples",
    "engine_reducers",
    "percentiles",
]
