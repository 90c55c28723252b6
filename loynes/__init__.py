"""Backward Loynes sequences, stability checks, closed forms and symbolic conditions.

Where things are
----------------
================================================  =============================================
name                                              module
================================================  =============================================
``loynes``, ``LoynesResult``                      :mod:`loynes._sequence` (certified stop)
``Basis`` (what a verdict or limit rests on)      :mod:`loynes._basis`
``check_stability``                               :mod:`loynes._stability` (families of
                                                  systems in :mod:`loynes._checks`,
                                                  :mod:`loynes._policy_checks`,
                                                  :mod:`loynes._map_checks`)
``StabilityReport``, ``Condition``                :mod:`loynes._report`
``renovation_probability``                        :mod:`loynes._renovation`
``growth_rate``                                   :mod:`loynes._growth`
``drain_test``, ``DrainResult``                   :mod:`loynes._drain` (the fluid road to
                                                  STABLE for maps no theorem covers)
``erlang_b``, ``erlang_c``, ``mm_c_mean_wait``,   :mod:`loynes._closed_forms`
``pollaczek_khinchine_mean_wait``,
``md_c_waiting``, ``critical_rate_3``,
``critical_rate_11``
``jiq_equilibrium``, ``JIQEquilibrium``,          :mod:`loynes._jiq`
``mg1_workload_sf``, ``mg1_workload_sf_bounds``
``redundancy_fixed_point``,                       :mod:`loynes._redundancy_theory`
``redundancy_critical_rate``, ``d_monotonicity``
``symbolic`` (conditions (3), (11) in sympy)      :mod:`loynes.symbolic`
``sweep``, ``as_table``, ``SweepError``           :mod:`loynes.sweep` (local processes or Dask;
                                                  where tasks run: :mod:`loynes._runners`;
                                                  resumable runs: :mod:`loynes._checkpoint`)
``stability_map``, ``StabilityMap``               :mod:`loynes._stability_maps`
command line (``python -m loynes``)               :mod:`loynes._cli`
================================================  =============================================

No module here shares its name with one of :mod:`recursions` or :mod:`coupling` (the
backward sequence is :mod:`loynes._sequence`, not to be confused with the time-indexed draws
of :mod:`recursions.engines._backward_draws`;
the stability maps are :mod:`loynes._stability_maps`, the
compiled maps :mod:`recursions.model.maps`; the theory of redundancy is
:mod:`loynes._redundancy_theory`, its system :mod:`recursions.model.redundancy`).
"""

from typing import TYPE_CHECKING, Any

from loynes._basis import Basis
from loynes._checkpoint import CheckpointMismatch
from loynes._closed_forms import (
    critical_rate_3,
    critical_rate_11,
    erlang_b,
    erlang_c,
    md_c_waiting,
    mm_c_mean_wait,
    pollaczek_khinchine_mean_wait,
)
from loynes._drain import DrainResult, drain_test
from loynes._growth import growth_rate
from loynes._jiq import JIQEquilibrium, jiq_equilibrium, mg1_workload_sf, mg1_workload_sf_bounds
from loynes._redundancy_theory import (
    CriticalRate,
    RedundancyFixedPoint,
    d_monotonicity,
    redundancy_critical_rate,
    redundancy_fixed_point,
)
from loynes._runners import Execution
from loynes._sequence import LoynesResult, loynes
from loynes._stability import Condition, StabilityReport, check_stability, renovation_probability
from loynes._stability_maps import PoissonAtLoad, StabilityMap, SystemFamily, stability_map
from loynes._sweep import NOT_RUN, SweepError, SweepInterrupted, as_table, sweep

if TYPE_CHECKING:
    from loynes import symbolic


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
    "Execution",
    "JIQEquilibrium",
    "LoynesResult",
    "PoissonAtLoad",
    "RedundancyFixedPoint",
    "StabilityMap",
    "StabilityReport",
    "SweepError",
    "SweepInterrupted",
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
