"""Named random streams derived from the scenario seed.

Every consumer of randomness asks for a stream by name (``"jitter"``, ``"upstream"``,
``"catalog"`` ...). Each stream is seeded from SHA-256 of ``(seed, name)``, so adding a consumer of
one stream never shifts another (style-anchors R9), and nothing depends on ``PYTHONHASHSEED``.
Rule code receives a stream as an argument and never touches the global generators (README
"Design rules" 3); ``random.random`` and friends are banned by ruff (pyproject ``banned-api``).
"""

from __future__ import annotations

import hashlib
import random

import numpy as np


def derive_seed(seed: int, *names: str) -> int:
    """A 64-bit seed for ``names`` under ``seed``: stable across processes and Python versions."""
    key = "/".join(["sim", str(seed), *names]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


class RandomStreams:
    """A tree of independent, reproducible random streams rooted at one seed.

    ``streams.stream("jitter")`` returns the same ``random.Random`` object for the same name
    within a run (so draws continue where they left off); ``streams.numpy("catalog")`` does the same
    for ``numpy.random.Generator``. ``streams.child("instance-2")`` roots a sub-tree, e.g. for a
    second scheduler instance that must not share draws with the first.
    """

    def __init__(self, seed: int, *, path: tuple[str, ...] = ()) -> None:
        self.seed = seed
        self.path = path
        self._py: dict[str, random.Random] = {}
        self._np: dict[str, np.random.Generator] = {}

    def stream(self, name: str) -> random.Random:
        """The ``random.Random`` stream called ``name`` (created on first use)."""
        rng = self._py.get(name)
        if rng is None:
            rng = random.Random(derive_seed(self.seed, *self.path, "py", name))
            self._py[name] = rng
        return rng

    def numpy(self, name: str) -> np.random.Generator:
        """The ``numpy.random.Generator`` stream called ``name`` (PCG64, created on first use)."""
        gen = self._np.get(name)
        if gen is None:
            gen = np.random.default_rng(derive_seed(self.seed, *self.path, "np", name))
            self._np[name] = gen
        return gen

    def fresh_numpy(self, name: str, *keys: int | str) -> np.random.Generator:
        """A new generator keyed by ``name`` and ``keys`` (e.g. one per video id).

        Unlike :meth:`numpy`, this does not remember the generator: the same keys always give the
        same draws, which is what per-video determinism ("V(aid, t) from (seed, aid)") needs.
        """
        return np.random.default_rng(
            derive_seed(self.seed, *self.path, "np", name, *(str(k) for k in keys))
        )

    def child(self, name: str) -> RandomStreams:
        """An independent sub-tree of streams."""
        return RandomStreams(self.seed, path=(*self.path, name))
