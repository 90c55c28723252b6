"""Monotonicity and dominance of random maps on sorted workload vectors (:ref:`theory-kw-monotone`).

A map ``Psi`` is *monotone* when ``u ≺ v`` (coordinatewise ``u(i) <= v(i)``) implies
``Psi(u) ≺ Psi(v)`` for every innovation ``(sigma, tau, routing uniforms)``; Loynes' theorem and
sandwiching coupling from the past need it. A map ``Phi`` *dominates* ``Psi`` when ``u ≺ v``
implies ``Psi(u) ≺ Phi(v)`` under the same innovation: a monotone bound of a non-monotone system.

:func:`check_monotone` and :func:`check_dominates` search for a counterexample among random pairs
and targeted boundary cases (a zero first coordinate against a tiny one, ties, perturbations of
``1e-9``, ``sigma`` or ``tau`` equal to ``0`` or to a coordinate, a large ``sigma``, equal vectors,
routing uniforms on the rank boundaries ``k / S``, and the worked examples of
:ref:`theory-kw-nonmonotone`), evaluated
in compiled batches. A search can only refute: ``monotone=True`` means no counterexample was found.
:func:`assert_monotone` and :func:`assert_dominates` check one case, for use inside a hypothesis
``@given`` test with the strategies of :mod:`coupling.strategies`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coupling._layout import layout, refines
from coupling._monotone_reports import (
    Counterexample,
    DominanceReport,
    MonotonicityReport,
    floats,
    readonly,
)
from recursions import System
from recursions.common import RngLike, as_seed_sequence, check_int
from recursions.engines import drivers_of
from recursions.model import check_system

__all__ = [
    "Counterexample",
    "DominanceReport",
    "MonotonicityReport",
    "assert_dominates",
    "assert_monotone",
    "check_dominates",
    "check_monotone",
]

TOL = 1e-12
"""Absolute tolerance: ``a ≺ b`` is accepted when ``a(i) <= b(i) + TOL`` for every ``i``."""

_BATCH = 4096
_ROUND = np.array([0.5, 1.0, 2.0, 5.0, 10.0])
_ONE_MINUS = float(np.nextafter(1.0, 0.0))  # the largest float below 1


# -- case generation ------------------------------------------------------------------------


def _levels(gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Workload levels: zeros, round values (ties), uniform, tiny and 1e-9 values."""
    c = gen.random(shape)
    x = gen.uniform(0.0, 20.0, shape)
    x = np.where(c < 0.20, 0.0, x)
    x = np.where((c >= 0.20) & (c < 0.45), gen.choice(_ROUND, shape), x)
    x = np.where((c >= 0.80) & (c < 0.90), gen.uniform(0.0, 1e-6, shape), x)
    return np.where(c >= 0.90, 1e-9, x)


def _bumps(gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Non-negative increments: mostly zero, else uniform, round, 1e-9 or tiny."""
    c = gen.random(shape)
    b = gen.uniform(0.0, 5.0, shape)
    b = np.where(c < 0.40, 0.0, b)
    b = np.where((c >= 0.70) & (c < 0.80), 1e-9, b)
    b = np.where((c >= 0.80) & (c < 0.90), gen.uniform(0.0, 1e-6, shape), b)
    return np.where(c >= 0.90, gen.choice(_ROUND[:2], shape), b)


def _free_pairs(gen: np.random.Generator, n: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` ordered pairs of sorted vectors of length ``s``, by case category."""
    cat = gen.integers(0, 5, n)
    u = np.sort(_levels(gen, (n, s)), axis=1)
    bumps = _bumps(gen, (n, s))
    # 1: zero first coordinate against a small one
    z = cat == 1
    u[z, 0] = 0.0
    small = gen.choice(np.array([1e-9, 1e-6, 1e-3, 0.5]), n)
    bumps[z, 0] = small[z]
    # 2: ties: every coordinate equal, one coordinate bumped
    t = cat == 2
    u[t] = _levels(gen, (n, 1))[t]
    one = np.zeros((n, s))
    one[np.arange(n), gen.integers(0, s, n)] = 1.0
    bumps[t] = (one * np.maximum(bumps, 1e-9))[t]
    # 3: tiny perturbations
    p = cat == 3
    bumps[p] = (1e-9 * (gen.random((n, s)) < 0.5))[p]
    # 4: equal vectors
    bumps[cat == 4] = 0.0
    # sorting u + (non-negative bumps) keeps v ≻ u: order statistics are monotone
    v = np.sort(u + bumps, axis=1)
    return u, v


def _innovations(gen: np.random.Generator, u: np.ndarray, v: np.ndarray,
                 m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sigma, tau and ``m`` routing uniforms per case, with boundary values."""
    n, s = int(u.shape[0]), int(u.shape[1])
    rows = np.arange(n)
    coord = np.where(gen.random(n) < 0.5, u[rows, gen.integers(0, s, n)],
                     v[rows, gen.integers(0, s, n)])
    c = gen.random(n)
    sig = gen.uniform(0.0, 20.0, n)
    sig = np.where(c < 0.10, 0.0, sig)
    sig = np.where((c >= 0.10) & (c < 0.15), 1e-9, sig)
    sig = np.where((c >= 0.15) & (c < 0.35), gen.choice(_ROUND, n), sig)
    sig = np.where((c >= 0.65) & (c < 0.85), gen.uniform(50.0, 1000.0, n), sig)
    sig = np.where(c >= 0.85, coord, sig)
    coord = np.where(gen.random(n) < 0.5, u[rows, gen.integers(0, s, n)],
                     v[rows, gen.integers(0, s, n)])
    c = gen.random(n)
    tau = gen.uniform(0.0, 20.0, n)
    tau = np.where(c < 0.25, 0.0, tau)
    tau = np.where((c >= 0.25) & (c < 0.40), gen.choice(_ROUND, n), tau)
    tau = np.where((c >= 0.40) & (c < 0.60), coord, tau)  # drains a coordinate exactly to 0
    tau = np.where(c >= 0.90, gen.uniform(20.0, 2000.0, n), tau)
    c = gen.random((n, m))
    k = gen.integers(1, s + 1, (n, m)) / s
    uni = gen.random((n, m))
    uni = np.where(c < 0.10, 0.0, uni)
    uni = np.where((c >= 0.10) & (c < 0.20), np.where(k < 1.0, k, 0.0), uni)  # rank boundary
    uni = np.where((c >= 0.20) & (c < 0.30), np.nextafter(k, 0.0), uni)  # just below it
    uni = np.where((c >= 0.30) & (c < 0.35), _ONE_MINUS, uni)
    return sig, tau, uni


def _pattern_rows(f: int) -> list[tuple[np.ndarray, np.ndarray, float, float, float]]:
    """The worked examples (docs/theory/kiefer_wolfowitz.md) on one block of ``f`` coordinates."""
    ones = np.ones(f)
    return [
        # J_{p+1}SW (docs/theory/kiefer_wolfowitz.md): (0, 1) vs (0.001, 1), sigma 5, tau 0
        (np.r_[0.0, ones[1:]], np.r_[0.001, ones[1:]], 5.0, 0.0, 0.5),
        # JIQ (docs/theory/kiefer_wolfowitz.md): (0, 10) vs (1, 10), sigma 5, tau 0, u >= 1/2
        (np.r_[0.0, 10 * ones[1:]], np.r_[1.0, 10 * ones[1:]], 5.0, 0.0, 0.5),
        (np.r_[0.0, 10 * ones[1:]], np.r_[1.0, 10 * ones[1:]], 5.0, 0.0, _ONE_MINUS),
        # a zero against 1e-9, and equal empty states
        (np.r_[0.0, ones[1:]], np.r_[1e-9, ones[1:]], 5.0, 0.0, 0.0),
        (np.zeros(f), np.zeros(f), 0.0, 0.0, 0.0),
    ]


def _fixed_cases(s: int, split: int, m: int,
                 blocks: tuple[tuple[int, int], ...] | None = None) -> tuple[np.ndarray, ...]:
    """The worked examples of the theory, extended to ``s`` servers (the JSW block of a split).

    The examples span the whole free part ``w[split:]`` (sorted, so valid in any block
    layout). With several free ``blocks`` they are also laid out within every block at once
    (``u`` = the pattern's ``u`` in each block); the caller keeps the rows that are valid
    states of the systems checked.
    """
    f = s - split
    rows = _pattern_rows(f)
    if blocks is not None and len(blocks) > 1:
        per = [_pattern_rows(hi - lo) for lo, hi in blocks]
        for j in range(len(rows)):
            rows.append((np.concatenate([b[j][0] for b in per]),
                         np.concatenate([b[j][1] for b in per]), *rows[j][2:]))
    u = np.array([r[0] for r in rows])
    v = np.array([r[1] for r in rows])
    sig = np.array([r[2] for r in rows])
    tau = np.array([r[3] for r in rows])
    uni = np.repeat(np.array([r[4] for r in rows])[:, None], m, axis=1)
    if split:  # a busy loss block, so the arrival overflows to the JSW block
        block = np.ones((len(rows), split))
        u = np.hstack([block, u])
        v = np.hstack([block, v])
    return u, v, sig, tau, uni


def _run_max(x: np.ndarray, blocks: tuple[tuple[int, int], ...]) -> np.ndarray:
    """Running maximum within each block (the least vector above ``x`` sorted in each)."""
    out = x.copy()
    for lo, hi in blocks:
        out[:, lo:hi] = np.maximum.accumulate(out[:, lo:hi], axis=1)
    return out


def _block_pairs(gen: np.random.Generator, n: int, blocks: tuple[tuple[int, int], ...]
                 ) -> tuple[np.ndarray, np.ndarray]:
    parts = [_free_pairs(gen, n, hi - lo) for lo, hi in blocks]
    return (np.hstack([a for a, _ in parts]), np.hstack([b for _, b in parts]))


def _free_part(gen: np.random.Generator, n: int, lower: tuple[tuple[int, int], ...],
               upper: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, np.ndarray]:
    """Ordered pairs of the free part: ``u`` sorted in ``lower``'s blocks, ``v`` in ``upper``'s.

    The blocks are relative to the free part, and one layout refines the other. When
    ``upper``'s blocks lie within ``lower``'s, ``v`` (sorted in ``lower``'s blocks) is valid as
    it is. Otherwise (``upper`` coarser), half the cases are drawn in ``upper``'s blocks (``u``
    sorted there is sorted in ``lower``'s finer ones too) and half in ``lower``'s, with ``v``
    raised to its running maximum in each block of ``upper``.
    """
    if refines(upper, lower):
        return _block_pairs(gen, n, lower)
    u1, v1 = _block_pairs(gen, n, upper)
    u2, v2 = _block_pairs(gen, n, lower)
    v2 = _run_max(v2, upper)
    pick = (gen.random(n) < 0.5)[:, None]
    return np.where(pick, u1, u2), np.where(pick, v1, v2)


def _cases(gen: np.random.Generator, n: int, s: int, split: int, m: int,
           blocks: tuple[tuple[int, int], ...] | None = None,
           upper_blocks: tuple[tuple[int, int], ...] | None = None) -> tuple[np.ndarray, ...]:
    """Random cases ``(u, v, sigma, tau, uniforms)``, ``n`` of them.

    ``blocks`` (of ``u``) and ``upper_blocks`` (of ``v``) are the free blocks ``(lo, hi)``
    after the shared leading block of length ``split`` (default: one block).
    """
    low = ((split, s),) if blocks is None else tuple(blocks)
    up = low if upper_blocks is None else tuple(upper_blocks)
    u, v = _free_part(gen, n, tuple((lo - split, hi - split) for lo, hi in low),
                      tuple((lo - split, hi - split) for lo, hi in up))
    if split:
        block = np.sort(_levels(gen, (n, split)), axis=1)
        u = np.hstack([block, u])
        v = np.hstack([block, v])
    sig, tau, uni = _innovations(gen, u, v, m)
    return u, v, sig, tau, uni


def _sorted_in(x: np.ndarray, blocks: tuple[tuple[int, int], ...]) -> np.ndarray:
    """Rows of ``x`` sorted within every block."""
    ok = np.ones(x.shape[0], dtype=bool)
    for lo, hi in blocks:
        ok &= (np.diff(x[:, lo:hi], axis=1) >= 0).all(axis=1)
    return ok


def _valid_fixed(fixed: tuple[np.ndarray, ...], split: int,
                 low: tuple[tuple[int, int], ...],
                 up: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, ...]:
    """The fixed rows that are valid cases.

    That is: ``u`` a state of the lower system, ``v`` of the upper one, ``u ≺ v``, sharing
    the exogenous block.
    """
    u, v = fixed[0], fixed[1]
    keep = (_sorted_in(u, low) & _sorted_in(v, up) & (u <= v).all(axis=1)
            & (u[:, :split] == v[:, :split]).all(axis=1))
    return tuple(a[keep] for a in fixed)


def _search(upper: System, lower: System, trials: int,
            rng: Any) -> tuple[int, Counterexample | None]:
    """Search for ``u ≺ v`` with ``lower(u) ⊀ upper(v)``; return (cases tried, counterexample)."""
    s = upper.servers
    split, up = layout(upper)
    _, low = layout(lower)
    m = max(upper.uniforms, lower.uniforms)
    gen = np.random.default_rng(as_seed_sequence(rng))
    finer = low if refines(low, up) else up
    fixed = _valid_fixed(_fixed_cases(s, split, m, finer), split, low, up)
    # a system may draw its own innovation rows (recursions.model.redundancy: uniforms and sizes)
    hook = getattr(upper, "random_innovations", None)
    if hook is not None and (getattr(lower, "random_innovations", None) is None
                             or lower.uniforms != upper.uniforms):
        hook = None
    done = 0
    while done < trials:
        c = min(_BATCH, trials - done)
        if done == 0:
            k = min(c, fixed[0].shape[0])
            rand = _cases(gen, c - k, s, split, m, low, up)
            u, v, sig, tau, uni = (np.concatenate([a[:k], b]) for a, b in zip(fixed, rand,
                                                                               strict=True))
        else:
            u, v, sig, tau, uni = _cases(gen, c, s, split, m, low, up)
        if hook is not None:  # systems whose innovation rows are not all uniforms
            uni = hook(gen, c)
        a = np.array(u, dtype=np.float64, order="C")  # copies: apply_rows works in place
        b = np.array(v, dtype=np.float64, order="C")
        found = np.empty(c)
        drivers_of(lower).apply_rows(lower.params, a, sig, tau,
                                     np.ascontiguousarray(uni[:, :lower.uniforms]), found)
        drivers_of(upper).apply_rows(upper.params, b, sig, tau,
                                     np.ascontiguousarray(uni[:, :upper.uniforms]), found)
        bad = np.flatnonzero((a > b + TOL).any(axis=1))
        if bad.size:
            i = int(bad[0])
            cx = Counterexample(
                u=readonly(u[i]), v=readonly(v[i]), sigma=float(sig[i]), tau=float(tau[i]),
                uniforms=readonly(uni[i]), step_u=readonly(a[i]), step_v=readonly(b[i]),
                coordinate=int(np.argmax(a[i] > b[i] + TOL)), map_u=repr(lower),
                map_v=repr(upper),
            )
            return done + i + 1, cx
        done += c
    return done, None


def _check_system(system: Any, name: str) -> System:
    check_system(system, name)
    return system


def check_monotone(system: System, trials: int = 10_000, *,
                   rng: RngLike = 1) -> MonotonicityReport:
    """Search for a counterexample to the monotonicity of ``system``'s map.

    Tries ``trials`` cases ``(u, v, sigma, tau, uniforms)`` with ``u ≺ v`` both valid states
    (non-negative, sorted within each of ``system.blocks``) and reports the first case where
    ``step(u) ≺ step(v)`` fails by more than :data:`TOL`. The order is coordinatewise, so a
    map with several separately sorted blocks (an :class:`~recursions.Map` declared with
    ``blocks=[2, 2]``, say) gets pairs ordered within every block. The leading block of a
    state with ``system.split > 0`` (the loss block ``w[:p]`` of
    :class:`~recursions.SplitBound`) is exogenous: ``u`` and ``v`` share it. The cases mix
    random pairs with targeted boundary cases and the worked examples of
    :ref:`theory-kw-nonmonotone` (over
    the whole free part, and within every block when there are several).

    Parameters
    ----------
    system : recursions.System
        The map to check.
    trials : int, default 10_000
        Number of cases (``>= 1``).
    rng : int, numpy.random.Generator, SeedSequence or None, default 1
        Seed: the same seed tries the same cases.

    Returns
    -------
    MonotonicityReport

    Raises
    ------
    TypeError
        If ``system`` is not a recursions system or ``trials`` is not an integer.
    ValueError
        If ``trials < 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> check_monotone(rc.JSW(3), trials=1000).monotone
    True
    >>> rep = check_monotone(rc.Loss(3), trials=1000)
    >>> rep.monotone
    False
    >>> print(rep.counterexample)
    counterexample to the monotonicity of Loss(servers=3):
      u = [0.0, 1.0, 1.0]  ≺  v = [0.001, 1.0, 1.0]
      sigma = 5.0, tau = 0.0, uniforms = []
      step(u) = [1.0, 1.0, 5.0]
      step(v) = [0.001, 1.0, 1.0]
      coordinate 0: 1.0 > 0.001

    A user map is checked the same way (``rc.maps.jpsw`` is J_{p+1}SW, ``params=[p]``):

    >>> check_monotone(rc.Map(rc.maps.jpsw, servers=2, params=[1.0]), trials=100).monotone
    False
    """
    system = _check_system(system, "system")
    trials = check_int(trials, "trials", 1)
    tried, cx = _search(system, system, trials, rng)
    return MonotonicityReport(system=repr(system), monotone=cx is None, trials=tried,
                              counterexample=cx)


def _check_pair_of_systems(upper: Any, lower: Any) -> tuple[System, System]:
    upper = _check_system(upper, "upper")
    lower = _check_system(lower, "lower")
    if upper.servers != lower.servers:
        raise ValueError(
            f"upper and lower must have the same number of servers, got {upper.servers} "
            f"and {lower.servers}"
        )
    if upper.split != lower.split:
        raise ValueError(
            f"upper and lower must have the same state layout (split), got {upper.split} "
            f"and {lower.split}: the leading block of a split state is exogenous (shared by "
            "both states of a pair), so both systems must declare it"
        )
    _, up = layout(upper)
    _, low = layout(lower)
    if not (refines(up, low) or refines(low, up)):
        raise ValueError(
            f"upper and lower must have compatible blocks (the separately sorted blocks of one "
            f"lying within those of the other), got {list(up)} for {upper!r} and {list(low)} "
            f"for {lower!r}"
        )
    return upper, lower


def check_dominates(upper: System, lower: System, trials: int = 10_000, *,
                    rng: RngLike = 1) -> DominanceReport:
    """Search for a counterexample to ``u ≺ v ⇒ lower.step(u) ≺ upper.step(v)``.

    Both maps get the same ``sigma`` and ``tau``. The two systems may declare different
    numbers of routing uniforms: ``max(upper.uniforms, lower.uniforms)`` are drawn per case
    and each map gets the *leading* ones it declares (``u[:system.uniforms]``), so the
    common random numbers are the leading uniforms, and a dominance found here is one under
    that coupling of the two systems' randomness. Cases are generated as in
    :func:`check_monotone`: ``u`` is a valid state of ``lower`` and ``v`` of ``upper``, ordered
    coordinatewise, sharing the exogenous block of a split state. The systems may declare
    different blocks when the blocks of one lie within those of the other (a two-block
    :class:`~recursions.Map` against a one-block :class:`~recursions.JSW`); each state is
    then sorted in its own system's blocks. By induction,
    dominance of the maps gives ``lower``'s path ≺ ``upper``'s path from ordered starts under
    common inputs. The order is coordinatewise: neither JSW nor J_{p+1}SW (nor random
    routing, coupled by rank) dominates the other in it. A search can only refute:
    ``dominates=True`` means no counterexample was found.

    Parameters
    ----------
    upper : recursions.System
        The claimed upper bound (applied to ``v``).
    lower : recursions.System
        The bounded system (applied to ``u``); same ``servers`` and ``split`` as ``upper``,
        and blocks compatible with its blocks.
    trials : int, default 10_000
        Number of cases (``>= 1``).
    rng : int, numpy.random.Generator, SeedSequence or None, default 1
        Seed.

    Returns
    -------
    DominanceReport

    Raises
    ------
    TypeError
        If ``upper`` or ``lower`` is not a recursions system, or ``trials`` not an integer.
    ValueError
        If the systems differ in ``servers`` or ``split``, declare blocks neither of which
        lies within the other's, or ``trials < 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> check_dominates(rc.JSW(3), rc.Loss(3), trials=1000).dominates
    True
    >>> check_dominates(rc.JpSW(3, 1), rc.JSW(3), trials=1000).dominates
    False

    A user map against a built-in (``rc.maps.jpsw`` with ``params=[p]`` is J_{p+1}SW):

    >>> user = rc.Map(rc.maps.jpsw, servers=3, params=[1.0])
    >>> check_dominates(rc.Envelope(rc.JpSW(3, 1)), user, trials=1000).dominates
    True
    """
    upper, lower = _check_pair_of_systems(upper, lower)
    trials = check_int(trials, "trials", 1)
    tried, cx = _search(upper, lower, trials, rng)
    return DominanceReport(upper=repr(upper), lower=repr(lower), dominates=cx is None,
                           trials=tried, counterexample=cx)


# -- single-case assertions (for hypothesis tests) ----------------------------------------------


def _parse_pair(pair: Any, lower: System, upper: System) -> tuple[np.ndarray, np.ndarray]:
    try:
        u, v = pair
    except (TypeError, ValueError):
        raise TypeError("pair must be a tuple (u, v) of two workload vectors") from None
    a = lower.check_state(u, "u")
    b = upper.check_state(v, "v")
    if np.any(a > b):
        i = int(np.argmax(a > b))
        raise ValueError(
            f"pair must satisfy u ≺ v coordinatewise, but u[{i}] = {a[i]!r} > v[{i}] = {b[i]!r}"
        )
    p = upper.split
    if p and np.any(a[:p] != b[:p]):
        raise ValueError(
            f"u and v must share the exogenous loss block w[:{p}] of {upper!r}, got "
            f"{floats(a[:p])} and {floats(b[:p])}"
        )
    return a, b


def _parse_innovation(innovation: Any, m: int, who: str) -> tuple[float, float, np.ndarray]:
    try:
        items = tuple(innovation)
    except TypeError:
        raise TypeError("innovation must be a tuple (sigma, tau) or (sigma, tau, uniforms)"
                        ) from None
    if len(items) not in (2, 3):
        raise ValueError(
            f"innovation must be (sigma, tau) or (sigma, tau, uniforms), got {len(items)} items"
        )
    uni = np.atleast_1d(np.asarray(items[2], dtype=np.float64)).ravel() if len(items) == 3 \
        else np.zeros(0)
    if uni.size < m:
        raise ValueError(
            f"innovation must be (sigma, tau, uniforms) with at least {m} uniform(s) in [0, 1) "
            f"for {who}, got {uni.size}"
        )
    return items[0], items[1], uni


def _assert(upper: System, lower: System, pair: Any, innovation: Any) -> None:
    u, v = _parse_pair(pair, lower, upper)
    m = max(upper.uniforms, lower.uniforms)
    who = repr(upper) if upper is lower else f"{upper!r} and {lower!r}"
    sigma, tau, uni = _parse_innovation(innovation, m, who)
    su = lower.step(u, sigma, tau, uni[:lower.uniforms] if lower.uniforms else None)
    sv = upper.step(v, sigma, tau, uni[:upper.uniforms] if upper.uniforms else None)
    bad = su > sv + TOL
    if np.any(bad):
        cx = Counterexample(
            u=readonly(u), v=readonly(v), sigma=float(sigma), tau=float(tau),
            uniforms=readonly(uni[:m]), step_u=readonly(su), step_v=readonly(sv),
            coordinate=int(np.argmax(bad)), map_u=repr(lower), map_v=repr(upper),
        )
        raise AssertionError(str(cx))


def assert_monotone(system: System, pair: tuple[Any, Any], innovation: tuple[Any, ...]) -> None:
    """Assert ``step(u) ≺ step(v)`` for one ordered pair and one innovation.

    Meant for hypothesis tests: draw ``pair`` from :func:`coupling.strategies.pairs_for` and
    ``innovation`` from :func:`coupling.strategies.innovations_for`.

    Parameters
    ----------
    system : recursions.System
        The map.
    pair : tuple
        ``(u, v)``: valid states of ``system`` (sorted within each of its blocks) with
        ``u ≺ v`` coordinatewise (sharing the loss block of a :class:`~recursions.SplitBound`
        state).
    innovation : tuple
        ``(sigma, tau)``, or ``(sigma, tau, uniforms)`` for a randomised system.

    Raises
    ------
    AssertionError
        With the counterexample, when ``step(u) ≺ step(v)`` fails by more than :data:`TOL`.
    ValueError
        If ``u ≺ v`` fails, a state is invalid, or uniforms are missing.

    Examples
    --------
    >>> import recursions as rc
    >>> assert_monotone(rc.JSW(2), ([0.0, 1.0], [0.001, 1.0]), (5.0, 0.0))
    >>> assert_monotone(rc.JpSW(2, 1), ([0.0, 1.0], [0.001, 1.0]), (5.0, 0.0))
    Traceback (most recent call last):
    ...
    AssertionError: counterexample to the monotonicity of JpSW(servers=2, p=1):
    ...
    """
    system = _check_system(system, "system")
    _assert(system, system, pair, innovation)


def assert_dominates(upper: System, lower: System, pair: tuple[Any, Any],
                     innovation: tuple[Any, ...]) -> None:
    """Assert ``lower.step(u) ≺ upper.step(v)`` for one ordered pair and one innovation.

    Parameters
    ----------
    upper, lower : recursions.System
        The claimed bound and the bounded system (same ``servers`` and ``split``, compatible
        blocks, as for :func:`check_dominates`).
    pair : tuple
        ``(u, v)`` with ``u`` a valid state of ``lower``, ``v`` of ``upper``, ``u ≺ v``.
    innovation : tuple
        ``(sigma, tau)``, or ``(sigma, tau, uniforms)`` with at least
        ``max(upper.uniforms, lower.uniforms)`` uniforms; each map gets the leading ones it
        declares (the common random numbers are the leading uniforms).

    Raises
    ------
    AssertionError
        With the counterexample, when the domination fails by more than :data:`TOL`.
    ValueError
        If ``u ≺ v`` fails, a state is invalid, uniforms are missing or the systems differ in
        ``servers`` or ``split`` or have incompatible blocks.

    Examples
    --------
    >>> import recursions as rc
    >>> assert_dominates(rc.Envelope(rc.JpSW(2, 1)), rc.JpSW(2, 1),
    ...                  ([0.0, 1.0], [0.001, 1.0]), (5.0, 0.0))
    """
    upper, lower = _check_pair_of_systems(upper, lower)
    _assert(upper, lower, pair, innovation)
