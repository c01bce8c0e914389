"""The virtual-clock engine: event heap, processes, queues and job schedulers."""

from sim.engine.core import Engine, Process, SimulationError
from sim.engine.jobs import Job, JobFailed, JobScheduler, Queue

__all__ = ["Engine", "Job", "JobFailed", "JobScheduler", "Process", "Queue", "SimulationError"]
