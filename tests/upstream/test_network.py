"""The simulated network's own draws."""

from __future__ import annotations

import random

import pytest

from sim.upstream.network import lognormal_draw, shuffle_draw


@pytest.mark.parametrize(("mu", "sigma"), [(5.3, 0.4), (0.0, 1.0), (-2.0, 0.05), (7.0, 2.5)])
def test_lognormal_draw_is_lognormvariate_draw_for_draw(mu: float, sigma: float) -> None:
    ours, stdlib = random.Random(20310106), random.Random(20310106)
    for _ in range(5_000):
        assert lognormal_draw(ours, mu, sigma) == stdlib.lognormvariate(mu, sigma)
    assert ours.random() == stdlib.random()  # and left each stream at the same place


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 17])
def test_shuffle_draw_is_random_shuffle_draw_for_draw(size: int) -> None:
    ours, stdlib = random.Random(20310107), random.Random(20310107)
    for _ in range(2_000):
        mine, theirs = [f"p{i}" for i in range(size)], [f"p{i}" for i in range(size)]
        shuffle_draw(ours, mine)
        stdlib.shuffle(theirs)
        assert mine == theirs
    assert ours.random() == stdlib.random()  # and left each stream at the same place
