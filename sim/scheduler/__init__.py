"""The CVSA scheduler's jobs on the engine: ticks, dispatchers, workers, cleanup, the feed."""

from sim.scheduler.deployment import CvsaModel, build_cvsa_model

__all__ = ["CvsaModel", "build_cvsa_model"]
