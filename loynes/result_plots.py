"""Drawing of the results of :mod:`loynes` (the ``.plot`` methods call these).

``LoynesResult.plot``, ``StabilityReport.plot``, ``JIQEquilibrium.plot`` and
``RedundancyFixedPoint.plot``; :class:`~loynes.StabilityMap` draws itself.

matplotlib is imported inside the functions only; without it a plot raises an ``ImportError``
that says what to install (``pip install 'queue-recursions[plot]'``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from recursions.plots import axes, band, title

if TYPE_CHECKING:
    from .jiq import JIQEquilibrium
    from .redundancy_theory import RedundancyFixedPoint
    from .report import StabilityReport
    from .sequence import LoynesResult

__all__ = ["jiq_equilibrium", "loynes_result", "redundancy_fixed_point", "stability_report"]

HOLDS_COLOURS = {True: "tab:green", False: "tab:red", None: "tab:gray"}
"""Bar colour of a condition that holds, fails, or is not decided."""


def loynes_result(res: LoynesResult, ax: Any = None) -> Any:
    """Draw :meth:`LoynesResult.plot <loynes.LoynesResult.plot>`."""
    ax = axes(ax, "LoynesResult.plot()")
    n = res.horizons
    ax.plot(n, res.total_workload, "o-", lw=1.8, label="sum_i W_n(i): total workload")
    ax.plot(n, res.states.max(axis=1), "s--", lw=1.2, ms=4,
            label="max_i W_n(i): largest workload")
    if res.stabilised_at is not None:
        if res.basis.kind == "certificate":
            what = (f"runs from empty and from {res.upper_start:.3g} per server agree at "
                    f"n = {res.stabilised_at}")
        else:
            what = f"W_n constant from n = {res.stabilised_at}"
        ax.axvline(res.stabilised_at, color="tab:green", ls=":", lw=1.5, label=what)
    if 0 < res.min_horizon < math.inf and res.min_horizon <= n[-1]:
        ax.axvline(res.min_horizon, color="tab:gray", ls="-.", lw=1,
                   label=f"plateau's minimum horizon n_min = {res.min_horizon:.3g}")
    ax.set_xscale("log", base=2)
    ax.set_xlim(n[0] / 1.5, n[-1] * 1.5)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("horizon n (customers back from time 0)")
    ax.set_ylabel("workload at time 0")
    load = "" if res.load is None else f"; load {res.load:.3g}"
    verdict = "limit reached" if res.stabilised else "no limit reached"
    title(ax, f"Loynes sequence W_n against the horizon: {verdict}",
          f"{res.system}, {res.input}{load}\nbasis: {res.basis}")
    ax.legend(fontsize=8, loc="lower right")
    return ax


def stability_report(rep: StabilityReport, ax: Any = None, *, level: float = 0.95) -> Any:
    """Draw :meth:`StabilityReport.plot <loynes.StabilityReport.plot>`."""
    z = band(level)
    ax = axes(ax, "StabilityReport.plot()")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    conds = list(rep.conditions)
    ys = np.arange(len(conds))[::-1]
    for y, c in zip(ys, conds, strict=True):
        ax.barh(y, c.value, height=0.6, color=HOLDS_COLOURS[c.holds], alpha=0.8)
        estimated = c.se > 0 and math.isfinite(c.se)
        if estimated:
            ax.errorbar(c.value, y, xerr=z * c.se, fmt="none", ecolor="black", capsize=3)
        thr = 0.0 if c.name == "(9)" else 1.0
        ax.vlines(thr, y - 0.42, y + 0.42, colors="black", lw=2)
        if math.isfinite(c.value):
            text = f"{c.value:.3g}" + (f" ± {c.se:.2g}" if estimated else "")
        else:
            text = "no value computed" + {True: ": holds by an argument (see the report)",
                                          False: ": fails by an argument (see the report)",
                                          None: ""}[c.holds]
        ax.annotate(text, (max(c.value, 0.0) if math.isfinite(c.value) else 0.0, y),
                    xytext=(4, 8), fontsize=8, textcoords="offset points", va="bottom")
    handles: list[Any] = [
        Patch(color=HOLDS_COLOURS[h], alpha=0.8, label=text)
        for h, text in ((True, "holds"), (False, "fails"), (None, "not decided"))
        if any(c.holds is h for c in conds)]
    handles.append(Line2D([], [], color="black", marker="|", ls="none", ms=12, mew=2,
                          label="threshold: 1 (value < 1), or 0 for (9) (value > 0)"))
    ax.set_yticks(ys, [f"{c.name}\n{_short_role(c.role)}" for c in conds], fontsize=8)
    ax.set_ylim(-0.6, len(conds) - 0.4)
    ends = [c.value + (z * c.se if c.se > 0 and math.isfinite(c.se) else 0.0) for c in conds]
    ax.set_xlim(0.0, 1.2 * max([1.0, *(e for e in ends if math.isfinite(e))]))
    ax.set_xlabel("condition value (scaled so that a condition reads value < 1)")
    title(ax, f"Stability conditions against their thresholds: {rep.verdict.upper()}",
          f"{rep.system}, {rep.input}\ndecided by {rep.decided_by}"
          + (f"; error bars: {level:.0%}" if any(c.se > 0 for c in conds) else ""), width=62)
    ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=len(handles), frameon=False)
    return ax


def _short_role(role: str) -> str:
    return role if len(role) <= 24 else role[:22] + "…"


def jiq_equilibrium(eq: JIQEquilibrium, ax: Any = None, *, w_max: float | None = None,
                    times: Sequence[float] = ()) -> Any:
    """Draw :meth:`JIQEquilibrium.plot <loynes.JIQEquilibrium.plot>`."""
    ax = axes(ax, "JIQEquilibrium.plot()")
    top = _level_span(eq.profile, eq.load, eq.service.mean) if w_max is None else float(w_max)
    w = np.linspace(0.0, top, 400)
    ax.plot(w, eq.profile(w), "-", lw=2, label="x*_w: equilibrium (every arrival finds an "
                                                 "idle server)")
    for t in times:
        ax.plot(w, eq.transient(w, float(t)), "--", lw=1,
                label=f"x↑_w(t): fluid limit from empty at t = {float(t):g}")
    ax.set_xlim(0.0, top)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("workload level w")
    ax.set_ylabel("fraction of servers with workload > w")
    title(ax, "Large-scale JIQ (n → ∞): equilibrium workload profile",
          f"λ = {eq.rate_per_server:.4g} per server, service {eq.service!r}, "
          f"load {eq.load:.3g}")
    ax.legend(fontsize=8, loc="upper right")
    return ax


def redundancy_fixed_point(fp: RedundancyFixedPoint, ax: Any = None, *,
                           w_max: float | None = None) -> Any:
    """Draw :meth:`RedundancyFixedPoint.plot <loynes.RedundancyFixedPoint.plot>`."""
    ax = axes(ax, "RedundancyFixedPoint.plot()")
    top = (_level_span(fp.response_sf, 1.0, fp.mean_response) if w_max is None
           else float(w_max))
    w = np.linspace(0.0, top, 400)
    ax.plot(w, fp.profile(w), "-", lw=2, label="x_w: fraction of servers with workload > w")
    ax.plot(w, fp.response_sf(w), "--", lw=1.5, label="P(R > t): response time above t")
    ax.set_xlim(0.0, top)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("level w (workload) or time t (response)")
    ax.set_ylabel("fraction / probability")
    title(ax, "Redundancy (n → ∞): mean-field fixed point, profile and response tail",
          f"λ = {fp.rate_per_server:.4g} per server, load x_0 = {fp.load:.3g}, "
          f"E[W] = {fp.mean_workload:.3g}, E[R] = {fp.mean_response:.3g}")
    ax.legend(fontsize=8, loc="upper right")
    return ax


def _level_span(f: Any, start: float, scale: float) -> float:
    """Where the decreasing ``f`` falls below ``start / 1000`` (at most ``60 scale``)."""
    scale = max(float(scale), 1e-12)
    top = scale
    while top < 60 * scale and float(f(top)) > start * 1e-3:
        top *= 1.25
    return min(top, 60 * scale)
