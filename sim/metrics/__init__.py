"""Metrics: pure streaming reducers over the event log."""

from sim.metrics.base import Histogram, Reducer, ReducerSink, percentiles
from sim.metrics.engine import EventCounts, IterationMetrics, JobMetrics, engine_reducers

__all__ = [
    "EventCounts",
    "Histogram",
    "IterationMetrics",
    "JobMetrics",
    "Reducer",
    "ReducerSink",
    "engine_reducers",
    "percentiles",
]
