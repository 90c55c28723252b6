"""Local hypothesis strategies for the maps' tests: workloads with zeros, ties and tiny gaps."""

from __future__ import annotations

from hypothesis import strategies as st

levels = st.one_of(
    st.just(0.0),
    st.sampled_from([0.5, 1.0, 2.0, 5.0]),
    st.floats(0.0, 20.0, allow_nan=False, allow_infinity=False),
    st.floats(0.0, 1e-6, allow_nan=False),
)
service = st.one_of(st.just(0.0), st.sampled_from([1.0, 5.0]), st.floats(0.0, 20.0))
gap = st.one_of(st.just(0.0), st.sampled_from([1.0, 5.0]), st.floats(0.0, 20.0))
unif = st.floats(0.0, 1.0, exclude_max=True)


@st.composite
def sorted_vectors(draw, s):
    return sorted(draw(st.lists(levels, min_size=s, max_size=s)))


@st.composite
def ordered_pairs(draw, s):
    """(u, v) sorted with u <= v coordinatewise."""
    u = draw(sorted_vectors(s))
    bumps = draw(st.lists(st.one_of(st.just(0.0), st.floats(0.0, 5.0), st.floats(0.0, 1e-6)),
                          min_size=s, max_size=s))
    v = sorted(x + b for x, b in zip(u, bumps, strict=True))
    # sorting u + nonneg bumps keeps v >= u coordinatewise (order statistics are monotone)
    return u, v
