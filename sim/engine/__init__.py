"""The discrete-event engines (virtual and real clock), processes, queues and job schedulers."""

from sim.engine.core import Engine, Process, SimulationError
from sim.engine.jobs import IterationLog, Job, JobFailed, JobScheduler, Queue, StallParams
from sim.engine.realtime import ConcurrentEngine, RealClockEngine
from sim.engine.virtual import VirtualEngine

__all__ = [
    "ConcurrentEngine",
    "Engine",
    "IterationLog",
    "Job",
    "JobFailed",
    "JobScheduler",
    "Process",
    "Queue",
    "RealClockEngine",
    "SimulationError",
    "StallParams",
    "VirtualEngine",
]
