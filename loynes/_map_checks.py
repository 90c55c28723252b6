"""Checks of maps no theorem covers: the generic family, and the drain road to STABLE.

A map of a user's (:class:`recursions.Map`), or an envelope of a non-monotone map, has no
theorem. :func:`check_generic` checks condition (3) where the capacity is declared, runs the
growth test (UNSTABLE), then :func:`drain_verdict`: STABLE when :func:`loynes.drain_test`
passes at the check's level, else UNDECIDED with what would decide. JIQ with non-Poisson
input ends in :func:`drain_verdict` too (:mod:`loynes._policy_checks`).
"""

from __future__ import annotations

from typing import Any

from loynes._basis import Basis
from loynes._checks import Check, condition_3, fails_3, growth_test, register, undecided
from loynes._drain import drain_refusal, drain_test
from loynes._report import StabilityReport
from loynes._sequence import loynes

__all__ = ["check_generic", "drain_applies", "drain_verdict"]


def drain_applies(chk: Check) -> bool:
    """Whether the drain test applies to this check's system and input."""
    return not drain_refusal(chk.system, chk.input)


@register("generic", tests=lambda chk: 1 + drain_applies(chk))
def check_generic(chk: Check) -> StabilityReport:
    """Any other map: (3) as a necessary condition, the growth test, then the drain test.

    (3) decides only with a capacity the map declares: for a :class:`recursions.Map` built
    without ``capacity=``, ``servers`` is only assumed (one server twice as fast would make
    a stable map look overloaded), so (3) is reported with the capacity assumed and the
    verdict rests on the tests. UNSTABLE comes from the growth test; STABLE from the drain
    test (:func:`loynes.drain_test`: the total workload falls at a linear rate from large
    states on every face, which with i.i.d. input makes the chain positive recurrent by the
    multi-step drift criterion), at the check's level.
    """
    if not chk.system.has_loss:
        if chk.system.capacity_declared:
            bad = fails_3(chk, condition_3(chk))
            if bad is not None:
                return bad
        else:
            from dataclasses import replace

            c3 = condition_3(chk, "not used: the capacity is assumed, not declared")
            chk.conditions[-1] = replace(c3, how=(
                f"{c3.how}; capacity assumed = servers = {chk.system.capacity:g} (not "
                "declared: rc.Map(capacity=...) declares it)"))
            chk.evidence["capacity assumed (not declared)"] = chk.system.capacity
    if chk.system.monotone:
        res = loynes(chk.system, chk.input, chk.horizon, rng=next(chk.seeds))
        chk.evidence["Loynes basis (not used for the verdict)"] = str(res.basis)
        chk.evidence["Loynes total workload"] = res.total_workload.tolist()
    bad = growth_test(chk)
    if bad is not None:
        return bad
    return drain_verdict(chk)


def drain_verdict(chk: Check, what: str = "no theorem applies to this map") -> StabilityReport:
    """STABLE when the drain test passes at the check's level, else UNDECIDED with advice.

    Run after the growth test found nothing; the advice says what would decide: the steps
    at which unclear directions would pass, the direction the map does not drain from, a
    capacity to declare (so that (3) can say UNSTABLE), or blocks to declare (so that the
    test starts from each group of servers' faces).
    """
    why = drain_refusal(chk.system, chk.input)
    extra: dict[str, Any] = {}
    what += ("; no significant growth" if "growth per customer" in chk.evidence
             else "; the growth test did not run at this budget")
    if why:
        chk.evidence["drain test"] = f"not run: {why}"
        extra["drain"] = f"the drain test does not apply: {why}"
        return undecided(chk, f"{what}, and {why}", extra)
    d = drain_test(chk.system, chk.input, steps=max(chk.steps // 4, 16),
                   replications=2 * chk.replications, alpha=chk.level, rng=next(chk.seeds))
    chk.evidence["drain test"] = str(d)
    chk.evidence["drain directions"] = [str(x) for x in d.directions]
    if d.worst is not None and d.worst.se > 0:
        chk.evidence["drain t"] = (d.worst.drain - d.margin) / d.worst.se
    if d.drains:
        return chk.report("stable", Basis(
            "test", "drain", chk.alpha,
            f"the total workload drains from large states on every face ({d}): with i.i.d. "
            "input the multi-step drift criterion makes the chain positive recurrent"))
    if d.drains is False:
        extra["drain"] = (f"from one direction the map drains by less than the margin of "
                          f"{d.margin:.3g} per unit time, or grows ({d.worst}): more steps "
                          "will not make it drain by more; if it is unstable, the growth "
                          "test's steps would show it")
    elif d.steps_needed is not None:
        extra["steps"] = 4 * d.steps_needed
        extra["drain"] = (f"the steps at which the unclear directions would likely drain by "
                          f"the margin, if what was seen is real ({d.worst})")
    else:
        extra["drain"] = f"some direction drains by less than the margin ({d.worst})"
    if not chk.system.capacity_declared and not chk.system.has_loss:
        extra["capacity"] = ("declare the map's capacity, rc.Map(..., capacity=work per unit "
                             "time with every server busy): then (3) decides a load at or "
                             "above 1 as UNSTABLE")
    if (len(chk.system.blocks) == 1 and chk.system.servers > 1
            and not chk.system.joins_by_state):  # a map of one's own may route by size
        extra["blocks"] = ("if the map sends some jobs to a fixed group of servers, declare "
                           "the groups with rc.Map(..., blocks=[...]): the drain test then "
                           "starts from every group's empty and busy faces")
    return undecided(chk, f"{what}, and the drain test: {d}", extra)
