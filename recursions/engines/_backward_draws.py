"""Time-indexed draws for backward schemes (Loynes sequences, coupling from the past).

:class:`BackwardDraws` gives the service times, interarrival times and routing uniforms of the
customers at times ``-n .. -1`` for any horizon ``n``; the draw at time ``-k`` is the same
whatever ``n`` is (:ref:`Theory › The same input for every horizon <theory-loynes-draws>`;
README, Design notes). Blocks are drawn once and cached.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recursions.common._rng import BLOCK, BlockRng, RngLike, as_seed_sequence, child
from recursions.engines import _accumulator as st
from recursions.engines._driver_compiler import drivers_of
from recursions.model._inputs import Input, check_input
from recursions.model._system import System, check_system

__all__ = ["BackwardDraws", "iterate"]


class BackwardDraws:
    """Draws of ``input`` and of ``system``'s routing for negative times.

    Parameters
    ----------
    system : System
        Supplies the number of routing uniforms per arrival.
    input : Input
        The arrival input.
    rng : int, Generator, SeedSequence or None, default 1
        Seed (``None``: fresh OS entropy, not reproducible).

    Raises
    ------
    ValueError
        When ``system.check_input`` refuses ``input`` (a :class:`~recursions.Redundancy`
        system needs ``system.poisson(rate)`` or ``system.renewal(interarrival)``).

    Examples
    --------
    >>> import recursions as rc
    >>> d = rc.BackwardDraws(rc.JIQ(3), rc.Poisson(2.0, rc.dists.Exponential(1.0)), rng=1)
    >>> s10, t10, u10 = d.window(10)
    >>> s1000, _, _ = d.window(1000)
    >>> bool((s10 == s1000[-10:]).all())
    True
    """

    def __init__(self, system: System, input: Input, *, rng: RngLike = 1) -> None:
        check_system(system, needs_map="backward draws")
        check_input(input)
        system.check_input(input)
        ss = as_seed_sequence(rng)
        self.system = system
        self.input = input
        self._stream = input.backward(child(ss, 0))
        self._routing = BlockRng(ss, 7)
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def block(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draws of block ``b`` (times ``-(b+1)B .. -bB-1``, ascending), cached.

        Parameters
        ----------
        b : int
            Block index ``>= 0``.

        Returns
        -------
        sigma, tau, u : numpy.ndarray
            Shapes ``(B,)``, ``(B,)`` and ``(B, uniforms)``.
        """
        while len(self._blocks) <= b:
            k = len(self._blocks)
            sig, tau = self._stream.block(k)
            if self.system.uniforms == 0 and (type(self.system).innovations
                                              is System.innovations):
                u = np.zeros((BLOCK, 0))  # no routing draws: no generator to make
            else:
                u = self.system.innovations(self._routing.generator(k), BLOCK)
            self._blocks.append((sig, tau, u))
        return self._blocks[b]

    def window(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draws for times ``-n .. -1`` in ascending time order.

        Parameters
        ----------
        n : int
            Horizon ``>= 0``.

        Returns
        -------
        sigma, tau, u : numpy.ndarray
            Entry ``i`` belongs to time ``-n + i``.
        """
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        nb = -(-n // BLOCK)
        parts = [self.block(b) for b in range(nb - 1, -1, -1)]
        if not parts:
            return np.empty(0), np.empty(0), np.empty((0, self.system.uniforms))
        cut = nb * BLOCK - n
        sig = np.concatenate([p[0] for p in parts])[cut:]
        tau = np.concatenate([p[1] for p in parts])[cut:]
        u = np.concatenate([p[2] for p in parts])[cut:]
        return sig, tau, u


def iterate(system: System, w0: Any, sigma: Any, tau: Any, u: Any = None) -> np.ndarray:
    """Apply ``system``'s map to ``w0`` for each arrival in turn; return the final state.

    Parameters
    ----------
    system : System
        The map.
    w0 : array_like
        Initial sorted workload vector.
    sigma, tau : array_like
        Service and interarrival times, equal lengths.
    u : array_like, optional
        Routing uniforms, shape ``(len(sigma), system.uniforms)``.

    Returns
    -------
    numpy.ndarray
        The state seen by the customer after the last one.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.iterate(rc.JSW(2), [0.0, 0.0], [3.0, 3.0, 3.0], [1.0, 1.0, 1.0]).tolist()
    [1.0, 3.0]
    """
    w = system.check_state(w0, "w0")
    sig = np.ascontiguousarray(sigma, dtype=np.float64).ravel()
    ta = np.ascontiguousarray(tau, dtype=np.float64).ravel()
    if sig.size != ta.size:
        raise ValueError(f"sigma and tau must have equal lengths, got {sig.size} and {ta.size}")
    for name, a in (("sigma", sig), ("tau", ta)):
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError(f"{name} must hold finite numbers >= 0")
    if system.uniforms:
        if u is None:
            raise ValueError(f"{type(system).__name__} needs u, shape (n, {system.uniforms})")
        uu = np.ascontiguousarray(u, dtype=np.float64).reshape(sig.size, system.uniforms)
    else:
        uu = np.zeros((sig.size, 0))
    return run_window(system, w, sig, ta, uu)


def run_window(system: System, w: np.ndarray, sig: np.ndarray, tau: np.ndarray,
               u: np.ndarray) -> np.ndarray:
    """Unchecked fast path of :func:`iterate` (``w`` is modified and returned).

    Short windows use the serial kernel (no thread launch); long ones the parallel driver,
    whose loop numba compiles tighter.
    """
    if sig.size < 8192:
        drivers_of(system).run_path(system.params, w, sig, tau, u)
        return w
    W = w.reshape(1, -1)
    dummy = np.zeros((1, 1, 1))
    drivers_of(system).run_chunk(system.params, W, sig[None, :], tau[None, :], u[None, :, :],
                                 False, 0, 1, 1, np.zeros(0), 0.0, 1,
                                 np.zeros((1, 1, st.N_STATS)), dummy, st.empty_path())
    return W[0]
