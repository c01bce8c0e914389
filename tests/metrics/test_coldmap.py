"""ColdMap: a dict whose quiet int entries live in sorted arrays behaves like a dict."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.metrics.invariants.coldmap import ColdMap

# One batch: the keys it touches, then (key, value or None to delete) writes among them.
batches = st.lists(
    st.lists(
        st.tuples(st.integers(0, 40), st.one_of(st.none(), st.integers(0, 2**40), st.just("list"))),
        max_size=20,
    ),
    max_size=15,
)


@settings(max_examples=200, deadline=None)
@given(batches, st.integers(1, 8), st.integers(1, 5), st.booleans())
def test_a_cold_map_holds_what_a_dict_holds(
    batches: list[list[tuple[int, object]]], limit: int, block: int, pickled: bool
) -> None:
    """``block`` that small moves the arrays' entries in many blocks, as 22M entries do; a
    pickled map is what the reducer process receives (its arrays view the pickle's bytes)."""
    cold: ColdMap[list[int]] = ColdMap(warm_limit=limit, block=block)
    plain: dict[int, object] = {}
    for batch in batches:
        cold.warm(np.array([k for k, _ in batch], dtype=np.int64))
        for key, value in batch:
            assert cold.hot.get(key) == plain.get(key)  # every touched key was warmed
            if value is None:
                cold.hot.pop(key, None)
                plain.pop(key, None)
            else:
                stored = [key] if value == "list" else value
                cold.hot[key] = stored
                plain[key] = stored
        cools = len(cold.hot) >= limit
        cold.cool()
        assert len(cold) == len(plain)
        assert sorted(cold.items()) == sorted(plain.items())
        assert list(cold._keys) == sorted(cold._keys)  # warm() searches them
        if cools:  # only lists stay in the dict
            assert all(isinstance(v, list) for v in cold.hot.values())
        if pickled:
            cold = pickle.loads(pickle.dumps(cold, protocol=5))


def test_warming_moves_entries_out_of_the_arrays_once() -> None:
    cold: ColdMap[list[int]] = ColdMap(warm_limit=1)
    cold.hot.update({5: 50, 1: 10, 9: 90})
    cold.cool()
    assert cold.hot == {}
    cold.warm(np.array([9, 9, 4, 1], dtype=np.int64))  # repeats and an absent key
    assert cold.hot == {9: 90, 1: 10}
    cold.warm(np.array([9], dtype=np.int64))  # already warm: the dict's value stands
    cold.hot[9] = 91
    cold.warm(np.array([9, 5], dtype=np.int64))
    assert cold.hot == {9: 91, 1: 10, 5: 50}
    assert sorted(cold.items()) == [(1, 10), (5, 50), (9, 91)]


def test_values_are_int32_until_one_needs_more() -> None:
    cold: ColdMap[list[int]] = ColdMap(warm_limit=1)
    cold.hot.update({5: 50, 1: 2**31 - 1})
    cold.cool()
    assert cold._vals.dtype == np.int32  # 12 bytes an entry, not 16
    cold.hot[7] = 2**31  # a row id past 2^26 with its flags
    cold.cool()
    assert cold._vals.dtype == np.int64
    assert sorted(cold.items()) == [(1, 2**31 - 1), (5, 50), (7, 2**31)]
    cold.warm(np.array([1], dtype=np.int64))
    assert cold.hot == {1: 2**31 - 1}
