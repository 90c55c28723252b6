"""The building blocks of maps in :mod:`recursions.vectors`, against their naive twins."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from recursions.vectors import kth_smallest
from tests import naive

VALUES = st.lists(st.one_of(st.floats(0.0, 1e6), st.sampled_from([0.0, 1.0, 2.5])),
                  min_size=1, max_size=60)


@given(VALUES, st.data())
def test_kth_smallest_is_the_sorted_values_kth(values, data):
    x = np.array([*values, -1.0, 7.0])  # entries past n are not ranked
    n = len(values)
    k = data.draw(st.integers(1, n))
    scratch = np.full(n + 3, np.nan)
    before = x.copy()
    assert kth_smallest(x, n, k, scratch) == naive.kth_smallest(x, n, k)
    np.testing.assert_array_equal(x, before)  # x itself is left as it was
