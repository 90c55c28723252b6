"""Propp-Wilson sandwiching of a monotone map between 0 and a bounding vector ``upper``.

The method ``"monotone"`` of :func:`coupling.perfect_sample`: :func:`check_upper` refuses a
vector the map does not keep below itself, and :func:`draw_monotone` runs the map from 0 and
from ``upper`` at doubling horizons on the time-indexed draws of
:class:`recursions.BackwardDraws`.
"""

# mypy: allow-untyped-defs, allow-incomplete-defs
from __future__ import annotations

import numpy as np

import recursions as rc
from coupling._errors import CouplingNotReached
from recursions.engines import drivers_of, run_window

__all__ = ["check_upper", "draw_monotone"]


def check_upper(system: rc.System, inp: rc.Input, upper: np.ndarray, trials: int,
                 seed: np.random.SeedSequence) -> None:
    """Refuse ``upper`` unless the map keeps states below it below it, on sampled cases.

    ``step(w) <= upper`` for every ``w <= upper`` and every innovation makes the set below
    ``upper`` absorbing, so the paths from 0 (Loynes) and the stationary state stay below it,
    which is what the sandwich from ``upper`` needs (for a monotone map ``w = upper`` is the
    worst case). ``trials`` innovations drawn from the input are tried, half from ``upper``
    itself and half from random sorted states below it; a sample can only refute.
    """
    gen = np.random.default_rng(seed)
    try:
        sig, tau = inp.sample(trials, rng=gen)
        U = np.ascontiguousarray(system.innovations(gen, trials), dtype=np.float64)
        W = np.tile(upper, (trials, 1))
        v = gen.random((trials // 2, upper.size))
        v[gen.random(v.shape) < 0.3] = 0.0
        for lo, hi in system.blocks:
            v[:, lo:hi] = np.sort(v[:, lo:hi], axis=1)
        W[trials - v.shape[0]:] *= v  # sorted factors of a sorted vector: sorted, below it
        start = W.copy()
        found = np.empty(trials)
        drivers_of(system).apply_rows(system.params, W,
                                      np.ascontiguousarray(sig, dtype=float),
                                      np.ascontiguousarray(tau, dtype=float), U, found)
    except rc.MapContractError:  # the map itself broke (check="always" says where)
        raise
    except Exception as exc:
        raise ValueError(f"upper= cannot be checked for {system!r} under {inp!r} "
                         f"({type(exc).__name__}: {exc}), so no draw from it would be exact: "
                         "leave upper= out where the system has its own bound") from exc
    above = np.flatnonzero(np.any(W > upper, axis=1))
    if above.size:
        k = int(above[0])
        raise ValueError(
            f"upper={upper.tolist()} does not bound {system!r}: the map takes a state below it "
            f"above it ({start[k].tolist()} to {W[k].tolist()} with sigma={float(sig[k])!r}, "
            f"tau={float(tau[k])!r}, u={U[k].tolist()}; {above.size} of {trials} sampled "
            "cases), so the stationary state need not lie below it and a sandwich from it "
            "would not be exact")


def _monotone(system, inp, seed, upper, n0, cap):
    draws = rc.BackwardDraws(system, inp, rng=seed)
    n = n0
    while True:
        sig, tau, u = draws.window(n)
        lo = run_window(system, np.zeros(system.servers), sig, tau, u)
        hi = run_window(system, upper.copy(), sig, tau, u)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError(
                f"{system!r} left NaN or inf in the state on this draw's window of {n} "
                f"customers (from 0: {lo.tolist()}, from upper: {hi.tolist()}): the map is "
                "broken (rc.Map(..., check='always') finds the step)")
        if not (np.all(hi <= upper) and np.all(lo <= hi)):
            raise ValueError(
                f"upper={upper.tolist()} does not bound {system!r} on this draw's own window "
                f"of {n} customers: from it the map ends at {hi.tolist()} (from 0 at "
                f"{lo.tolist()}), not below it, so no exact draw comes from it")
        if np.array_equal(lo, hi):
            return lo, n, float(tau.sum())
        if n >= cap:
            raise CouplingNotReached(f"the sandwich did not close within {cap} customers back; "
                                     "raise cap_customers")
        n = min(2 * n, cap)


def draw_monotone(sd, system, inp, upper, n0, cap):
    """One Propp-Wilson draw between 0 and ``upper``."""
    return _monotone(system, inp, sd, upper, n0, cap)

