"""Erlang B and C: the M/G/c/c blocking and M/M/c waiting probabilities.

Both :mod:`coupling` (exact M/M/c draws) and :mod:`loynes` (closed forms, which export them as
``ly.erlang_b`` and ``ly.erlang_c``) need them, and ``coupling`` must not import ``loynes``.
"""

from __future__ import annotations

from recursions.common._checks import check_int, check_nonnegative

__all__ = ["erlang_b", "erlang_c"]


def erlang_b(servers: int, offered_load: float) -> float:
    """Erlang B blocking probability ``B(c, a)`` of an M/G/c/c loss system.

    Computed by the stable recursion ``1/B(n) = 1 + (n / a) / B(n - 1)``, ``B(0) = 1``
    (relative error below 1e-14 against 50-digit arithmetic up to ``c = 10^5``; ``O(c)``
    steps, timed at ``c = 10^6`` in :ref:`bench-erlang`). The log-space form
    ``P(N = c) / P(N <= c)``, ``N ~ Poisson(a)``, underflows to ``inf`` for ``a`` above about
    730 with few servers, or ``a > 2c``.

    Parameters
    ----------
    servers : int
        Number of servers ``c`` (``>= 0``).
    offered_load : float
        Offered load ``a = lambda E[sigma]`` in Erlangs (total, not per server; ``>= 0``).

    Returns
    -------
    float

    Examples
    --------
    >>> round(erlang_b(2, 1.0), 6)
    0.2
    >>> erlang_b(1, 1.0), round(erlang_b(1, 800.0), 6)   # a / (1 + a) for one server
    (0.5, 0.998752)
    >>> erlang_b(0, 3.0)                                  # no server: everyone is blocked
    1.0
    """
    c = check_int(servers, "servers", 0)
    a = check_nonnegative(offered_load, "offered_load")
    if a == 0:
        return 1.0 if c == 0 else 0.0
    inv = 1.0
    for n in range(1, c + 1):
        inv = 1.0 + inv * n / a
    return 1.0 / inv


def erlang_c(servers: int, offered_load: float) -> float:
    """Erlang C probability of waiting in M/M/c: ``c B / (c - a (1 - B))`` for ``a < c``.

    Parameters
    ----------
    servers : int
        Number of servers ``c`` (``>= 1``).
    offered_load : float
        Offered load ``a = lambda / mu`` in Erlangs (total; ``0 <= a < c``).

    Returns
    -------
    float

    Examples
    --------
    >>> round(erlang_c(1, 0.5), 6)        # M/M/1: rho
    0.5
    >>> round(erlang_c(2, 1.0), 12)       # M/M/2 at a = 1: 1/3
    0.333333333333
    """
    c = check_int(servers, "servers", 1)
    a = check_nonnegative(offered_load, "offered_load")
    if a >= c:
        raise ValueError(f"offered_load must be < servers for a stable M/M/c queue, got "
                         f"offered_load={a}, servers={c}")
    b = erlang_b(c, a)
    return float(c * b / (c - a * (1.0 - b)))
