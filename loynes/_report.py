"""Result types of :func:`~loynes.check_stability`: ``Condition`` and ``StabilityReport``."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from loynes._basis import Basis
from recursions.common import Record

__all__ = ["VERDICTS", "Condition", "StabilityReport"]

VERDICTS = ("stable", "unstable", "undecided")


@dataclass(frozen=True)
class Condition(Record):
    """One stability condition, evaluated.

    Attributes
    ----------
    name : str
        Its label, e.g. ``"(3)"``.
    statement : str
        What it says, in words.
    role : str
        ``"necessary"``, ``"sufficient"``, ``"necessary and sufficient"``, ``"uniqueness"`` or
        a conjecture's status.
    value : float
        The computed left side, scaled so that the condition reads ``value < 1`` (or, for (9),
        ``value > 0``).
    se : float
        Standard error of ``value`` (0 when exact).
    holds : bool or None
        ``None`` when a test at the check's level could not tell.
    how : str
        How ``value`` was obtained.
    """

    name: str
    statement: str
    role: str
    value: float
    se: float
    holds: bool | None
    how: str


@dataclass(frozen=True)
class StabilityReport(Record):
    """Verdict, what decided it, conditions and evidence returned by :func:`check_stability`.

    Attributes
    ----------
    system, input : str
        What was judged.
    verdict : str
        ``"stable"``, ``"unstable"`` or ``"undecided"``.
    reason : str
        One sentence: which condition or evidence decided.
    conditions : list of Condition
        Every condition that applies.
    evidence : dict
        Numbers behind the verdict (loss statistics, growth rates, Loynes sequences).
    decided_by : Basis
        Machine-readable: the theorem, certificate or test that decided (``kind``, ``name``)
        and ``error``, a bound on the probability that the verdict is wrong (0 for a theorem
        with exact conditions; the check's level ``alpha`` when a test took part).
    alpha : float
        The check's level: the probability that any of its statistical tests errs is at
        most ``alpha`` (Bonferroni over the tests it may run).
    suggested : dict
        For an undecided verdict, the budget that would likely decide it (keys ``steps``,
        ``horizon``) and why; empty otherwise.
    """

    system: str
    input: str
    verdict: str
    reason: str
    conditions: list[Condition]
    evidence: dict[str, Any] = field(default_factory=dict)
    decided_by: Basis = field(default_factory=lambda: Basis("none", "none", math.nan))
    alpha: float = 1e-3
    suggested: dict[str, Any] = field(default_factory=dict)

    def condition(self, name: str) -> Condition:
        """The condition labelled ``name`` (e.g. ``"(11)"``)."""
        for c in self.conditions:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (JSON-serialisable)."""
        return plain_data(asdict(self))

    def plot(self, ax: Any = None, *, level: float = 0.95) -> Any:
        """Draw each condition's value as a bar against its threshold.

        One horizontal bar per condition (green: holds, red: fails, grey: not decided), with
        an error bar ``value ± z se`` where the value was estimated, and a black tick at its
        threshold: 1 (conditions read ``value < 1``), or 0 for the renovation condition (9)
        (``value > 0``). The title gives the verdict and what decided it.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        level : float, default 0.95
            Confidence level of the error bars.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ImportError
            When matplotlib is not installed (``pip install 'queue-recursions[plot]'``).

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import recursions as rc, loynes as ly
        >>> rep = ly.check_stability(rc.JpSW(2, 1), rc.Poisson(1.5, rc.dists.Exponential(1.0)))
        >>> ax = rep.plot()
        >>> [t.get_text().split()[0] for t in ax.get_yticklabels()]
        ['(3)', '(9)', '(11)', '(8)']
        """
        return _draw(self, ax, level=level)

    def _repr_html_(self) -> str:
        from recursions.common import html_table

        rows: list[tuple[str, Any]] = [
            ("system", self.system), ("input", self.input),
            ("verdict", f"{self.verdict.upper()}: {self.reason}"),
            ("decided by", str(self.decided_by))]
        for c in self.conditions:
            mark = {True: "holds", False: "fails", None: "not decided"}[c.holds]
            se = f" ± {c.se:.3g}" if c.se > 0 else ""
            rows.append((f"{c.name} {c.role}", f"{c.value:.4g}{se}: {mark}"))
        if self.suggested:
            rows.append(("to decide", ", ".join(f"{k} = {_short(v)}"
                                                for k, v in self.suggested.items())))
        return html_table("StabilityReport", rows)

    def __str__(self) -> str:
        lines = [
            f"system : {self.system}",
            f"input  : {self.input}",
            f"verdict: {self.verdict.upper()} -- {self.reason}",
            f"decided by: {self.decided_by}",
            "conditions:",
        ]
        for c in self.conditions:
            mark = {True: "holds", False: "FAILS", None: "unclear"}[c.holds]
            se = f" ± {c.se:.3g}" if c.se > 0 else ""
            lines.append(f"  {c.name:<6} [{c.role}] {c.statement}")
            lines.append(f"         value {c.value:.6g}{se}: {mark}  ({c.how})")
        if self.evidence:
            lines.append("evidence:")
            for k, v in self.evidence.items():
                lines.append(f"  {k}: {_short(v)}")
        if self.suggested:
            lines.append("to decide: " + ", ".join(f"{k} = {_short(v)}"
                                                  for k, v in self.suggested.items()))
        return "\n".join(lines)


def plain_data(x: Any) -> Any:
    """``x`` with NumPy arrays and scalars made Python numbers, tuples lists, NaN None (JSON)."""
    if isinstance(x, dict):
        return {k: plain_data(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain_data(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain_data(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, (np.integer, np.bool_)):
        return x.item()
    return x


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and len(v) > 8:
        return "[" + ", ".join(_short(x) for x in v[:4]) + ", ..., " + _short(v[-1]) + "]"
    if isinstance(v, list):
        return "[" + ", ".join(_short(x) for x in v) + "]"
    return str(v)


HOLDS_COLOURS = {True: "tab:green", False: "tab:red", None: "tab:gray"}
"""Bar colour of a condition that holds, fails, or is not decided."""


def _draw(rep: StabilityReport, ax: Any = None, *, level: float = 0.95) -> Any:
    """Draw :meth:`StabilityReport.plot <loynes.StabilityReport.plot>`."""
    from recursions.common import axes, band, title

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
