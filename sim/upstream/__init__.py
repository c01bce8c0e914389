"""The simulated upstream: bilibili through rate-limited proxies, with faults (reference §14)."""

from sim.upstream.limiter import Gcra, MultiTierLimiter
from sim.upstream.network import NetworkFaults, SimulatedUpstream

__all__ = ["Gcra", "MultiTierLimiter", "NetworkFaults", "SimulatedUpstream"]
