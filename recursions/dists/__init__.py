"""Service and interarrival laws for the queue recursions.

Every law is an immutable (frozen dataclass) subclass of :class:`Law` and offers what the
simulators and the analytic formulas need:

* ``mean`` (finite and > 0: laws with an infinite or zero mean are rejected at construction),
  ``var`` (may be ``inf``) and ``scv = var / mean**2``; the ``repr`` of a law shows its mean and
  scv after its parameters, e.g. ``Exponential(rate=2.0; mean=0.5, scv=1)``;
* ``sample(rng, size)``: vectorised draws from the given :class:`numpy.random.Generator` only;
* ``sf(x) = P(X > x)`` and ``cdf(x) = 1 - sf(x)``;
* ``integrated_sf(w) = E[(X - w)^+]``, the integral of ``sf`` over ``[w, inf)``, and
  ``equilibrium_sf(w) = integrated_sf(w) / mean``, the tail of the stationary residual-life
  (equilibrium) law;
* what the methods of :mod:`coupling` and :mod:`recursions.zerowait` need, each a method with
  a generic fallback in :class:`Law` and closed forms in the laws that have one:
  ``log_mgf(theta)`` / ``mgf(theta)`` and ``tilted_sampler(theta)`` (exponential tilts),
  ``support_max`` (the top of the support), ``size_biased_sample(gen, n)``, ``coxian()`` (the
  phase-type form), ``kernel_sampler()`` (drawing inside numba kernels, see
  :mod:`recursions.dists.kernel`), ``exponential_rate`` and ``closed_form_tails``.

The laws, all with closed-form ``sf`` and ``integrated_sf``:

==================================  ============================================================
module                              laws
==================================  ============================================================
:mod:`recursions.dists.phase_type`  :class:`Exponential` ``(rate=)`` or ``(mean=)``;
                                    :class:`Erlang` ``(k, rate=)`` or ``(k, mean=)``;
                                    :class:`HyperExponential` ``(probs, rates)`` and
                                    ``.balanced(mean, scv)``; :class:`Coxian` ``(rates, probs)``
                                    and ``.normalised``
:mod:`recursions.dists.bounded`     :class:`Deterministic` ``(value=)`` or ``(mean=)``;
                                    :class:`Uniform` ``(low=, high=)``; :class:`Empirical`
                                    ``(values, weights=None)``
:mod:`recursions.dists.heavy`       :class:`LogNormal` ``(mean=, scv=)``; :class:`Lomax`
                                    ``(shape=, scale=)`` or ``(shape=, mean=)`` (Pareto type II,
                                    needs ``shape > 1``)
:mod:`recursions.dists.scipy_law`   :class:`ScipyLaw` ``(dist)`` and :func:`as_law`
:mod:`recursions.dists.base`        :class:`Law`, :class:`KernelSampler`
==================================  ============================================================

A positional argument keeps its meaning (``Exponential(2.0)`` is the rate, ``Erlang(3, 6.0)``
``k`` and the rate, ``Lomax(3.0, 2.0)`` the shape and scale); keywords name the
parametrisation, and the mean keywords are exclusive with the parameter they replace.

:func:`as_law` turns the ``service=`` / ``arrival=`` argument of the public API into a
:class:`Law` (laws pass through, scipy distributions are wrapped in :class:`ScipyLaw`: frozen
``scipy.stats`` distributions and the newer distribution objects alike).

Examples
--------
>>> import recursions as rc
>>> rc.dists.Exponential(mean=0.5)
Exponential(rate=2.0; mean=0.5, scv=1)
>>> rc.dists.Erlang(2, mean=1.0).coxian()
Coxian(rates=(2.0, 2.0), probs=(1.0,); mean=1, scv=0.5)
"""

from __future__ import annotations

from recursions.dists.base import KernelSampler, Law, Sampler
from recursions.dists.bounded import Deterministic, Empirical, Uniform
from recursions.dists.heavy import LogNormal, Lomax
from recursions.dists.phase_type import Coxian, Erlang, Exponential, HyperExponential
from recursions.dists.scipy_law import ScipyLaw, as_law

__all__ = [
    "Coxian",
    "Deterministic",
    "Empirical",
    "Erlang",
    "Exponential",
    "HyperExponential",
    "KernelSampler",
    "Law",
    "LogNormal",
    "Lomax",
    "Sampler",
    "ScipyLaw",
    "Uniform",
    "as_law",
]
