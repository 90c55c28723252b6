"""Drawing of ``SimulationResult.plot``, and the helpers the other packages' plots share.

:mod:`coupling.sample_plots` and the results of :mod:`loynes` (each beside its class) draw
the other results with them.

matplotlib is an optional extra::

    pip install 'queue-recursions[plot]'

It is imported inside the functions, never when this module is imported; without it a plot
raises an ``ImportError`` that says what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .result import SimulationResult

__all__ = ["EXTRA", "axes", "band", "level_span", "pyplot", "simulation", "title"]

EXTRA = "pip install 'queue-recursions[plot]'"
"""What to run when matplotlib is missing."""

FIGSIZE = (7.0, 4.2)
"""Size of a new figure (inches)."""


def pyplot(what: str) -> Any:
    """``matplotlib.pyplot``, or an ``ImportError`` naming the extra to install.

    Parameters
    ----------
    what : str
        What needs it (e.g. ``"SimulationResult.plot()"``), for the message.

    Returns
    -------
    module
        ``matplotlib.pyplot``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> pyplot("this example").__name__
    'matplotlib.pyplot'
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(f"{what} needs matplotlib, which is not installed: {EXTRA}") from None
    return plt


def axes(ax: Any, what: str) -> Any:
    """``ax``, or the Axes of a new figure when ``ax`` is ``None`` (matplotlib checked first).

    Parameters
    ----------
    ax : matplotlib Axes or None
        Where to draw.
    what : str
        What draws (for the install hint when matplotlib is missing).

    Returns
    -------
    matplotlib.axes.Axes
    """
    plt = pyplot(what)
    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    return ax


def band(level: float) -> float:
    """The normal quantile ``z`` of a two-sided band at ``level`` (``value ± z se``).

    Examples
    --------
    >>> round(band(0.95), 3)
    1.96
    """
    from scipy.stats import norm

    from ._validate import check_real

    level = check_real(level, "level", 0.0, 1.0, open_lo=True, open_hi=True)
    return float(norm.ppf(0.5 + level / 2))


def title(ax: Any, what: str, detail: str, width: int = 80) -> None:
    """Set the title: ``what`` (what the plot shows), then ``detail`` wrapped at ``width``."""
    import textwrap

    lines = [w for part in detail.split("\n") for w in textwrap.wrap(part, width)]
    ax.set_title("\n".join([what, *lines]), fontsize=10, loc="left")


def level_span(f: Any, start: float, scale: float) -> float:
    """Where the decreasing ``f`` falls below ``start / 1000`` (at most ``60 scale``).

    The right end of a plot of a tail or a profile that starts at ``start``: far enough to
    show its decay, never more than 60 times its natural ``scale``.

    Examples
    --------
    >>> import math
    >>> round(level_span(lambda w: math.exp(-w), 1.0, 1.0), 2)
    7.45
    """
    scale = max(float(scale), 1e-12)
    top = scale
    while top < 60 * scale and float(f(top)) > start * 1e-3:
        top *= 1.25
    return min(top, 60 * scale)


def simulation(res: SimulationResult, ax: Any = None, *, level: float = 0.95) -> Any:
    """Draw :meth:`SimulationResult.plot <recursions.SimulationResult.plot>`."""
    z = band(level)
    ax = axes(ax, "SimulationResult.plot()")
    g = res.grid
    if g.size == 0:
        raise ValueError("this result has no grid: pass grid=... to simulate (a run with "
                         "statistics= naming only waits or losses keeps none)")
    if res.mean_response is not None and res.p_wait is None:
        tail = "P(R > w): response time of a job"
    elif res.p_wait is None:
        tail = "P(found > w): workload an admitted arrival finds at its server"
    else:
        tail = "P(W > w): wait of an arriving customer"
    curves = [("profile", "x_w: fraction of servers with workload > w", "-"),
              ("wait_sf", tail, "--")]
    errors: list[ValueError] = []
    for method, label, style in curves:
        try:
            est = getattr(res, method)(g)
        except ValueError as exc:  # too few snapshots, or no histogram of what was found
            errors.append(exc)
            continue
        value = np.asarray(est.value, dtype=float)
        se = np.nan_to_num(np.asarray(est.se, dtype=float))
        (line,) = ax.plot(g, value, style, lw=1.8, label=label)
        ax.fill_between(g, np.clip(value - z * se, 0.0, 1.0), np.clip(value + z * se, 0.0, 1.0),
                        color=line.get_color(), alpha=0.25, lw=0)
    if len(errors) == len(curves):
        raise errors[0]
    ax.set_xlabel("level w (workload, time)")
    ax.set_ylabel("fraction / probability")
    ax.set_xlim(float(g[0]), float(g[-1]))
    ax.set_ylim(0.0, 1.02)
    n = f"{res.steps:,} arrivals" + (f" × {res.replications} replications"
                                     if res.replications > 1 else "")
    title(ax, "Profile x_w and wait tail seen by arrivals (simulation)",
          f"{res.system}, {res.input}\n{n}; shaded: pointwise {level:.0%} band")
    ax.legend(fontsize=8, loc="upper right")
    return ax
