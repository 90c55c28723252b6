"""Where replications start: exact stationary draws, or draws from an equilibrium profile.

``simulate(..., start="stationary")`` starts each replication from an exact draw of the
stationary law, so no warm-up is needed and the replications' means are independent and
unbiased. The exact samplers live in :mod:`coupling` (FCFS M/M/S from its birth-death chain,
``coupling.mms_states``; the rest by coupling from the past), which this package does not
import (data flows ``recursions`` -> ``coupling``):
``coupling`` registers them here when it is imported (``import coupling``), through
:func:`register_stationary_sampler`.

``start=profile`` takes an equilibrium profile instead (the JIQ equilibrium of
``ly.jiq_equilibrium(...)``, a redundancy fixed point, or any object with a
``profile(w)`` method, or a callable ``w -> x_w``): ``x_w`` is the fraction of servers with
workload above ``w``, so each server's workload is drawn independently from the law with
``P(W > w) = x_w`` (the mean-field limit, in which servers are independent), by inverting
``x`` on a grid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["START_KEY", "register_stationary_sampler", "start_states", "states_from_profile",
           "stationary_states"]

Sampler = Callable[[Any, Any, int, np.random.SeedSequence], Any]

START_KEY = 2**32 - 3
"""The child of a run's seed that the start states draw from: beyond any replication's index
(replication ``i`` runs on child ``i``), so no replication shares the start draws' streams."""

_SAMPLERS: list[Sampler] = []


def register_stationary_sampler(sampler: Sampler) -> None:
    """Add an exact sampler: ``sampler(system, input, n, seed) -> (n, servers) array``.

    It returns ``None`` when it does not cover the system and input (the next one is tried),
    and raises ``ValueError`` with the reason when it covers them but cannot sample.

    Examples
    --------
    >>> len(_SAMPLERS) >= 0
    True
    """
    if sampler not in _SAMPLERS:
        _SAMPLERS.append(sampler)


def stationary_states(system: Any, input: Any, n: int,
                      seed: np.random.SeedSequence) -> np.ndarray:
    """``n`` exact stationary workload vectors of ``system`` under ``input``.

    Raises
    ------
    ValueError
        When no registered sampler covers them (or ``coupling`` was not imported).
    """
    if not _SAMPLERS:
        raise ValueError("start='stationary' needs the exact samplers of the coupling package, "
                         "which registers them when imported: add `import coupling` (or "
                         "`import coupling as cp`) before calling simulate")
    for sampler in _SAMPLERS:
        out = sampler(system, input, n, seed)
        if out is not None:
            return np.asarray(out, dtype=np.float64).reshape(n, -1)
    raise ValueError(f"start='stationary': no exact sampler covers {system!r} under "
                     f"{input!r} (coupling.perfect_sample says which systems it covers); "
                     "use warmup='auto' instead")


def states_from_profile(profile: Any, servers: int, n: int,
                        gen: np.random.Generator, *, scale: float) -> np.ndarray:
    """``n`` workload vectors whose servers are i.i.d. with ``P(W > w) = x_w``.

    Parameters
    ----------
    profile : object with ``profile(w)``, or callable
        ``x_w`` for levels ``w >= 0``, non-increasing, in ``[0, 1]``.
    servers, n : int
        Servers per vector, vectors.
    gen : numpy.random.Generator
        The draws.
    scale : float
        A time scale (the mean service time): the inversion grid reaches where ``x_w`` falls
        below ``1e-9`` (searched from ``scale``).

    Returns
    -------
    numpy.ndarray
        Shape ``(n, servers)``, each row sorted.

    Examples
    --------
    >>> import numpy as np
    >>> x = lambda w: 0.5 * np.exp(-np.asarray(w))   # half the servers busy, Exp(1) tails
    >>> w = states_from_profile(x, 1000, 2, np.random.default_rng(1), scale=1.0)
    >>> w.shape, bool(0.4 < (w[0] > 0).mean() < 0.6)
    ((2, 1000), True)
    """
    f = profile.profile if hasattr(profile, "profile") else profile
    if not callable(f):
        raise TypeError("start must be 'stationary', a profile (an object with profile(w)) "
                        f"or a callable w -> x_w, got {type(profile).__name__}")

    def x(w: np.ndarray) -> np.ndarray:
        v = f(w)
        v = np.asarray(getattr(v, "value", v), dtype=np.float64)
        return np.broadcast_to(v, np.shape(w))

    top = float(scale)
    while float(x(np.array([top]))[0]) > 1e-9 and top < 1e6 * scale:
        top *= 2.0
    grid = np.linspace(0.0, top, 4097)
    xs = np.clip(x(grid), 0.0, 1.0)
    if np.any(~np.isfinite(xs)) or np.any(np.diff(xs) > 1e-9):
        raise ValueError("start: the profile x_w must be finite and non-increasing in w")
    xs = np.minimum.accumulate(xs)
    u = gen.random((n, servers))
    # W > w  iff  u < x_w: W = sup{w : x_w > u}, by interpolation on the decreasing grid
    w = np.interp(-u, -xs, grid, left=top, right=0.0)
    w[u >= xs[0]] = 0.0
    return np.sort(w, axis=1)


def start_states(start: Any, system: Any, input: Any, n: int,
                 seed: np.random.SeedSequence) -> tuple[np.ndarray, str]:
    """``n`` start states for ``simulate(..., start=start)`` and what they are.

    ``start="stationary"`` draws exact stationary states (:func:`stationary_states`), a
    profile i.i.d. servers (:func:`states_from_profile`, on the input's mean service time),
    from their own stream of ``seed``.

    Returns
    -------
    tuple of (numpy.ndarray, str)
        The states, shape ``(n, servers)``, and ``"stationary"`` or ``"profile"``.

    Examples
    --------
    >>> import numpy as np, recursions as rc
    >>> x = lambda w: 0.5 * np.exp(-np.asarray(w))
    >>> w, kind = start_states(x, rc.JSW(4), rc.Poisson(2.0, rc.dists.Exponential(1.0)), 3,
    ...                        np.random.SeedSequence(1))
    >>> w.shape, kind
    ((3, 4), 'profile')
    """
    own = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, START_KEY))
    if isinstance(start, str):
        return stationary_states(system, input, n, own), "stationary"
    gen = np.random.default_rng(own)
    return (states_from_profile(start, system.servers, n, gen, scale=input.mean_service),
            "profile")
