"""Drawing from the built-in laws inside numba kernels.

:meth:`Law.kernel_sampler() <recursions.dists.Law.kernel_sampler>` describes a built-in law as
an integer code (:class:`recursions.common.codes.LawCode`) and a float64 parameter array; the
compiled functions here read that description and draw from a :class:`numpy.random.Generator` passed
into the kernel (numba shares the generator's state with Python, so draws inside and outside
compiled code continue one stream):

* :func:`draw` ``(code, params, gen, n)`` returns exactly ``law.sample(gen, n)``, bit for bit,
  for every ``n`` (it follows the same order of primitive draws);
* :func:`draw_one` ``(code, params, gen)`` returns exactly ``law.sample(gen, 1)[0]``. A run of
  ``n`` calls equals ``law.sample(gen, n)`` for the laws whose vectorised sampler draws element
  by element (all but :class:`~recursions.dists.HyperExponential` and
  :class:`~recursions.dists.Coxian`, whose ``sample`` draws all phase choices first): a kernel
  that draws one at a time sees the same law, not the same numbers, for those two;
* :func:`sampler` ``(code)`` is the compiled sampler of one law, ``f(p0, params, gen)``, with
  ``p0 = params[0]`` passed in: what loops compiled for known laws bind and inline.

Only the generator's primitive draws are used (``random``, ``standard_exponential``,
``standard_normal``, ``standard_gamma``), combined by the arithmetic numpy's own samplers use
(``exponential(scale)`` is ``scale * standard_exponential()``, and so on), so the numbers agree
with numpy's to the last bit.

Examples
--------
>>> import numpy as np
>>> from recursions.dists import Erlang
>>> from recursions.dists.kernel import draw
>>> code, params = Erlang(3, rate=2.0).kernel_sampler()
>>> a = draw(code, params, np.random.default_rng(5), 4)
>>> b = Erlang(3, rate=2.0).sample(np.random.default_rng(5), 4)
>>> bool(np.array_equal(a, b))
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from recursions.common._jit import jit
from recursions.common.codes import LawCode

__all__ = ["draw", "draw_one", "lomax_transform", "sampler"]

_DET = int(LawCode.DETERMINISTIC)
_EXP = int(LawCode.EXPONENTIAL)
_ERL = int(LawCode.ERLANG)
_HYP = int(LawCode.HYPEREXPONENTIAL)
_COX = int(LawCode.COXIAN)
_LGN = int(LawCode.LOGNORMAL)
_LMX = int(LawCode.LOMAX)
_UNI = int(LawCode.UNIFORM)
_EMP = int(LawCode.EMPIRICAL)


@jit
def lomax_transform(e, shape, scale):
    """``scale * expm1(e / shape)`` element by element, with the C library's ``expm1``.

    :meth:`Lomax.sample <recursions.dists.Lomax.sample>` uses it instead of ``numpy.expm1``,
    whose vectorised (SIMD) loops may differ from the scalar function in the last bit, so that
    :func:`draw_one` inside a kernel gives the very same numbers on every machine.
    """
    out = np.empty(e.size)
    for i in range(e.size):
        out[i] = scale * math.expm1(e[i] / shape)
    return out


@jit
def _search_right(cdf, start, size, u):
    """``numpy.searchsorted(cdf[start:start + size], u, side="right")``."""
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) // 2
        if u < cdf[start + mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@jit
def _hyperexponential(params, gen):
    """One draw of a hyperexponential law (:func:`draw_one`'s branch)."""
    m = int(params[0])
    j = _search_right(params, 1, m, gen.random())
    if j > m - 1:
        j = m - 1
    return gen.standard_exponential() / params[1 + m + j]


@jit
def _coxian(params, gen):
    """One draw of a Coxian law (:func:`draw_one`'s branch)."""
    m = int(params[0])
    x = 0.0
    for k in range(m):
        x += gen.standard_exponential() / params[1 + k]
        if k < m - 1 and not gen.random() < params[1 + m + k]:
            break
    return x


@jit
def _empirical(params, gen):
    """One draw of an empirical law (:func:`draw_one`'s branch)."""
    m = int(params[0])
    j = _search_right(params, 1, m, gen.random())
    return params[1 + m + j]


@jit(inline="always")
def _exponential(p0, params, gen):
    """An exponential law: ``p0`` is its mean."""
    return p0 * gen.standard_exponential()


@jit(inline="always")
def _deterministic(p0, params, gen):
    """A deterministic law: ``p0`` is its value."""
    return p0


@jit(inline="always")
def _erlang(p0, params, gen):
    """An Erlang law: ``p0`` its number of phases, ``params[1]`` the scale."""
    return params[1] * gen.standard_gamma(p0)


@jit(inline="always")
def _uniform(p0, params, gen):
    """A uniform law on ``[p0, p0 + params[1])``."""
    return p0 + params[1] * gen.random()


@jit(inline="always")
def _lognormal(p0, params, gen):
    """A log-normal law: ``p0`` and ``params[1]`` are the normal's mean and deviation."""
    return math.exp(p0 + params[1] * gen.standard_normal())


@jit(inline="always")
def _lomax(p0, params, gen):
    """A Lomax law: ``p0`` its shape, ``params[1]`` its scale."""
    return params[1] * math.expm1(gen.standard_exponential() / p0)


@jit(inline="always")
def _hyperexponential_of(p0, params, gen):
    """A hyperexponential law (the parameters in ``params``)."""
    return _hyperexponential(params, gen)


@jit(inline="always")
def _coxian_of(p0, params, gen):
    """A Coxian law (the parameters in ``params``)."""
    return _coxian(params, gen)


@jit(inline="always")
def _empirical_of(p0, params, gen):
    """An empirical law (the parameters in ``params``)."""
    return _empirical(params, gen)


_SAMPLERS = {_EXP: _exponential, _DET: _deterministic, _ERL: _erlang, _UNI: _uniform,
             _LGN: _lognormal, _LMX: _lomax, _HYP: _hyperexponential_of, _COX: _coxian_of,
             _EMP: _empirical_of}


def sampler(code: int) -> Any:
    """The compiled sampler of one law code: ``f(p0, params, gen)``, one draw.

    ``p0`` is ``params[0]``; the draw is :func:`draw_one`'s, bit for bit. A loop compiled
    for known laws binds their samplers as constants (the drivers' ``DRAW_S`` and
    ``DRAW_T``), so its first compile builds only those laws' own code, not every law's
    (:ref:`bench-first-result`); the samplers are inlined where they are called. A loop that
    draws per customer may read ``p0`` once, before the loop.

    Parameters
    ----------
    code : int
        A :class:`recursions.common.codes.LawCode`.

    Returns
    -------
    numba dispatcher
        Compiled with ``inline="always"``.

    Examples
    --------
    >>> import numpy as np
    >>> from recursions.dists import Lomax
    >>> code, params = Lomax(2.5, mean=1.0).kernel_sampler()
    >>> a = sampler(code)(params[0], params, np.random.default_rng(3))
    >>> bool(a == Lomax(2.5, mean=1.0).sample(np.random.default_rng(3), 1)[0])
    True
    """
    try:
        return _SAMPLERS[int(code)]
    except KeyError:
        raise ValueError(f"unknown law code {code!r}") from None


@jit
def draw_one(code, params, gen):
    """One draw of the law ``(code, params)``: exactly ``law.sample(gen, 1)[0]``.

    Parameters
    ----------
    code : int
        A :class:`recursions.common.codes.LawCode`.
    params : numpy.ndarray
        The float64 parameters of :meth:`recursions.dists.Law.kernel_sampler`.
    gen : numpy.random.Generator
        The generator (its state advances as under ``law.sample``).

    Returns
    -------
    float
    """
    p0 = params[0]
    if code == _EXP:
        return _exponential(p0, params, gen)
    if code == _DET:
        return _deterministic(p0, params, gen)
    if code == _ERL:
        return _erlang(p0, params, gen)
    if code == _UNI:
        return _uniform(p0, params, gen)
    if code == _LGN:
        return _lognormal(p0, params, gen)
    if code == _LMX:
        return _lomax(p0, params, gen)
    if code == _HYP:
        return _hyperexponential_of(p0, params, gen)
    if code == _COX:
        return _coxian_of(p0, params, gen)
    if code == _EMP:
        return _empirical_of(p0, params, gen)
    raise ValueError("unknown law code")


@jit
def draw(code, params, gen, n):
    """``n`` draws of the law ``(code, params)``: exactly ``law.sample(gen, n)``.

    Parameters
    ----------
    code : int
        A :class:`recursions.common.codes.LawCode`.
    params : numpy.ndarray
        The float64 parameters of :meth:`recursions.dists.Law.kernel_sampler`.
    gen : numpy.random.Generator
        The generator.
    n : int
        How many, ``>= 0``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n,)``.
    """
    out = np.zeros(n)
    if code == _HYP:
        m = int(params[0])
        phase = np.empty(n, dtype=np.int64)
        for i in range(n):
            j = _search_right(params, 1, m, gen.random())
            phase[i] = j if j < m - 1 else m - 1
        for i in range(n):
            out[i] = gen.standard_exponential() / params[1 + m + phase[i]]
        return out
    if code == _COX:
        m = int(params[0])
        active = np.arange(n)
        na = n
        for k in range(m):
            if na == 0:
                break
            for i in range(na):
                out[active[i]] += gen.standard_exponential() / params[1 + k]
            if k < m - 1:
                keep = 0
                for i in range(na):
                    if gen.random() < params[1 + m + k]:
                        active[keep] = active[i]
                        keep += 1
                na = keep
        return out
    for i in range(n):
        out[i] = draw_one(code, params, gen)
    return out
