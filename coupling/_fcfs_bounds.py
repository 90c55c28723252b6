"""The dominating processes of FCFS G/G/S, behind one protocol, and one draw over any of them.

Every exact draw of FCFS (``JSW``; or of a system sampled inside FCFS's sandwich: a monotone
map with ``dominated_by=rc.JSW(S)``, the bounding processes of J_{p+1}SW) finds a past
instant ``-T`` and a vector above the stationary FCFS state then, with the input after it,
from a *dominating process*. Each is a :class:`DominatingProcess`, and :data:`PROCESSES`
lists them in the order the default is looked for:

======================  ==========================================  ============================
name                    process                                     module
======================  ==========================================  ============================
``"vacation"``          multi-server vacation system                :mod:`coupling._vacation`
``"dominated-cyclic"``  round robin, drawn by a certified walk      ``coupling._assignment_walks``
``"dominated-walk"``    random assignment, by the same walk         ``coupling._assignment_walks``
``"dominated"``         random assignment, reversed M/G/1 queues    ``coupling._reversed_mg1``
======================  ==========================================  ============================

A new dominating process is one module defining such an object and one line in
:data:`PROCESSES`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

import recursions as rc
from coupling._assignment_walks import RANDOM_WALK, ROUND_ROBIN
from coupling._reversed_mg1 import REVERSED_MG1
from coupling._tilting import mgf
from coupling._vacation import VACATION
from recursions.common import child

__all__ = ["PROCESSES", "ROUTING", "DominatingProcess", "FcfsBound", "draw_fcfs", "fcfs_method",
           "fcfs_sampler"]

ROUTING = 2**32 - 1
"""Child of a draw's seed feeding the routing uniforms of what runs inside the sandwich."""


class DominatingProcess(Protocol):
    """A process that bounds FCFS G/G/S from above and is drawn backwards exactly."""

    name: str
    """The method name :func:`coupling.perfect_sample` reports (``PerfectSample.method``)."""

    def refuses(self, inp: rc.Renewal) -> str | None:
        """Why it cannot bound FCFS fed by ``inp`` (the error message), or ``None``."""

    def is_default(self, inp: rc.Renewal, servers: int, light: bool) -> bool:
        """Whether it is the default here (``light``: the service law has an mgf near 0).

        Chosen from the parameters alone: choosing after seeing a draw would bias it.
        """

    def template(self, inp: rc.Renewal, servers: int) -> Any:
        """What every draw shares, built once (picklable); ``ValueError`` when it cannot be."""

    def draw(self, template: Any, fcfs: rc.System, inp: rc.Renewal, gen: np.random.Generator,
             t0: float, tcap: float, sampled: Any) -> tuple[np.ndarray, int, float]:
        """One draw: the state at 0, the customers and the time back.

        ``sampled`` (or ``None``) has ``sandwich(upper, T, times, sigma)``, run instead of
        the two FCFS runs from 0 and from the bound's vector at ``-T``.
        """


PROCESSES: tuple[DominatingProcess, ...] = (VACATION, ROUND_ROBIN, RANDOM_WALK, REVERSED_MG1)
"""The dominating processes, in the order the default is looked for."""


@dataclass(frozen=True)
class FcfsBound:
    """A dominating process chosen for one input and number of servers, with its template.

    Attributes
    ----------
    process : DominatingProcess
        The process.
    template : object
        What its draws share (picklable).
    """

    process: DominatingProcess
    template: Any

    @property
    def name(self) -> str:
        """The method name."""
        return self.process.name


def fcfs_method(inp: rc.Renewal, method: str | None, servers: int = 1) -> DominatingProcess:
    """The dominating process: the one asked for, checked, or the default for the input.

    The default for light-tailed service is chosen from the parameters alone (choosing after
    seeing a draw would bias it): the round-robin bound while instants with nobody waiting in
    its ``S`` queues stay common, the vacation bound beyond, where ``S (rho - 1/2) >= 3.5``
    or ``S >= 80`` (the crossover measured by ``benchmarks/perfect_sampling.py``:
    docs/benchmarks.md, section :ref:`Choosing the FCFS dominating process
    <bench-fcfs-default>`). For a heavy-tailed service law with Poisson arrivals it is the
    reversed M/G/1 queues.

    Examples
    --------
    >>> import recursions as rc
    >>> fcfs_method(rc.Poisson(1.0, rc.dists.Exponential(1.0)), None, 2).name
    'dominated-cyclic'
    """
    if method is None:
        why = f"{inp.service!r} has no finite moment generating function near 0"
        try:
            light = math.isfinite(mgf(inp.service, 1e-9 / inp.service.mean))
        except ValueError as exc:  # the law's own words: which law, and what it lacks
            light, why = False, str(exc)
        for process in PROCESSES:
            if process.is_default(inp, servers, light) and process.refuses(inp) is None:
                return process
        raise ValueError(
            f"no exact sampler here for FCFS with this service and non-Poisson arrivals: {why}; "
            "the walk-based bounds are tilted and need a light tail; with Poisson arrivals "
            "method='dominated' takes any service law with a mean")
    names = tuple(p.name for p in PROCESSES)
    if method not in names:
        raise ValueError(f"method for JSW must be one of {names}, got {method!r}")
    (process,) = [p for p in PROCESSES if p.name == method]
    why_not = process.refuses(inp)
    if why_not is not None:
        raise ValueError(why_not)
    return process


def fcfs_sampler(inp: rc.Renewal, method: str | None, servers: int) -> tuple[str, FcfsBound]:
    """The FCFS method for ``servers`` servers fed by ``inp``, and what it draws its past with.

    Returns the method's name (:func:`fcfs_method`) and the :class:`FcfsBound` that
    :func:`draw_fcfs` takes. Raises ``ValueError`` when the process cannot be built (a heavy
    tail for the walk-based ones).

    Examples
    --------
    >>> import recursions as rc
    >>> name, bound = fcfs_sampler(rc.Poisson(1.0, rc.dists.Exponential(1.0)), "dominated", 2)
    >>> name, bound.template is None
    ('dominated', True)
    """
    process = fcfs_method(inp, method, servers)
    return process.name, FcfsBound(process, process.template(inp, servers))


def draw_fcfs(sd: np.random.SeedSequence, fcfs: rc.System, inp: rc.Renewal, t0: float,
              tcap: float, bound: FcfsBound, inside: Any = None) -> tuple[np.ndarray, int, float]:
    """One dominated-CFTP draw of ``fcfs``, or of what ``inside`` runs within its sandwich.

    ``inside(gen)`` (optional) builds the object whose ``sandwich(upper, T, times, sigma)``
    replaces the two FCFS runs: a map dominated by ``fcfs``
    (:class:`coupling._dominated_maps.DominatedMap`), or the bounding processes of
    :mod:`coupling._bounding`; ``gen`` is a stream apart from the bound's (which stays the one
    JSW alone would use, so a map equal to JSW gives JSW's draws), for the map's routing
    uniforms.

    The time back is the start ``T`` of the sandwich that closed; the customers back are
    the arrivals in ``(-T, 0)``.
    """
    gen = np.random.default_rng(sd)
    sampled = None if inside is None else inside(np.random.default_rng(child(sd, ROUTING)))
    return bound.process.draw(bound.template, fcfs, inp, gen, t0, tcap, sampled)
