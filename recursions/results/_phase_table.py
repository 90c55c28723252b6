"""The statistics of a run by phase of its clock: :func:`phase_table`.

A run of the phases engine (:mod:`recursions.engines._phase_runs`) keeps its batch sums in
bins of the period of its input's clock. Each statistic in each bin is a ratio of those sums,
with the standard error of its batch-means interval
(:func:`~recursions.inference._batch_means.interval`, as the run's own statistics), whose test
of independence decides whether it is trusted; an untrusted one is never tabulated as a bare
number: its column ``{name}_se`` holds ``nan`` and ``{name}_untrusted`` the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from recursions.common._checks import check_int
from recursions.common._tables import Table
from recursions.inference._batch_means import interval
from recursions.inference._estimate import Estimate, ratio_estimate
from recursions.results._statistics import REGISTRY

__all__ = ["phase_table"]


def phase_table(phases: Any, bins: int, no_clt: Mapping[str, str]) -> Table:
    """One row per bin of the period: its phases, arrivals and each statistic with its se.

    Parameters
    ----------
    phases : recursions.engines._phase_runs.PhaseSums
        The run's sums by phase.
    bins : int
        Bins of the period (a divisor of ``PHASE_BINS``, 288: 24 for hours of a day).
    no_clt : mapping of str to str
        The statistics with no standard error at all, and why (heavy tails).

    Returns
    -------
    recursions.common._tables.Table
        Columns ``phase_start``, ``phase_end``, ``arrivals``, then ``name`` and ``name_se``
        for each statistic (``name_untrusted`` beside them where a standard error is not
        trusted); ``to_pandas()`` gives a DataFrame.

    Raises
    ------
    ValueError
        For ``bins`` that does not divide ``PHASE_BINS``.
    """
    fine = phases.sums.shape[2]
    bins = check_int(bins, "bins", 1)
    if fine % bins:
        raise ValueError(f"bins must divide {fine} (the bins the run kept: 12, 24, 48, 96, "
                         f"144, ...), got {bins}")
    cols = phases.columns(bins)
    edges = phases.cycle * np.arange(bins + 1) / bins
    out: dict[str, Any] = {"phase_start": edges[:-1], "phase_end": edges[1:],
                           "arrivals": cols["arrivals"].sum(axis=(0, 1)).astype(np.int64)}
    for name in phases.names:
        num, den = REGISTRY[name].on_workloads(cols)
        values, ses = np.full(bins, math.nan), np.full(bins, math.nan)
        why: list[str | None] = [None] * bins
        for j in range(bins):
            est, reason = _estimate(num[..., j], den[..., j], name)
            values[j] = est.value
            reason = no_clt.get(name) or reason
            if reason is None:
                ses[j] = est.se
            else:
                why[j] = reason
        out[name], out[f"{name}_se"] = values, ses
        if any(w is not None for w in why):
            out[f"{name}_untrusted"] = np.array(why, dtype=object)
    return Table(out)


def _estimate(num: np.ndarray, den: np.ndarray, name: str) -> tuple[Estimate, str | None]:
    """One bin's estimate, with the standard error of its interval, and why it is not trusted.

    The interval's procedure (:func:`~recursions.inference._batch_means.interval`) chooses
    the batch size as for the run's own statistics. Batch means that never vary (nothing seen
    in the bin) keep their standard error of 0.
    """
    keep = den > 0
    r = num[keep] / den[keep]
    if r.size and np.all(r == r[0]):
        return ratio_estimate(num, den), None
    iv = interval(num, den, 0.95, statistic=name)
    if iv.trusted:
        return Estimate(iv.value, iv.se), None
    return Estimate(iv.value, iv.se), iv.reason or "its interval is not trusted"
