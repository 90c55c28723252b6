"""Primitives on sorted workload vectors, for writing maps (built-in or your own).

A map works **in place** on a float64 vector ``w`` sorted ascending (or on consecutive blocks,
each sorted). These compiled helpers do the common steps; call them from your own ``@njit``
step function (see :class:`recursions.Map`):

======================================  =================================================
helper                                   what it does
======================================  =================================================
``add_at_rank(w, lo, hi, r, sigma)``     add ``sigma`` to ``w[r]``, restore the order of
                                         ``w[lo:hi]``; returns the old ``w[r]`` (the
                                         workload the customer found)
``drain(w, tau)``                        ``w <- (w - tau)^+`` coordinatewise (order kept)
``random_rank(u0, s)``                   a uniform rank ``0 .. s-1`` from one uniform
``least_of_d_rank(u0, d, s)``            the least of ``d`` ranks drawn without replacement
``floyd_ranks(u, d, s, out)``            ``d`` distinct uniform ranks (``d`` uniforms)
``resort(w, lo, hi)``                    restore the order of ``w[lo:hi]`` after some
                                         coordinates grew (insertion sort)
``first_idle(w, lo, hi)``                the first index in ``[lo, hi)`` with ``w == 0``,
                                         or ``-1``
======================================  =================================================

Examples
--------
>>> import numpy as np
>>> from recursions.vectors import add_at_rank, drain
>>> w = np.array([0.0, 1.0, 3.0])
>>> add_at_rank(w, 0, 3, 0, 2.0)    # the customer found 0 and brings 2
0.0
>>> drain(w, 0.5); w.tolist()
[0.5, 1.5, 2.5]
"""

from __future__ import annotations

from recursions.common._jit import jit

__all__ = ["add_at_rank", "drain", "first_idle", "floyd_ranks", "kth_smallest",
           "least_of_d_rank", "random_rank", "resort"]


@jit
def add_at_rank(w, lo, hi, r, sigma):
    """Add ``sigma`` to ``w[r]`` and restore the order of ``w[lo:hi]``; return the old ``w[r]``.

    Parameters
    ----------
    w : numpy.ndarray
        float64 vector, ``w[lo:hi]`` sorted ascending; changed in place.
    lo, hi : int
        The sorted block holding rank ``r``.
    r : int
        The rank (index) that receives the work, ``lo <= r < hi``.
    sigma : float
        Work added, ``>= 0``.

    Returns
    -------
    float
        ``w[r]`` before the addition.
    """
    old = w[r]
    x = old + sigma
    i = r
    while i + 1 < hi and w[i + 1] < x:
        w[i] = w[i + 1]
        i += 1
    w[i] = x
    return old


@jit
def drain(w, tau):
    """Subtract ``tau`` from every coordinate and take the positive part (order is kept).

    Parameters
    ----------
    w : numpy.ndarray
        float64 vector, changed in place.
    tau : float
        Time elapsed, ``>= 0``.
    """
    for i in range(w.size):
        v = w[i] - tau
        w[i] = v if v > 0.0 else 0.0


@jit
def random_rank(u0, s):
    """Uniform rank in ``0 .. s-1`` from one uniform ``u0`` in ``[0, 1)``.

    Parameters
    ----------
    u0 : float
        A uniform in ``[0, 1)``.
    s : int
        Number of ranks.

    Returns
    -------
    int
    """
    r = int(u0 * s)
    return r if r < s else s - 1


@jit
def least_of_d_rank(u0, d, s):
    """Smallest of ``d`` ranks drawn without replacement from ``0 .. s-1``, by inversion.

    ``P(min > r) = C(s-r-1, d) / C(s, d)``, built by the product
    ``q_{r+1} = q_r (s - r - d) / (s - r)``; the answer is the least ``r`` with
    ``1 - q_{r+1} > u0``.

    Parameters
    ----------
    u0 : float
        A uniform in ``[0, 1)``.
    d : int
        Number of ranks sampled, ``1 <= d <= s``.
    s : int
        Number of ranks.

    Returns
    -------
    int
    """
    q = 1.0
    for r in range(s):
        q *= (s - r - d) / (s - r)
        if 1.0 - q > u0:
            return r
    return s - d


@jit
def floyd_ranks(u, d, s, out):
    """Write ``d`` distinct ranks of ``0 .. s-1`` into ``out[:d]`` by Floyd's algorithm.

    ``u[q]`` is the uniform of step ``q``: candidate ``floor(u[q] (top + 1))`` with
    ``top = s - d + q``, replaced by ``top`` when already chosen. Every ``d``-subset is equally
    likely; the ranks do not depend on the workloads, which keeps a map monotone.

    Parameters
    ----------
    u : numpy.ndarray
        ``d`` uniforms in ``[0, 1)``.
    d, s : int
        How many ranks, out of how many.
    out : numpy.ndarray
        int64 array of length ``>= d``, written.
    """
    for q in range(d):
        top = s - d + q
        c = int(u[q] * (top + 1))
        if c > top:
            c = top
        for p in range(q):
            if out[p] == c:
                c = top
                break
        out[q] = c


@jit
def resort(w, lo, hi):
    """Restore the order of ``w[lo:hi]`` after some coordinates grew (insertion sort).

    Parameters
    ----------
    w : numpy.ndarray
        float64 vector, changed in place.
    lo, hi : int
        The block to sort.
    """
    for i in range(hi - 2, lo - 1, -1):
        x = w[i]
        m = i
        while m + 1 < hi and w[m + 1] < x:
            w[m] = w[m + 1]
            m += 1
        w[m] = x


@jit
def kth_smallest(x, n, k, scratch):
    """The ``k``-th smallest of ``x[:n]`` (``1 <= k <= n``): ``np.sort(x[:n])[k - 1]``.

    A heapsort of ``x[:n]`` copied into ``scratch`` (a float64 array of at least ``n``
    entries, overwritten), so ``x`` is left as it is; the value is the sort's, whatever the
    ties. Written out rather than by ``np.sort``, which compiles a quicksort into each
    first run (:ref:`bench-first-result`).

    Parameters
    ----------
    x : numpy.ndarray
        float64 values.
    n : int
        How many of them to rank.
    k : int
        Which order statistic.
    scratch : numpy.ndarray
        float64 work space of at least ``n`` entries.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from recursions.vectors import kth_smallest
    >>> kth_smallest(np.array([3.0, 1.0, 2.0, 9.0]), 3, 2, np.empty(4))
    2.0
    """
    for i in range(n):
        scratch[i] = x[i]
    for start in range(n // 2 - 1, -1, -1):  # a max-heap
        _sift_down(scratch, start, n)
    for end in range(n - 1, k - 2, -1):  # the largest n - k + 1 go to the back, in order
        top = scratch[0]
        scratch[0] = scratch[end]
        scratch[end] = top
        _sift_down(scratch, 0, end)
    return scratch[k - 1]


@jit(inline="always")  # called with a literal 0 too: one function, not two compiles
def _sift_down(a, i, n):
    """Sift ``a[i]`` down the max-heap ``a[:n]``."""
    x = a[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and a[c + 1] > a[c]:
            c += 1
        if not a[c] > x:
            break
        a[i] = a[c]
        i = c
    a[i] = x


@jit
def first_idle(w, lo, hi):
    """The first index in ``[lo, hi)`` with ``w[i] == 0`` (an idle server), or ``-1``.

    Parameters
    ----------
    w : numpy.ndarray
        float64 vector, ``w[lo:hi]`` sorted ascending.
    lo, hi : int
        The block.

    Returns
    -------
    int
    """
    if hi > lo and w[lo] == 0.0:
        return lo
    return -1
