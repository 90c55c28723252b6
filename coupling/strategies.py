"""Hypothesis strategies for property tests of random maps on sorted workload vectors.

This module imports :mod:`hypothesis` (a test dependency: ``pip install 'queue-recursions[test]'``);
nothing in the library imports it. The strategies put weight on the cases where maps on sorted
vectors break: zero coordinates, ties, tiny gaps (``1e-9``), ``sigma`` or ``tau`` equal to zero or
to each other, routing uniforms on the rank boundaries ``k / S``.

Typical use, with :func:`coupling._monotone.assert_monotone` (not run here)::

    import recursions as rc
    from hypothesis import given
    from coupling._monotone import assert_monotone
    from coupling.strategies import innovations_for, pairs_for

    SYSTEM = rc.Envelope(rc.JpSW(4, 1))

    @given(pairs_for(SYSTEM), innovations_for(SYSTEM))
    def test_envelope_is_monotone(pair, innovation):
        assert_monotone(SYSTEM, pair, innovation)

Strategies
----------
=============================  ===================================================================
``workloads()``                 one workload level ``>= 0`` (zeros, round values, tiny values)
``sorted_workloads(S)``         a sorted vector of ``S`` levels (``numpy.ndarray``); with
                                ``blocks=[2, 2]`` sorted within each block
``ordered_pairs(S, split)``     ``(u, v)`` with ``u ≺ v``; with ``split = p`` both share ``w[:p]``;
                                ``blocks=`` for separately sorted blocks
``times()``                     one service or interarrival time ``>= 0`` (zeros, round values,
                                ``1e-9``)
``uniforms(servers)``           one routing uniform in ``[0, 1)``, on the rank boundaries
                                ``k / S`` and just below them
``innovations(uniforms)``       ``(sigma, tau)`` or ``(sigma, tau, uniforms)``
``states_for(system)``          valid states of ``system`` (each of ``system.blocks`` sorted)
``pairs_for(system)``           ordered pairs of valid states of ``system`` (any system, a
                                :class:`~recursions.Map` included)
``innovations_for(system)``     innovations with ``system.uniforms`` routing uniforms
=============================  ===================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from coupling._layout import layout, sizes
from recursions import System
from recursions.common import check_int, check_positive
from recursions.model import check_system

__all__ = [
    "innovations",
    "innovations_for",
    "ordered_pairs",
    "pairs_for",
    "sorted_workloads",
    "states_for",
    "times",
    "uniforms",
    "workloads",
]

_ROUND = [0.5, 1.0, 2.0, 5.0, 10.0]
_ONE_MINUS = float(np.nextafter(1.0, 0.0))


def _check_system(system: Any) -> System:
    check_system(system, needs_map="a strategy of states and innovations")
    return system


def workloads(max_value: float = 20.0) -> st.SearchStrategy[float]:
    """One workload level in ``[0, max_value]``, biased to zero, ties and tiny values.

    Parameters
    ----------
    max_value : float, default 20.0
        Largest level (``> 0``).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of float

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> find(workloads(), lambda x: x > 0, settings=settings(database=None)) > 0
    True
    """
    m = check_positive(max_value, "max_value")
    return st.one_of(
        st.just(0.0),
        st.sampled_from([x for x in _ROUND if x <= m]),
        st.floats(0.0, m, allow_nan=False, allow_infinity=False),
        st.sampled_from([1e-9, 1e-6]),
        st.floats(0.0, min(1e-6, m), allow_nan=False),
    )


def _sorted_array(xs: list[float]) -> np.ndarray:
    return np.sort(np.asarray(xs, dtype=np.float64))


def _check_blocks(blocks: Any, total: int, name: str) -> list[int]:
    """Block sizes (each ``>= 1``) summing to ``total``; ``None`` is one block."""
    if blocks is None:
        return [total] if total else []
    try:
        out = [check_int(b, name, 1) for b in blocks]
    except TypeError:
        raise TypeError(f"{name} must be a sequence of block sizes (integers >= 1), got "
                        f"{blocks!r}") from None
    if sum(out) != total:
        raise ValueError(f"{name} must sum to {total}, got {out}")
    return out


def sorted_workloads(servers: int, max_value: float = 20.0, *,
                     blocks: Any = None) -> st.SearchStrategy[np.ndarray]:
    """A sorted workload vector of length ``servers`` (float64 array).

    Parameters
    ----------
    servers : int
        Vector length ``>= 1``.
    max_value : float, default 20.0
        Largest level.
    blocks : sequence of int, optional
        Sizes of consecutive separately sorted blocks, summing to ``servers`` (as for
        :class:`recursions.Map`); default one block.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of numpy.ndarray

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> w = find(sorted_workloads(3), lambda w: w[-1] > 0, settings=settings(database=None))
    >>> bool((w[:-1] <= w[1:]).all() and w.min() >= 0)
    True
    >>> w = find(sorted_workloads(4, blocks=[2, 2]), lambda w: w[1] > w[2],
    ...          settings=settings(database=None))
    >>> bool(w[0] <= w[1] and w[2] <= w[3])
    True
    """
    s = check_int(servers, "servers", 1)
    parts = _check_blocks(blocks, s, "blocks")
    if len(parts) == 1:
        return st.lists(workloads(max_value), min_size=s, max_size=s).map(_sorted_array)
    return st.tuples(*(sorted_workloads(n, max_value) for n in parts)).map(np.concatenate)


_bumps = st.one_of(
    st.just(0.0),
    st.sampled_from([1e-9, 0.5, 1.0]),
    st.floats(0.0, 5.0, allow_nan=False),
    st.floats(0.0, 1e-6, allow_nan=False),
)


@st.composite
def _ordered_block(draw: Any, f: int, max_value: float) -> tuple[np.ndarray, np.ndarray]:
    u = draw(sorted_workloads(f, max_value))
    if draw(st.booleans()):  # a zero first coordinate, against a possibly tiny one
        u[0] = 0.0
    bumps = np.asarray(draw(st.lists(_bumps, min_size=f, max_size=f)), dtype=np.float64)
    # sorting u + non-negative bumps keeps v ≻ u: order statistics are monotone
    return u, np.sort(u + bumps)


@st.composite
def _ordered_pairs(draw: Any, split: int, blocks: list[int],
                   max_value: float) -> tuple[np.ndarray, np.ndarray]:
    parts = [draw(_ordered_block(f, max_value)) for f in blocks]
    u = np.concatenate([a for a, _ in parts])
    v = np.concatenate([b for _, b in parts])
    if split:
        block = draw(sorted_workloads(split, max_value))
        u = np.concatenate([block, u])
        v = np.concatenate([block, v])
    return u, v


def ordered_pairs(servers: int, split: int = 0, max_value: float = 20.0, *,
                  blocks: Any = None) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """Pairs ``(u, v)`` of sorted vectors with ``u ≺ v`` coordinatewise (ties and ``u = v`` too).

    Parameters
    ----------
    servers : int
        Vector length ``>= 1``.
    split : int, default 0
        With ``split = p > 0`` the states start with an exogenous block ``w[:p]``, sorted (a
        :class:`~recursions.SplitBound` state): ``u`` and ``v`` share it. ``0 <= split <
        servers``.
    max_value : float, default 20.0
        Largest level of ``u`` (``v`` may exceed it by the bumps).
    blocks : sequence of int, optional
        Sizes of the separately sorted blocks after the shared one (summing to ``servers -
        split``; default one block), as declared by ``rc.Map(..., blocks=[2, 2])``. These
        blocks are not shared: ``u`` and ``v`` are sorted within each and ordered in each.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of tuple of numpy.ndarray

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> u, v = find(ordered_pairs(3), lambda p: (p[0] < p[1]).any(),
    ...             settings=settings(database=None))
    >>> bool((u <= v).all())
    True
    >>> u, v = find(ordered_pairs(4, blocks=[2, 2]), lambda p: p[1][1] > p[1][2],
    ...             settings=settings(database=None))
    >>> bool((u <= v).all() and v[0] <= v[1] and v[2] <= v[3])
    True
    """
    s = check_int(servers, "servers", 1)
    p = check_int(split, "split", 0)
    if p >= s:
        raise ValueError(f"split must be in [0, servers - 1] = [0, {s - 1}], got {p}")
    return _ordered_pairs(p, _check_blocks(blocks, s - p, "blocks"), float(max_value))


def times(max_value: float = 50.0) -> st.SearchStrategy[float]:
    """One service or interarrival time in ``[0, max_value]``: zeros, round values, ``1e-9``.

    Parameters
    ----------
    max_value : float, default 50.0
        Largest time (``> 0``).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of float

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> 0 < find(times(), lambda t: t > 0, settings=settings(database=None)) <= 50
    True
    """
    m = check_positive(max_value, "max_value")
    return st.one_of(
        st.just(0.0),
        st.sampled_from([x for x in [*_ROUND, 1e-9] if x <= m]),
        st.floats(0.0, m, allow_nan=False, allow_infinity=False),
    )


def uniforms(servers: int | None = None) -> st.SearchStrategy[float]:
    """One routing uniform in ``[0, 1)``, biased to 0, 1/2 and the largest float below 1.

    With ``servers`` given, also the rank boundaries ``k / servers`` and the floats just
    below them, where ``int(u * servers)`` changes.

    Parameters
    ----------
    servers : int, optional
        Number of servers (``>= 1``).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of float

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> u = find(uniforms(4), lambda u: u > 0.5, settings=settings(database=None))
    >>> 0.5 < u < 1
    True
    """
    special = [0.0, 0.5, _ONE_MINUS]
    if servers is not None:
        s = check_int(servers, "servers", 1)
        special += [k / s for k in range(1, s)]
        special += [float(np.nextafter(k / s, 0.0)) for k in range(1, s + 1)]
    return st.one_of(st.sampled_from(special), st.floats(0.0, 1.0, exclude_max=True))


@st.composite
def _innovations(draw: Any, uniforms_: int, servers: int | None) -> tuple[Any, ...]:
    sigma = draw(times())
    tau = draw(st.one_of(st.just(sigma), times()))  # ties between sigma and tau
    if uniforms_ == 0:
        return sigma, tau
    u = draw(st.lists(uniforms(servers), min_size=uniforms_, max_size=uniforms_))
    return sigma, tau, np.asarray(u, dtype=np.float64)


def innovations(uniforms: int = 0,
                servers: int | None = None) -> st.SearchStrategy[tuple[Any, ...]]:
    """Innovations ``(sigma, tau)``, or ``(sigma, tau, uniforms)`` when ``uniforms > 0``.

    ``sigma`` and ``tau`` include zeros, round values, ``1e-9`` and ties ``sigma == tau``; the
    routing uniforms lie in ``[0, 1)`` and include ``0``, the largest float below 1 and, when
    ``servers`` is given, the rank boundaries ``k / servers`` and the floats just below them.

    Parameters
    ----------
    uniforms : int, default 0
        Routing uniforms per arrival (``system.uniforms``).
    servers : int, optional
        Number of servers, to hit the rank boundaries.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of tuple

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> sigma, tau, u = find(innovations(1, servers=4), lambda x: x[2][0] > 0,
    ...                      settings=settings(database=None))
    >>> bool(0 < u[0] < 1 and sigma >= 0 and tau >= 0)
    True
    """
    m = check_int(uniforms, "uniforms", 0)
    s = None if servers is None else check_int(servers, "servers", 1)
    return _innovations(m, s)


def states_for(system: System, max_value: float = 20.0) -> st.SearchStrategy[np.ndarray]:
    """Valid states of ``system``: sorted within each of its blocks (``system.blocks``).

    Parameters
    ----------
    system : recursions.System
        The system (a :class:`~recursions.Map` with ``blocks=`` included).
    max_value : float, default 20.0
        Largest level.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of numpy.ndarray

    Examples
    --------
    >>> import recursions as rc
    >>> from hypothesis import find, settings
    >>> w = find(states_for(rc.SplitBound(4, 2)), lambda w: w[0] > w[2],
    ...          settings=settings(database=None))
    >>> rc.SplitBound(4, 2).check_state(w).size
    4
    """
    sys_ = _check_system(system)
    p, free = layout(sys_)
    parts = ([p] if p else []) + sizes(free)
    return sorted_workloads(sys_.servers, max_value, blocks=parts)


def pairs_for(system: System,
              max_value: float = 20.0) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """Ordered pairs ``u ≺ v`` of valid states of ``system``.

    The pairs are ordered coordinatewise, so within every block of ``system.blocks``; they
    share the exogenous leading block when ``system.split > 0`` (a split's loss block).

    Parameters
    ----------
    system : recursions.System
        The system.
    max_value : float, default 20.0
        Largest level of ``u``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of tuple of numpy.ndarray

    Examples
    --------
    >>> import recursions as rc
    >>> from hypothesis import find, settings
    >>> u, v = find(pairs_for(rc.SplitBound(3, 1)), lambda p: True,
    ...             settings=settings(database=None))
    >>> bool(u[0] == v[0] and (u <= v).all())
    True
    """
    sys_ = _check_system(system)
    p, free = layout(sys_)
    return ordered_pairs(sys_.servers, p, max_value, blocks=sizes(free))


def innovations_for(system: System) -> st.SearchStrategy[tuple[Any, ...]]:
    """Innovations for ``system``: ``(sigma, tau)``, plus its routing uniforms if it has any.

    Parameters
    ----------
    system : recursions.System
        The system (its ``uniforms`` and ``servers`` are used).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of tuple

    Examples
    --------
    >>> import recursions as rc
    >>> from hypothesis import find, settings
    >>> len(find(innovations_for(rc.JIQ(3)), lambda x: True, settings=settings(database=None)))
    3
    """
    sys_ = _check_system(system)
    return innovations(sys_.uniforms, sys_.servers)
