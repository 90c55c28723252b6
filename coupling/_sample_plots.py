"""Drawing of :class:`~coupling.PerfectSample`, with the exact law where it is known.

The exact law comes from :mod:`coupling._mms_exact`, not from :mod:`loynes` (which
:mod:`coupling` must not import): for FCFS M/M/S (``JSW`` under Poisson, or exponential
renewal, input with exponential service) the wait ``W`` of an arrival has
``P(W > 0) = C(S, a)`` (Erlang C, offered load ``a = lambda / mu``) and
``P(W > t) = C(S, a) exp(-(S mu - lambda) t)`` (:func:`coupling._mms_exact.mmc_wait`). The
system and input are recognised from the descriptions the sample records
(``PerfectSample.system`` and ``.input``); for any other pair the histogram is drawn alone,
and its legend says that no exact law is drawn. matplotlib is imported inside the functions
only (``pip install 'queue-recursions[plot]'``).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import numpy as np

from coupling._mms_exact import mmc_wait
from recursions.common import axes, title

__all__ = ["mmc_rates", "perfect_sample"]

_FLOAT = r"([-+0-9.eE]+|inf)"
_JSW = re.compile(r"^JSW\(servers=(\d+)\)$")
_POISSON = re.compile(rf"^Poisson\(rate={_FLOAT}, service=Exponential\(rate={_FLOAT};.*\)\)$")
_RENEWAL = re.compile(rf"^Renewal\(interarrival=Exponential\(rate={_FLOAT};[^)]*\), "
                      rf"service=Exponential\(rate={_FLOAT};.*\)\)$")


def mmc_rates(system: str, input: str) -> tuple[int, float, float] | None:
    """``(S, lambda, mu)`` when the descriptions are FCFS M/M/S (``JSW``), else ``None``.

    Parameters
    ----------
    system, input : str
        ``repr`` of the system and of the input (as a :class:`~coupling.PerfectSample`
        records them).

    Returns
    -------
    tuple of (int, float, float) or None

    Examples
    --------
    >>> import recursions as rc
    >>> mmc_rates(repr(rc.JSW(2)), repr(rc.Poisson(1.5, rc.dists.Exponential(2.0))))
    (2, 1.5, 2.0)
    >>> mmc_rates(repr(rc.JSW(2)), repr(rc.Poisson(1.5, rc.dists.Deterministic(0.5)))) is None
    True
    """
    sm = _JSW.match(system)
    im = _POISSON.match(input) or _RENEWAL.match(input)
    if sm is None or im is None:
        return None
    try:
        lam, mu = float(im.group(1)), float(im.group(2))
    except ValueError:
        return None
    return int(sm.group(1)), lam, mu


class Drawable(Protocol):
    """What :func:`perfect_sample` reads of a :class:`~coupling.PerfectSample`.

    Written out here so that this module needs nothing from the one that defines the result
    (which imports this one when asked to draw).
    """

    @property
    def system(self) -> str: ...

    @property
    def input(self) -> str: ...

    @property
    def samples(self) -> np.ndarray: ...

    @property
    def method(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def found(self) -> np.ndarray | None: ...

    @property
    def has_loss(self) -> bool: ...

    @property
    def p_wait(self) -> Any: ...  # an Estimate, or None


def perfect_sample(ps: Drawable, ax: Any = None, *, bins: int = 30,
                   exact: bool = True) -> Any:
    """Draw :meth:`PerfectSample.plot <coupling.PerfectSample.plot>`."""
    ax = axes(ax, "PerfectSample.plot()")
    law = mmc_rates(ps.system, ps.input) if exact else None
    if ps.found is not None and not ps.has_loss:
        x, what, sym = ps.found, "W, the wait of the customer arriving at 0", "W"
        p = ps.p_wait
        atom = f"P(W > 0) = {p:.3g}" if p is not None else ""
    else:
        x, what, sym = (ps.samples.sum(axis=1),
                        "sum_i w(i), the total workload an arrival sees", "sum")
        atom, law = f"P(sum = 0) = {float(np.mean(x == 0)):.3g}", None
    positive = x[x > 0]
    edges = np.linspace(0.0, float(positive.max()) if positive.size else 1.0, bins + 1)
    # a defective density: the part of the law above 0 (its area is P(X > 0); the atom at 0,
    # the customers who do not wait, is given in the legend instead of as a spike)
    weights = np.full(positive.size, 1.0 / (ps.size * (edges[1] - edges[0])))
    ax.hist(positive, bins=edges, weights=weights, color="tab:blue", alpha=0.55,
            label=f"{ps.size} exact draws ({ps.method}); {atom}")
    if law is not None and not law[1] < law[0] * law[2]:
        law = None  # no stationary law
    if law is not None:
        c, r = mmc_wait(*law)
        t = np.linspace(0.0, float(edges[-1]), 200)
        ax.plot(t, c * r * np.exp(-r * t), "k-", lw=1.5,
                label=f"exact M/M/{law[0]}: P(W > 0) = {c:.3g} (Erlang C), "
                      f"density {c:.3g}·{r:.3g}·exp(-{r:.3g} t)")
    else:
        ax.plot([], [], " ", label="no exact law drawn (known here for JSW M/M/S only)")
    ax.set_xlim(0.0, float(edges[-1]))
    ax.set_xlabel(what)
    ax.set_ylabel(f"density on (0, ∞); area = P({sym} > 0)")
    title(ax, "Perfect (exact stationary) sample: histogram" + (" against the exact law"
                                                                if law is not None else ""),
          f"{ps.system}, {ps.input}")
    ax.legend(fontsize=8, loc="upper right")
    return ax
