"""Conditions (3) and (11) of :ref:`theory-stability` as sympy expressions, with numeric forms.

Symbols: ``lam`` (the total arrival rate lambda) and ``m`` (the mean service time E[sigma]).

* (3): ``lam m < S``.
* (11) with Poisson input: ``lam m B_p(lam m) < S - p`` where
  ``B_p(a) = (a^p / p!) / sum_{k <= p} a^k / k!`` is Erlang's loss formula.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp

from recursions.common import check_int

__all__ = ["condition_3", "condition_11", "erlang_b_expr", "lam", "m", "margin", "numeric"]

lam, m = sp.symbols("lambda E_sigma", positive=True)


def _check(servers: int, p: int | None = None) -> None:
    s = check_int(servers, "servers", 1)
    if p is not None:
        check_int(p, "p", 0, s - 1)


def erlang_b_expr(servers: int, a: sp.Expr) -> sp.Expr:
    """Erlang B ``B(c, a)`` as a rational function of ``a``.

    Parameters
    ----------
    servers : int
        Number of servers ``c`` (``>= 0``).
    a : sympy expression
        Offered load (total, in Erlangs).

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import sympy as sp
    >>> a = sp.Symbol("a")
    >>> sp.simplify(erlang_b_expr(1, a))
    a/(a + 1)
    """
    c = check_int(servers, "servers", 0)
    terms = [a**k / sp.factorial(k) for k in range(c + 1)]
    return terms[-1] / sp.Add(*terms)


def condition_3(servers: int) -> sp.Rel:
    """Condition (3), ``lambda E[sigma] < S``.

    Parameters
    ----------
    servers : int
        ``S``.

    Returns
    -------
    sympy.StrictLessThan

    Examples
    --------
    >>> condition_3(2)
    E_sigma*lambda < 2
    """
    _check(servers)
    return sp.StrictLessThan(lam * m, servers)


def condition_11(servers: int, p: int) -> sp.Rel:
    """Condition (11) for Poisson input, ``lambda E[sigma] B(p, lambda E[sigma]) < S - p``.

    Parameters
    ----------
    servers : int
        ``S``.
    p : int
        The J_{p+1}SW parameter, ``0 <= p <= S - 1`` (Erlang B of ``p`` servers).

    Returns
    -------
    sympy.StrictLessThan

    Examples
    --------
    >>> condition_11(2, 1)
    E_sigma**2*lambda**2/(E_sigma*lambda + 1) < 1
    """
    _check(servers, p)
    a = lam * m
    return sp.StrictLessThan(sp.simplify(a * erlang_b_expr(p, a)), servers - p)


def margin(condition: sp.Rel) -> sp.Expr:
    """``rhs - lhs``: positive exactly where the condition holds.

    Parameters
    ----------
    condition : sympy relational
        A strict inequality ``lhs < rhs``.

    Returns
    -------
    sympy.Expr
    """
    return condition.rhs - condition.lhs


def numeric(condition: sp.Rel) -> Callable[[float, float], np.ndarray]:
    """Lambdify a condition's margin: ``f(lam, m) > 0`` where the condition holds.

    Parameters
    ----------
    condition : sympy relational
        From :func:`condition_3` or :func:`condition_11`.

    Returns
    -------
    callable
        Vectorised ``f(lam, m)`` (numpy).

    Examples
    --------
    >>> f = numeric(condition_11(2, 1))
    >>> bool(f(1.5, 1.0) > 0), bool(f(1.7, 1.0) > 0)
    (True, False)
    """
    return sp.lambdify((lam, m), margin(condition), modules="numpy")
