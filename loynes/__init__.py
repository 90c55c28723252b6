"""Backward Loynes sequences, stability checks, closed forms and symbolic conditions.

Where things are
----------------
================================================  =============================================
name                                              module
================================================  =============================================
``loynes``, ``LoynesResult``                      :mod:`loynes.sequence` (certified stop)
``Basis`` (what a verdict or limit rests on)      :mod:`loynes.basis`
``check_stability``                               :mod:`loynes.stability` (families of
                                                  systems in :mod:`loynes.checks`,
                                                  :mod:`loynes.policy_checks`,
                                                  :mod:`loynes.map_checks`)
``StabilityReport``, ``Condition``                :mod:`loynes.report`
``renovation_probability``                        :mod:`loynes.renovation`
``growth_rate``                                   :mod:`loynes.growth`
``drain_test``, ``DrainResult``                   :mod:`loynes.drain` (the fluid road to
                                                  STABLE for maps no theorem covers)
``erlang_b``, ``erlang_c``, ``mm_c_mean_wait``,   :mod:`loynes.closed_forms`
``pollaczek_khinchine_mean_wait``,
``md_c_waiting``, ``critical_rate_3``,
``critical_rate_11``
``jiq_equilibrium``, ``JIQEquilibrium``,          :mod:`loynes.jiq`
``mg1_workload_sf``, ``mg1_workload_sf_bounds``
``redundancy_fixed_point``,                       :mod:`loynes.redundancy_theory`
``redundancy_critical_rate``, ``d_monotonicity``
``symbolic`` (conditions (3), (11) in sympy)      :mod:`loynes.symbolic`
``sweep``, ``as_table``, ``SweepError``           :mod:`loynes.sweep` (local processes or Dask;
                                                  where tasks run: :mod:`loynes.runners`;
                                                  resumable runs: :mod:`loynes.checkpoint`)
``stability_map``, ``StabilityMap``               :mod:`loynes.stability_maps`
command line (``python -m loynes``)               :mod:`loynes.cli`
================================================  =============================================

No module here shares its name with one of :mod:`recursions` or :mod:`coupling` (the
backward sequence is :mod:`loynes.sequence`, not to be confused with the time-indexed draws
of :mod:`recursions.backward`; the stability maps are :mod:`loynes.stability_maps`, the
compiled maps :mod:`recursions.maps`; the theory of redundancy is
:mod:`loynes.redundancy_theory`, its system :mod:`recursions.redundancy`).
"""

from typing import TYPE_CHECKING, Any

from .basis import Basis
from .checkpoint import CheckpointMismatch
from .closed_forms import (
    critical_rate_3,
    critical_rate_11,
    erlang_b,
    erlang_c,
    md_c_waiting,
    mm_c_mean_wait,
    pollaczek_khinchine_mean_wait,
)
from .drain import DrainResult, drain_test
from .growth import growth_rate
from .jiq import JIQEquilibrium, jiq_equilibrium, mg1_workload_sf, mg1_workload_sf_bounds
from .redundancy_theory import (
    CriticalRate,
    RedundancyFixedPoint,
    d_monotonicity,
    redundancy_critical_rate,
    redundancy_fixed_point,
)
from .sequence import LoynesResult, loynes
from .stability import Condition, StabilityReport, check_stability, renovation_probability
from .stability_maps import PoissonAtLoad, StabilityMap, SystemFamily, stability_map
from .sweep import NOT_RUN, SweepError, as_table, sweep

if TYPE_CHECKING:
    from . import symbolic


def __getattr__(name: str) -> Any:
    """Import :mod:`loynes.symbolic` (and with it sympy) on first use of ``ly.symbolic``.

    sympy takes about half a second to import, so ``import loynes`` leaves it out until
    the symbolic conditions are asked for; ``from loynes import symbolic`` works too.
    """
    if name == "symbolic":
        import importlib

        return importlib.import_module(".symbolic", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"symbolic"})


__all__ = [
    "NOT_RUN",
    "Basis",
    "CheckpointMismatch",
    "Condition",
    "CriticalRate",
    "DrainResult",
    "JIQEquilibrium",
    "LoynesResult",
    "PoissonAtLoad",
    "RedundancyFixedPoint",
    "StabilityMap",
    "StabilityReport",
    "SweepError",
    "SystemFamily",
    "as_table",
    "check_stability",
    "critical_rate_3",
    "critical_rate_11",
    "d_monotonicity",
    "drain_test",
    "erlang_b",
    "erlang_c",
    "growth_rate",
    "jiq_equilibrium",
    "loynes",
    "md_c_waiting",
    "mg1_workload_sf",
    "mg1_workload_sf_bounds",
    "mm_c_mean_wait",
    "pollaczek_khinchine_mean_wait",
    "redundancy_critical_rate",
    "redundancy_fixed_point",
    "renovation_probability",
    "stability_map",
    "sweep",
    "symbolic",
]
