"""The base class of every system: what a system is, and what it declares it can do.

:class:`System` holds a system's parameters and its declarations (the kernel of its map, the
uniforms it reads, monotone, FCFS, loss, blocks, the engines that run it, the statistics they
report) and the checks every system shares (of a state, an input, routing uniforms). What a
system *is* stays here; what runs it is the engines' (:mod:`recursions.engines`: their registry
chooses an engine, :func:`recursions.engines.drivers_of` compiles the drivers of a map), and
which stability argument applies is loynes' (:func:`loynes._families.family_of`). The systems
themselves are in :mod:`recursions.model._workload_systems` (the maps on sorted workload
vectors), :mod:`recursions.model._bounds`, :mod:`recursions.model._queue_policies`,
:mod:`recursions.model.redundancy` and :mod:`recursions.model._user_map` (your own map).
:func:`check_system` and :func:`map_refusal` are the checks other packages ask of a system.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from recursions.common._checks import check_int, check_nonnegative
from recursions.common.codes import HeapPolicy, QueueCode
from recursions.model._inputs import check_input

DRIVERS: list[Any] = []
"""``[drivers_of]``: how :meth:`System.step` finds a system's compiled drivers. The engines own
them and put their function here when imported (``import recursions`` imports them), so that
the model does not import the engines, which import the model."""

__all__ = ["System", "check_system", "map_refusal"]


@dataclass(frozen=True)
class System:
    """Base class: a system of ``servers`` servers, declaring what it can do.

    Most are random maps on sorted workload vectors of length ``servers`` (run by the dense
    and heap engines); the queue-length policies (:mod:`recursions.model._queue_policies`, and
    :class:`JIQ` with a buffer) keep counts of jobs instead and declare the engines
    ``"queues"`` and ``"counts"``.

    Attributes
    ----------
    servers : int
        Number of servers ``S`` (the length of the workload vector).
    kernel : callable
        The map's compiled step ``kernel(w, sigma, tau, u, params) -> found``
        (:mod:`recursions.model.maps`); the engines compile their drivers for it
        (:func:`recursions.engines.drivers_of`).
    uniforms : int
        Uniforms in ``[0, 1)`` the map consumes per arrival (routing randomness).
    has_loss : bool
        Whether customers can be lost.
    split : int
        Length of the leading separately sorted block (0: the whole vector is sorted).
    monotone : bool
        Whether the map is coordinatewise nondecreasing (:ref:`theory-kw-monotone`).
    fcfs : bool
        Whether the map is the Kiefer-Wolfowitz map of FCFS G/G/S (join the least workload),
        for which stationary tail bounds certify backward limits.
    bounded_by_service : bool
        Whether no workload ever exceeds the largest service time (loss systems and their
        envelope): with bounded service times the state is bounded, which exact samplers use.
    joins_by_state : bool
        Whether the server a customer joins depends on the state and its routing uniforms
        only, never on its own service time (every built-in map; a user :class:`Map` may
        route by size, so it declares ``False``).
    user_step : bool
        Whether the map is a step function of the user's (a :class:`Map`), whose contract
        the engines check before they compile drivers for it.
    finds_response : bool
        Whether what the map returns for a customer is its response time already (redundancy:
        its first copy's completion) rather than the workload found at the server it joins,
        to which its service time adds.
    estimates : tuple of str
        The statistics a dense or heap run of the system reports (``p_wait`` and
        ``mean_wait``, or ``p_loss`` and ``overflow_work`` for a loss system; then
        ``mean_response``, the found workload plus the service time of the customers who
        joined, where the servers work at unit speed; then ``mean_workload``,
        ``busy_fraction`` and ``p_all_busy``; redundancy reports ``mean_response`` in place of
        the wait).
    """

    servers: int
    kernel: ClassVar[Any] = None
    uniforms: ClassVar[int] = 0
    has_loss: ClassVar[bool] = False
    monotone: ClassVar[bool] = False
    fcfs: ClassVar[bool] = False
    bounded_by_service: ClassVar[bool] = False
    joins_by_state: ClassVar[bool] = True
    user_step: ClassVar[bool] = False
    finds_response: ClassVar[bool] = False
    params: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", check_int(self.servers, "servers", 1))
        object.__setattr__(self, "params", self._params())

    def _params(self) -> np.ndarray:
        return np.zeros(2)

    @property
    def split(self) -> int:
        """Length of the leading separately sorted block (0 unless :class:`SplitBound`)."""
        return 0

    @property
    def estimates(self) -> tuple[str, ...]:
        """The statistics a dense or heap run of this system reports (see the class)."""
        first = ("p_loss", "overflow_work") if self.has_loss else ("p_wait", "mean_wait")
        # a response is wait plus service at a server of unit speed (a map of your own that
        # declares another capacity has servers of other speeds)
        response = ("mean_response",) if self.capacity == self.servers else ()
        return (*first, *response, "mean_workload", "busy_fraction", "p_all_busy")

    @property
    def own_laws(self) -> tuple[Any, ...]:
        """Laws of work the system draws itself, beyond its input's.

        None but the job-class size laws of :class:`~recursions.model.redundancy.Redundancy`. The
        moment conditions behind the standard errors
        (:func:`recursions.inference._moment_conditions.clt_failures`) read them as well as
        the input's.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.JSW(2).own_laws
        ()
        """
        return ()

    @property
    def is_loss_system(self) -> bool:
        """Whether arrivals can be lost (statistics then include ``p_loss``)."""
        return self.has_loss

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """``(policy, d)`` of the large-n event engine (the heap engine), or ``None``.

        ``d`` is the number of sampled servers (LL(d)) or the largest ``d`` (redundancy), else 0.
        """
        return None

    @property
    def queue_policy(self) -> tuple[QueueCode, int, int] | None:
        """``(code, buffer, d)`` for the queue-length engines, or ``None`` (a workload map).

        ``code`` names the routing rule (:class:`recursions.common.codes.QueueCode`), ``buffer`` the
        jobs a server holds (0: unbounded) and ``d`` the servers sampled (PowerOfD, else 1).
        Systems that route by queue lengths declare it (:mod:`recursions.model._queue_policies`,
        :class:`JIQ`), and the engines of :mod:`recursions.engines.zerowait` run them.
        """
        return None

    @property
    def envelope_params(self) -> tuple[float, float] | None:
        """``params`` of :func:`recursions.maps.envelope` for an idle-first system, else ``None``.

        ``(base, r)``: which system (:class:`recursions.common.codes.EnvelopeBase`) and the rank it
        joins when every server is busy. :class:`Envelope` passes systems without one through
        (a monotone map is its own envelope).
        """
        return None

    @property
    def engines(self) -> tuple[str, ...]:
        """Engines that run this system: ``"dense"`` (the sorted-vector kernel), ``"heap"``.

        An engine of their family may also claim a run by its input (the ``"phases"`` engine:
        arrivals that follow a clock; :func:`recursions.engines._registry.choose`).
        """
        return ("dense", "heap") if self.heap_policy is not None else ("dense",)

    @property
    def blocks(self) -> tuple[tuple[int, int], ...]:
        """The separately sorted blocks ``(lo, hi)`` of the workload vector."""
        return tuple(self._blocks())

    @property
    def capacity(self) -> float:
        """Work the servers do per unit time when all are busy (``servers`` for unit speeds)."""
        return float(self.servers)

    @property
    def capacity_declared(self) -> bool:
        """Whether :attr:`capacity` is known (every built-in system) rather than assumed."""
        return True

    def check_run(self, W: np.ndarray, acc: np.ndarray | None = None, *,
                  where: str = "at the end of a run") -> None:
        """Refuse states a run reached that no valid step gives (a user's map overrides this).

        The built-in kernels are tested against their twins and need no look; a map of your own
        (:class:`recursions.Map`) checks that the states are finite, non-negative and sorted
        in each block, naming the map and where in the run.
        """
        return None

    def load(self, input: Any) -> float | None:
        """Work brought per unit of capacity: ``rho = E[sigma] / (S E[tau])``.

        Condition (3), ``rho < 1``, is necessary for every map in which each customer adds
        its service time to one server (it is not for loss systems, which drop work).
        Systems whose work per customer depends on the state return ``None``.

        Parameters
        ----------
        input : recursions.Input
            The input.

        Returns
        -------
        float or None

        Examples
        --------
        >>> import recursions as rc
        >>> rc.JSW(2).load(rc.Poisson(1.5, rc.dists.Exponential(1.0)))
        0.75
        """
        return float(input.mean_service / (self.capacity * input.mean_interarrival))

    def relaxation(self, input: Any) -> float | None:
        """Arrivals over which the workload forgets its past in heavy traffic, or ``None``.

        For FCFS G/G/S (:attr:`fcfs`, no loss) near saturation the total workload is close
        to a reflected Brownian motion with drift ``-(1 - rho) S`` and variance rate
        ``lambda (ca^2 + cs^2)`` per unit time (service times in units of their mean). Its
        time averages decorrelate over ``sigma^2 / mu^2`` time units (the integrated
        autocorrelation time of the canonical reflected Brownian motion is 1), which in
        arrivals is

        ``T = rho^2 (ca^2 + cs^2) / (1 - rho)^2``

        whatever the number of servers. This is the time scale of Whitt's rules for planning
        queueing simulations (Management Science 35, 1989). The fixed-budget mode of
        :func:`recursions.simulate` warns when a run is too short for it (``320 T``), and
        its precision mode does not stop before ``640 T``
        (:data:`recursions.inference.diagnostics.MIN_RELAXATIONS`). Other systems
        (loss, routing that does not join the least workload, users' maps) return ``None``:
        the approximation is not theirs to claim.

        Parameters
        ----------
        input : recursions.Input
            The input; its :attr:`~recursions.Input.variability` gives ``ca^2 + cs^2``.

        Returns
        -------
        float or None
            ``T`` in arrivals; ``None`` when the system, the input or a load ``rho >= 1``
            leaves it undefined, or when a law has an infinite variance.

        Examples
        --------
        >>> import recursions as rc
        >>> round(rc.JSW(10).relaxation(rc.Poisson(9.0, rc.dists.Exponential(1.0))), 6)
        162.0
        """
        if not self.fcfs or self.has_loss:
            return None
        rho, v = self.load(input), input.variability
        if rho is None or v is None or not 0.0 < rho < 1.0 or not math.isfinite(v):
            return None
        return rho * rho * v / (1.0 - rho) ** 2

    def check_input(self, input: Any) -> None:
        """Refuse an input this system cannot run on (called by simulate and BackwardDraws).

        The maps here add each customer's service time ``sigma`` to a server, so they need
        an input that carries service times: any :class:`~recursions.Input` except one that
        carries arrivals only (:attr:`~recursions.Input.arrivals_only`, as built by
        :meth:`recursions.Redundancy.poisson`). Systems that draw their own work override this.

        Parameters
        ----------
        input : recursions.Input
            The input.

        Raises
        ------
        TypeError
            If ``input`` is not a :class:`~recursions.Input`.
        ValueError
            If it carries arrivals only.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.JSW(2).check_input(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
        >>> red = rc.Redundancy(2, [rc.JobClass(2, 1, rc.dists.Exponential(1.0))])
        >>> rc.JSW(2).check_input(red.poisson(1.0))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: JSW(servers=2) adds each customer's service time to a server, but ...
        """
        check_input(input)
        if input.arrivals_only:
            raise ValueError(f"{self!r} adds each customer's service time to a server, but "
                             f"{input!r} carries arrivals only (its service times are "
                             "placeholders): give an input with a service law, e.g. "
                             "rc.Poisson(rate, service)")

    def check_state(self, w: Any, name: str = "w") -> np.ndarray:
        """Validate a workload vector and return it as a float64 array.

        Parameters
        ----------
        w : array_like
            A vector of length ``servers``, finite, non-negative and sorted ascending (for
            :class:`SplitBound`: each of its two blocks sorted).
        name : str
            Parameter name for error messages.

        Returns
        -------
        numpy.ndarray
            A fresh float64 copy.

        Raises
        ------
        ValueError
            When ``w`` has the wrong length, is not finite, negative or unsorted.
        """
        a = np.array(w, dtype=np.float64, copy=True)
        if a.ndim != 1 or a.size != self.servers:
            raise ValueError(
                f"{name} must be a vector of length servers={self.servers}, got shape {a.shape}"
            )
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite")
        if np.any(a < 0):
            raise ValueError(f"{name} must be non-negative, got min {a.min()}")
        for lo, hi in self._blocks():
            if np.any(np.diff(a[lo:hi]) < 0):
                raise ValueError(f"{name} must be sorted ascending{self._block_note()}")
        return a

    def initial_states(self, w0: Any, replications: int, any_order: bool = False) -> np.ndarray:
        """The initial workload vectors of ``replications`` runs, one row each.

        Parameters
        ----------
        w0 : array_like or None
            ``None`` (every server empty), one workload vector for every replication, or one
            row per replication; each checked by :meth:`check_state`.
        replications : int
            Rows to return.
        any_order : bool
            Sort each given vector first (an engine that keeps no order, the heap's).

        Returns
        -------
        numpy.ndarray
            A ``(replications, servers)`` float64 array.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.JSW(2).initial_states([3.0, 1.0], 2, any_order=True).tolist()
        [[1.0, 3.0], [1.0, 3.0]]
        """
        S = self.servers
        if w0 is None:
            return np.zeros((replications, S))

        def check(row: Any, name: str) -> np.ndarray:
            a = np.asarray(row, dtype=np.float64)
            if any_order and a.ndim == 1 and a.size == S:
                a = np.sort(a)
            return self.check_state(a, name)

        if np.ndim(w0) == 2:
            if np.shape(w0)[0] != replications:
                raise ValueError(f"w0 with one row per replication must have {replications} "
                                 f"rows, got {np.shape(w0)[0]}")
            return np.array([check(row, f"w0[{i}]") for i, row in enumerate(w0)])
        return np.repeat(check(w0, "w0")[None, :], replications, axis=0)

    def _blocks(self) -> list[tuple[int, int]]:
        return [(0, self.servers)]

    def _block_note(self) -> str:
        return ""

    def innovations(self, gen: np.random.Generator, n: int) -> np.ndarray:
        """Draw the routing uniforms for ``n`` arrivals, shape ``(n, uniforms)``.

        Parameters
        ----------
        gen : numpy.random.Generator
            Source of randomness.
        n : int
            Number of arrivals.

        Returns
        -------
        numpy.ndarray
        """
        if self.uniforms == 0:
            return np.zeros((n, 0))
        return gen.random((n, self.uniforms))

    def step(self, w: Any, sigma: float, tau: float, u: Any = None) -> np.ndarray:
        """Apply the map once: the workload seen by the next arrival.

        Parameters
        ----------
        w : array_like
            Current sorted workload vector (seen by the arriving customer).
        sigma : float
            Service time of the arriving customer (``>= 0``).
        tau : float
            Time until the next arrival (``>= 0``).
        u : float or array_like, optional
            Routing uniforms in ``[0, 1)``; required by randomised systems.

        Returns
        -------
        numpy.ndarray
            The new sorted workload vector.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.JpSW(2, 1).step([0.0, 1.0], sigma=5.0, tau=0.0).tolist()
        [1.0, 5.0]
        >>> rc.JpSW(2, 1).step([0.001, 1.0], sigma=5.0, tau=0.0).tolist()
        [0.001, 6.0]
        """
        a = self.check_state(w)
        s = check_nonnegative(sigma, "sigma")
        t = check_nonnegative(tau, "tau")
        uu = self._check_u(u)
        out, _ = DRIVERS[0](self).step_once(self.params, a, s, t, uu)
        return out

    def _check_u(self, u: Any) -> np.ndarray:
        if self.uniforms == 0:
            return np.zeros(1)
        if u is None:
            raise ValueError(
                f"{type(self).__name__}.step needs u: {self.uniforms} uniform(s) in [0, 1) "
                "for its routing"
            )
        a = np.atleast_1d(np.asarray(u, dtype=np.float64))
        if a.size != self.uniforms or np.any(~(a >= 0) | (a >= 1)):
            raise ValueError(f"u must hold {self.uniforms} number(s) in [0, 1), got {u!r}")
        return a


def check_system(value: Any, name: str = "system", *, needs_map: str | None = None) -> Any:
    """``value`` if it is a :class:`recursions.System`, else a ``TypeError`` naming it.

    Parameters
    ----------
    value : Any
        What was given.
    name : str, default "system"
        The parameter's name.
    needs_map : str, optional
        What needs a map on workload vectors (``"a Loynes sequence"``): a system that has
        none (a queue-length system, whose engines keep counts of jobs) is then refused with
        a ``ValueError`` saying so.

    Returns
    -------
    recursions.System

    Examples
    --------
    >>> check_system("JSW")
    Traceback (most recent call last):
    ...
    TypeError: system must be a recursions system, got str
    >>> import recursions as rc
    >>> try:
    ...     check_system(rc.JSQ(2), needs_map="a growth test")
    ... except ValueError as e:
    ...     print(str(e)[str(e).index("it has"):])
    it has none for a growth test; simulate it with rc.simulate
    """
    if not isinstance(value, System):
        raise TypeError(f"{name} must be a recursions system, got {type(value).__name__}")
    why = None if needs_map is None else map_refusal(value, needs_map)
    if why is not None:
        raise ValueError(why)
    return value


def map_refusal(system: System, needs: str, advice: str = "simulate it with rc.simulate"
                ) -> str | None:
    """Why ``system`` has no map on workload vectors for ``needs`` (``None``: it has one).

    Parameters
    ----------
    system : recursions.System
        The system.
    needs : str
        What needs the map (``"a Loynes sequence"``).
    advice : str, default "simulate it with rc.simulate"
        What the message ends with.

    Returns
    -------
    str or None

    Examples
    --------
    >>> import recursions as rc
    >>> map_refusal(rc.JSW(2), "a growth test") is None
    True
    """
    if "dense" in system.engines:
        return None
    return (f"{system!r} is not a map on workload vectors (it runs on the "
            f"{' and '.join(system.engines)} engines, which keep counts of jobs): it has none "
            f"for {needs}; {advice}")
