"""The engines that run :func:`recursions.simulate`: one protocol and a registry.

An engine is a small object with a ``name``, the ``family`` of systems it runs, the
``keywords`` of :func:`recursions.simulate` it honours, ``refuses(system, plan)`` (why it cannot
run a :class:`~recursions.engines._run_plan.RunPlan`, or ``None``),
``preferred(system, plan)`` (whether
``engine="auto"`` takes it when it does not refuse), ``run(system, plan)`` and whether a run
``continues``: an engine that can go on from where a run stopped also has a ``start`` method
(same arguments as ``run``) whose handle extends the run
(:class:`recursions.engines._chunk_loop.RunHandle`; the stages of the precision mode,
:mod:`recursions.inference._stages`, go on there, and are retraced where a run records its path).
An engine whose statistics are not the system's declares them with ``estimates(system)``
(the queue-length engines); a statistic asked for that the engine does not report is refused
before any arrival (:func:`not_estimated`).
Every engine runs through the one chunk loop of :mod:`recursions.engines._chunk_loop`.
Engines register
themselves with :func:`register` where they are defined:

==========  ==================================================  =====  =======================
name        what it keeps                                       goes   module (engines.)
                                                                on
==========  ==================================================  =====  =======================
``dense``   the sorted workload vector, ``O(S)`` per arrival    yes    ``_workload_engines``
``heap``    absolute empty times in an indexed min-heap         yes    ``_workload_engines``
``queues``  queue lengths per server, any service law           yes    ``zerowait``
``counts``  aggregated counts of servers per length and phase   yes    ``zerowait``
``phases``  the map customer by customer, sums by clock phase   no     ``_phase_runs``
==========  ==================================================  =====  =======================

A system declares the engines that run it (:attr:`recursions.System.engines`, in order of
preference when none is preferred), and :func:`choose` picks among those, and among the
engines of their family that claim a run by its input (``claims(plan)``: the ``phases``
engine, for arrivals that follow a clock).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from recursions.engines._in_kernel_draws import drawn_laws
from recursions.engines._run_plan import make_plan

if TYPE_CHECKING:
    from recursions.engines._run_plan import RunPlan, Simulable
    from recursions.model._inputs import Input
    from recursions.results._simulation_result import SimulationResult

__all__ = ["ENGINES", "Engine", "choose", "not_estimated", "planned", "refusal", "register",
           "unhonoured"]

MAX_CALL = 1 << 22
"""Most arrivals of one in-kernel call: an interrupt waits at most for one call."""


class Engine(Protocol):
    """An engine of :func:`recursions.simulate` (see the module's table).

    Examples
    --------
    >>> import recursions as rc
    >>> import recursions  # the engines register on import
    >>> ENGINES["heap"].family, "record" in ENGINES["heap"].keywords
    ('workload', False)
    """

    name: str
    family: str
    keywords: frozenset[str]
    continues: bool

    def refuses(self, system: Simulable, plan: RunPlan) -> str | None:
        """Why this engine cannot run ``plan`` on ``system``, or ``None``."""
        ...

    def preferred(self, system: Simulable, plan: RunPlan) -> bool:
        """Whether ``engine="auto"`` takes this engine (when it does not refuse)."""
        ...

    def run(self, system: Simulable, plan: RunPlan) -> SimulationResult:
        """Run ``plan`` on ``system``."""
        ...


ENGINES: dict[str, Engine] = {}
"""The registered engines by name, in the order they registered."""


def register(engine: Engine) -> Engine:
    """Add ``engine`` to :data:`ENGINES` under its name (a later one replaces it).

    Parameters
    ----------
    engine : Engine
        The engine.

    Returns
    -------
    Engine
        ``engine``, so that a module can write ``DENSE = register(DenseEngine())``.

    Examples
    --------
    >>> import recursions  # the built-in engines register on import
    >>> register(ENGINES["dense"]) is ENGINES["dense"]
    True
    """
    ENGINES[engine.name] = engine
    return engine


def unhonoured(engine: Engine, plan: RunPlan) -> list[str]:
    """The options ``plan`` gives that ``engine`` does not honour (its ``keywords``).

    Parameters
    ----------
    engine : Engine
        The engine.
    plan : RunPlan
        The plan.

    Returns
    -------
    list of str

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.engines._run_plan import make_plan
    >>> plan = make_plan(rc.JSQ(3), rc.Poisson(2.0, rc.dists.Exponential(1.0)), 10, record=True)
    >>> unhonoured(ENGINES["queues"], plan)
    ['record']
    """
    return [k for k in plan.given if k not in engine.keywords]


def refusal(engine: Engine, system: Simulable, plan: RunPlan) -> str | None:
    """Why ``engine`` cannot run ``plan``: its own reason, else the options it does not take.

    Parameters
    ----------
    engine : Engine
        The engine.
    system : Simulable
        The system.
    plan : RunPlan
        The plan.

    Returns
    -------
    str or None

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.engines._run_plan import make_plan
    >>> plan = make_plan(rc.JSW(3), rc.Poisson(2.0, rc.dists.Exponential(1.0)), 10, time=None)
    >>> refusal(ENGINES["dense"], rc.JSW(3), plan) is None
    True
    """
    why = engine.refuses(system, plan)
    bad = unhonoured(engine, plan)
    if why is None and bad:
        why = f"the {engine.name} engine does not take {', '.join(f'{k}=' for k in bad)}"
    return why if why is not None else not_estimated(engine, system, plan)


def not_estimated(engine: Engine, system: Simulable, plan: RunPlan) -> str | None:
    """Why ``engine`` cannot report a statistic ``plan`` asks for, or ``None``.

    The statistics asked for are those of ``statistics=`` and those ``precision=`` targets;
    what the engine reports is its ``estimates(system)`` where it declares them (the
    queue-length engines report their own), else the system's
    (:attr:`recursions.System.estimates`). Checked before any arrival is simulated.

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.engines._run_plan import make_plan
    >>> plan = make_plan(rc.JSW(3), rc.Poisson(2.0, rc.dists.Exponential(1.0)), 10,
    ...                  statistics=("p_loss",))
    >>> print(not_estimated(ENGINES["dense"], rc.JSW(3), plan))  # doctest: +ELLIPSIS
    statistics: JSW has no estimate of p_loss; it estimates p_wait, mean_wait, ...
    """
    modes = plan.modes
    asked = [*(plan.statistics or ()),
             *(() if modes is None else (*(modes.statistics or ()),
                                         *(k for k in (modes.precision or {}) if k)))]
    declared = getattr(engine, "estimates", None)
    have = declared(system) if declared is not None else system.estimates
    bad = [n for n in dict.fromkeys(asked) if n not in have]
    if not bad:
        return None
    why, capacity = "", getattr(system, "capacity", system.servers)
    if "mean_response" in bad and capacity != system.servers:
        why = (f" (its servers do not work at unit speed, capacity {capacity:g} for "
               f"{system.servers} servers, so a response is not the wait plus the service)")
    return (f"statistics: {type(system).__name__} has no estimate of {', '.join(bad)}{why}; "
            f"it estimates {', '.join(have)}")


def choose(system: Simulable, plan: RunPlan) -> Engine:
    """The engine that runs ``plan`` on ``system``.

    The one asked for, or for ``"auto"`` the first engine ``system`` declares that is
    preferred and does not refuse, else the first that does not refuse.

    Parameters
    ----------
    system : Simulable
        The system; its ``engines`` name the candidates.
    plan : RunPlan
        The validated request; ``plan.engine`` is ``"auto"`` or a name.

    Returns
    -------
    Engine

    Raises
    ------
    ValueError
        For an unknown engine, one of another family, or a refusal (its reason).

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.engines._run_plan import make_plan
    >>> inp = rc.Poisson(50.0, rc.dists.Exponential(1.0))
    >>> choose(rc.JSW(100), make_plan(rc.JSW(100), inp, 1000)).name
    'heap'
    >>> choose(rc.JSW(2), make_plan(rc.JSW(2), inp, 1000)).name
    'dense'
    """
    declared = [ENGINES[name] for name in system.engines]
    if plan.engine == "auto":
        # an engine of the system's family may claim the run by its input (the phases
        # engine: arrivals that follow a clock); it comes first
        family = declared[0].family
        claimed = [e for e in ENGINES.values() if e.family == family and e not in declared
                   and getattr(e, "claims", lambda p: False)(plan)]
        ready = [e for e in claimed + declared if refusal(e, system, plan) is None]
        for engine in [e for e in ready if e.preferred(system, plan)] + ready:
            return engine
        raise ValueError(refusal(declared[0], system, plan))
    family = declared[0].family
    names = [n for n, e in ENGINES.items() if e.family == family]
    listed = " or ".join(repr(n) for n in names)
    asked: Any = plan.engine
    if not isinstance(asked, str) or asked not in ENGINES:
        raise ValueError(f"engine must be 'auto', {', '.join(repr(n) for n in names[:-1])}"
                         f" or {names[-1]!r}, got {asked!r}")
    engine = ENGINES[asked]
    if engine.family != family:
        raise ValueError(f"{type(system).__name__} is a {family} system: it runs on engine "
                         f"{listed}, not {asked!r}")
    why = refusal(engine, system, plan)
    if why is not None:
        raise ValueError(why)
    return engine


def planned(system: Simulable, input: Input, steps: int | None, **options: Any
            ) -> tuple[RunPlan, Engine]:
    """:func:`recursions.simulate`'s plan of a plain run and the engine that runs it.

    ``simulate(system, input, steps, **options)`` is ``engine.run(system, plan)`` (what
    ``simulate`` does itself: :func:`~recursions.engines._run_plan.make_plan`, then :func:`choose`);
    a plan
    with modes goes to :func:`recursions.inference._run_modes.run_modes` instead, whose stages
    (:mod:`recursions.inference._stages`) vary the plan's length and start an engine's run
    themselves where it can go on (:meth:`recursions.engines._chunk_loop.RunHandle.extend`).

    Parameters
    ----------
    system, input, steps
        As for :func:`recursions.simulate`.
    **options
        :func:`recursions.simulate`'s plain keywords (``time``, ``warmup``,
        ``replications``, ``rng``, ``batches``, ...; not those of its modes).

    Returns
    -------
    tuple of (RunPlan, Engine)

    Examples
    --------
    >>> import recursions as rc
    >>> plan, engine = planned(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 1000)
    >>> plan.steps, engine.name
    (1000, 'dense')
    """
    plan = make_plan(system, input, steps, laws=drawn_laws, max_call=MAX_CALL, **options)
    if plan.modes is not None:
        raise ValueError("planned plans a plain run: a plan with precision=, warmup='auto' or "
                         "start= runs through recursions.simulate")
    return plan, choose(system, plan)
