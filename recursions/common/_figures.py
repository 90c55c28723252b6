"""The helpers every result's ``.plot`` shares: axes, bands, titles, the span of a tail.

Each result draws itself beside its class (``SimulationResult`` in
:mod:`recursions.results._simulation_result`,
the samples in :mod:`coupling._sample_plots`, the results of :mod:`loynes` in their modules)
with these helpers.

matplotlib is an optional extra::

    pip install 'queue-recursions[plot]'

It is imported inside the functions, never when this module is imported; without it a plot
raises an ``ImportError`` that says what to install.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXTRA", "axes", "band", "level_span", "pyplot", "title"]

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

    from recursions.common._checks import check_real

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
