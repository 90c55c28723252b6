# mypy: allow-untyped-defs, allow-incomplete-defs
"""The numba kernels of :class:`coupling._ra_walk.RAWalk`: walks to a rise or a descent.

Each kernel reads pre-drawn increments from a position and returns where it stopped (or a
negative code when its draws ran out, having read nothing), so that the Python side refills
and runs it again with the same numbers first. Their pure-Python twins are in
``tests/naive.py``.
"""

from __future__ import annotations

import math

import numpy as np

from recursions.common import jit

__all__ = ["cyclic_to_descend", "cyclic_to_rise", "log_lr", "path_exceeds", "pick_tilt",
           "ra_known_from", "server_of", "walk_to_descend", "walk_to_rise"]


@jit
def server_of(phase, k, S):
    """The server customer ``-k`` joins under cyclic routing with this ``phase``."""
    return ((phase - k) % S + S) % S


@jit
def cyclic_to_rise(tt, it, st, ist, sp, isp, j, phase, k0, margins):
    """Cyclic routing under the tilt of coordinate ``j``: walk to the first rise.

    Draws come from three streams (tilted interarrivals, tilted services of server ``j``'s
    customers, plain services of the others). Returns the number of steps (``-1``, ``-2``
    or ``-3`` when the first, second or third stream runs out: nothing is read), the new
    stream positions and the displacement.
    """
    S = margins.size
    pos = np.zeros(S)
    n = 0
    while True:
        if it >= tt.size:
            return -1, it, ist, isp, pos
        srv = server_of(phase, k0 + n + 1, S)
        if srv == j:
            if ist >= st.size:
                return -2, it, ist, isp, pos
            x = st[ist]
            ist += 1
        else:
            if isp >= sp.size:
                return -3, it, ist, isp, pos
            x = sp[isp]
            isp += 1
        for i in range(S):
            pos[i] -= tt[it]
        it += 1
        pos[srv] += x
        n += 1
        for i in range(S):
            if pos[i] > margins[i]:
                return n, it, ist, isp, pos


@jit
def cyclic_to_descend(tp, itp, sp, isp, phase, k0, room, a):
    """Cyclic routing, plain draws: walk until every coordinate is ``a`` below ``room``.

    Returns ``(status, steps, positions..., displacement)`` as :func:`walk_to_descend`;
    status -1 or -2 when the interarrival or the service stream runs out.
    """
    S = room.size
    pos = np.zeros(S)
    n = 0
    while True:
        if itp >= tp.size:
            return -1, 0, itp, isp, pos
        if isp >= sp.size:
            return -2, 0, itp, isp, pos
        srv = server_of(phase, k0 + n + 1, S)
        for i in range(S):
            pos[i] -= tp[itp]
        pos[srv] += sp[isp]
        itp += 1
        isp += 1
        n += 1
        below = True
        for i in range(S):
            if pos[i] > room[i]:
                return 0, n, itp, isp, pos
            if pos[i] > room[i] - a:
                below = False
        if below:
            return 1, n, itp, isp, pos


@jit
def walk_to_rise(u, s, t, i0, margins):
    """Walk from 0 on the draws from ``i0`` until a coordinate exceeds its margin.

    Returns the end index (exclusive) and the displacement, or ``-1`` if the draws run out.
    """
    S = margins.size
    pos = np.zeros(S)
    for k in range(i0, u.size):
        for i in range(S):
            pos[i] -= t[k]
        pos[u[k]] += s[k]
        for i in range(S):
            if pos[i] > margins[i]:
                return k + 1, pos
    return -1, pos


@jit
def walk_to_descend(u, s, t, i0, room, a):
    """Walk from 0 until every coordinate is ``a`` below ``room``, or one exceeds it.

    Returns ``(status, end, displacement)``: status 1 when all are ``a`` below (after at
    least one step), 0 when one exceeds ``room``, -1 (nothing read) if the draws run out.
    """
    S = room.size
    pos = np.zeros(S)
    for k in range(i0, u.size):
        for i in range(S):
            pos[i] -= t[k]
        pos[u[k]] += s[k]
        below = True
        for i in range(S):
            if pos[i] > room[i]:
                return 0, k + 1, pos
            if pos[i] > room[i] - a:
                below = False
        if below:
            return 1, k + 1, pos
    return -1, i0, pos


@jit
def path_exceeds(u, s, t, room):
    """Whether the walk along the path ever exceeds ``room`` in some coordinate."""
    S = room.size
    pos = np.zeros(S)
    for k in range(u.size):
        for i in range(S):
            pos[i] -= t[k]
        pos[u[k]] += s[k]
        for i in range(S):
            if pos[i] > room[i]:
                return True
    return False


@jit
def _lse(a):
    """``log(sum(exp(a)))``, shifted by the largest entry.

    Written as loops: numpy's array expressions (``np.exp(a - m)``, ``np.sum``) were most
    of the compile of the first ``perfect_sample`` of a process (:ref:`bench-first-result`
    has the figures). The same numbers as those expressions: the largest entry
    as ``a.max()`` finds it, and the sum in their order (numba's own scalar ``exp``; where
    numba has Intel's SVML, the array expression could have used SVML's, within an ulp).
    """
    m = a[0]
    for i in range(1, a.size):
        if a[i] > m:
            m = a[i]
    total = 0.0
    for i in range(a.size):
        total += math.exp(a[i] - m)
    return m + math.log(total)


@jit
def pick_tilt(margins, theta, uniform):
    """Mixture weights ``pi_i ~ exp(-theta y_i)`` (as logs) and the coordinate drawn."""
    s = margins.size
    logpi = np.zeros(s)  # np.zeros, as the walks allocate: one allocator to compile
    for i in range(s):
        logpi[i] = -theta * margins[i]
    z = _lse(logpi)
    for i in range(s):
        logpi[i] -= z
    acc = 0.0
    for j in range(s):
        acc += math.exp(logpi[j])
        if uniform < acc:
            return logpi, j
    return logpi, s - 1


@jit
def log_lr(logpi, theta, end):
    """``log dP/dQ = -log sum_i pi_i exp(theta D_i)`` at the displacement ``D``."""
    a = np.zeros(logpi.size)
    for i in range(a.size):
        a[i] = logpi[i] + theta * end[i]
    return -_lse(a)


@jit
def ra_known_from(u, s, t, n, bound):
    """Per server, the first customer from ``-n`` on who finds it empty in every past.

    Runs each RA server's Lindley recursion forward from customer ``-n`` started at
    ``bound`` (an upper bound of the true workload): a server whose bounded copy is empty
    when customer ``-k`` arrives is empty then in truth. Returns ``k`` per server (``0`` for
    the customer at time 0; ``-1`` if the server is never seen empty).

    Parameters
    ----------
    u, s, t : numpy.ndarray
        Routes, services and following interarrival times of customers ``-1, -2, ...``.
    n : int
        Start customer (``1 <= n <= len(u)``).
    bound : numpy.ndarray
        Upper bound of the workloads seen by customer ``-n``.

    Returns
    -------
    numpy.ndarray
        int64 array of length ``S``.

    Examples
    --------
    >>> import numpy as np
    >>> u = np.array([0, 1, 0]); s = np.array([1.0, 3.0, 2.0]); t = np.array([1.0, 2.0, 1.0])
    >>> ra_known_from(u, s, t, 3, np.array([0.5, 0.0])).tolist()
    [1, 3]
    """
    S = bound.size
    w = bound.copy()
    known = np.full(S, -1, dtype=np.int64)
    for j in range(n - 1, -1, -1):
        for i in range(S):
            if known[i] < 0 and w[i] <= 0.0:
                known[i] = j + 1
        w[u[j]] += s[j]
        for i in range(S):
            w[i] = max(w[i] - t[j], 0.0)
    for i in range(S):
        if known[i] < 0 and w[i] <= 0.0:
            known[i] = 0
    return known
