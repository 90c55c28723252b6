"""Forward coupling times: two copies of a system driven by the same inputs.

The theory: :ref:`Theory › Forward coupling times <theory-exact-coupling-times>`.

Two copies start from ``w0`` and ``w1`` and receive the same service times, interarrival times
and routing uniforms; the coupling time is the first arrival index ``n`` at which the two
workload vectors are exactly equal (the copies stay equal afterwards, since they are then driven
by the same map). For JSW from ``w0 ≺ w1`` they are equal at the latest at the first arrival that
finds the larger copy empty (for one server, exactly then).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from recursions import Estimate, Input, System
from recursions.common import Record, RngLike, as_seed_sequence, check_int, child, forward_generator
from recursions.engines import drivers_of
from recursions.model import check_input, check_system

__all__ = ["CouplingTimeResult", "coupling_time"]

_FIRST_CHUNK = 1024
_MAX_CHUNK = 1 << 16

@dataclass(frozen=True, eq=False, repr=False)
class CouplingTimeResult(Record):
    """Coupling times of two copies driven by the same inputs, one per replication.

    Attributes
    ----------
    system, input : str
        What was run.
    times : numpy.ndarray
        Coupling time of each replication (int64): the number of arrivals after which the two
        copies were first equal (``0`` when ``w0 == w1``), or ``-1`` when they had not coupled
        after ``cap`` arrivals (censored).
    cap : int
        The horizon cap per replication.
    coupled_fraction : float
        Fraction of replications that coupled within ``cap``.
    mean : Estimate
        Mean coupling time over the replications that coupled, with its standard error
        (``nan`` when fewer than two coupled; biased low when some are censored).
    censored : int
        Number of replications that did not couple within ``cap``.

    Examples
    --------
    >>> import recursions as rc
    >>> inp = rc.Poisson(1.0, rc.dists.Exponential(1.0))
    >>> res = coupling_time(rc.JSW(1), inp, [0.0], [3.0], replications=20)
    >>> res.coupled_fraction, res.censored
    (1.0, 0)
    >>> bool(res.quantile(0.5) <= res.quantile(0.9))
    True
    """

    _dict_extra = ("replications",)

    system: str
    input: str
    times: np.ndarray
    cap: int
    coupled_fraction: float
    mean: Estimate
    censored: int

    @property
    def replications(self) -> int:
        """Number of replications."""
        return int(self.times.size)

    def quantile(self, q: Any) -> Any:
        """Empirical quantile of the coupling time, censored times counted as ``+inf``.

        Parameters
        ----------
        q : float or array_like
            Probabilities in ``[0, 1]``.

        Returns
        -------
        float or numpy.ndarray
            Order statistics of the times (``inverted_cdf``: an observed time, never an
            interpolation); ``inf`` where the quantile falls among censored replications.

        Raises
        ------
        ValueError
            If some ``q`` is outside ``[0, 1]``.
        """
        qq = np.asarray(q, dtype=np.float64)
        if np.any(~((qq >= 0) & (qq <= 1))):
            raise ValueError(f"q must lie in [0, 1], got {q!r}")
        t = np.where(self.times >= 0, self.times.astype(np.float64), np.inf)
        out = np.quantile(t, qq, method="inverted_cdf")
        return float(out) if np.ndim(out) == 0 else out

    def __str__(self) -> str:
        return (f"coupling time of {self.system} under {self.input}: "
                f"{self.replications} replications, coupled {self.coupled_fraction:.4g} within "
                f"cap={self.cap} ({self.censored} censored), mean over coupled {self.mean}")


def coupling_time(
    system: System,
    input: Input,
    w0: Any,
    w1: Any,
    *,
    rng: RngLike = 1,
    cap: int = 10**6,
    replications: int = 1,
) -> CouplingTimeResult:
    """Run two copies from ``w0`` and ``w1`` on the same inputs until they are equal.

    Replication ``r`` uses the seed ``as_seed_sequence(rng).spawn(replications)[r]`` exactly as
    :func:`recursions.simulate` does (input stream ``child(seed, 0)``, routing uniforms
    ``forward_generator(seed, 1)``), so each copy follows the path that ``rc.simulate(system,
    input, ..., w0=w0, rng=rng, replications=replications, record=True)`` records. Arrivals are
    drawn and run in chunks by a compiled kernel that stops at the first equality.

    Parameters
    ----------
    system : recursions.System
        The map (any system, a :class:`recursions.Map` included: the chunks run on
        ``drivers_of(system).couple_chunk``; for a non-monotone map, coupling need not happen).
    input : recursions.Input
        The arrival input.
    w0, w1 : array_like
        Initial states (valid for ``system``: sorted, non-negative, finite).
    rng : int, numpy.random.Generator, SeedSequence or None, default 1
        Seed.
    cap : int, default 10**6
        Arrivals per replication before giving up (``>= 1``); such replications are censored.
    replications : int, default 1
        Independent replications (``>= 1``).

    Returns
    -------
    CouplingTimeResult

    Raises
    ------
    TypeError
        If ``system`` or ``input`` has the wrong type, or ``cap`` / ``replications`` is not an
        integer.
    ValueError
        If ``w0`` or ``w1`` is not a valid state, ``cap < 1`` or ``replications < 1``, or
        ``system.check_input`` refuses ``input`` (a :class:`~recursions.Redundancy` system
        needs ``system.poisson(rate)``).

    Examples
    --------
    >>> import recursions as rc
    >>> inp = rc.Poisson(1.0, rc.dists.Exponential(1.0))
    >>> res = coupling_time(rc.JSW(2), inp, [0.0, 0.0], [5.0, 10.0], replications=50)
    >>> res.coupled_fraction
    1.0
    >>> coupling_time(rc.JSW(2), inp, [0.0, 0.0], [5.0, 10.0], cap=1).censored
    1

    A user's map runs the same drivers (here JSW written as a map: the same times):

    >>> user = rc.Map(rc.maps.jsw, servers=2)
    >>> a = coupling_time(user, inp, [0.0, 0.0], [5.0, 10.0], replications=20)
    >>> b = coupling_time(rc.JSW(2), inp, [0.0, 0.0], [5.0, 10.0], replications=20)
    >>> bool((a.times == b.times).all())
    True
    """
    check_system(system)
    check_input(input)
    system.check_input(input)
    a0 = system.check_state(w0, "w0")
    b0 = system.check_state(w1, "w1")
    cap = check_int(cap, "cap", 1)
    nrep = check_int(replications, "replications", 1)
    seeds = as_seed_sequence(rng).spawn(nrep)
    params, drivers = system.params, drivers_of(system)
    times = np.full(nrep, -1, dtype=np.int64)
    for r, sd in enumerate(seeds):
        if np.array_equal(a0, b0):
            times[r] = 0
            continue
        stream = input.forward(child(sd, 0))
        gen = forward_generator(sd, 1)
        a, b = a0.copy(), b0.copy()
        n, c = 0, _FIRST_CHUNK
        while n < cap:
            c = min(c, cap - n)
            sig, tau = stream.next(c)
            U = np.ascontiguousarray(system.innovations(gen, c), dtype=np.float64)
            k = drivers.couple_chunk(params, a, b,
                                     np.ascontiguousarray(sig, dtype=np.float64),
                                     np.ascontiguousarray(tau, dtype=np.float64), U)
            system.check_run(np.stack([a, b]), where=f"in coupling_time, replication {r}, "
                                                     f"after {n + c} arrivals")
            if k >= 0:
                times[r] = n + k
                break
            n += c
            c = min(2 * c, _MAX_CHUNK)
    times.setflags(write=False)
    ok = times[times >= 0].astype(np.float64)
    if ok.size == 0:
        mean = Estimate(math.nan, math.nan)
    elif ok.size == 1:
        mean = Estimate(float(ok[0]), math.nan)
    else:
        mean = Estimate(float(ok.mean()), float(ok.std(ddof=1) / math.sqrt(ok.size)))
    return CouplingTimeResult(
        system=repr(system),
        input=repr(input),
        times=times,
        cap=cap,
        coupled_fraction=float(ok.size / nrep),
        mean=mean,
        censored=int(nrep - ok.size),
    )
