"""Public test helpers, like ``trio.testing``: the backend contract suite and engine harnesses."""

from sim.testing.contracts import CHECKS, ContractError
from sim.testing.harness import Recorder, run_engine

__all__ = ["CHECKS", "ContractError", "Recorder", "run_engine"]
