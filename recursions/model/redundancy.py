"""Cancel-on-completion redundancy (:ref:`Theory › Redundancy <theory-redundancy>`).

A job of class ``j`` (chosen with probability ``pi_j`` proportional to its weight) places ``d_j``
components on ``d_j`` servers drawn uniformly without replacement; each server is FCFS; the job
is done when ``k_j`` components finish and the others are cancelled, waiting or in service. With
selected workloads ``w_i`` and component sizes ``xi_i``, ``T`` = the ``k``-th smallest of
``w_i + xi_i`` is the job's response time and the selected servers move to
``w'_i = min(w_i + xi_i, max(w_i, T))``.

The input carries arrivals only: component sizes come from the job classes, drawn with the
routing uniforms by :meth:`Redundancy.innovations`, so an input's service times would be
ignored. :meth:`Redundancy.poisson` (Poisson arrivals) and :meth:`Redundancy.renewal` (renewal
arrivals) build inputs marked :attr:`~recursions.Input.arrivals_only` (their placeholder
service time is the mean component size, which only sets the default profile grid of
:func:`recursions.simulate`); :meth:`Redundancy.check_input` refuses any other input, in
``simulate``, :class:`~recursions.BackwardDraws` and the coupling functions. ``simulate``
reports ``mean_response`` (the mean of ``T``) and ``busy_fraction`` (the load ``P(W > 0)``);
``p_wait`` and ``mean_wait`` are ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from recursions.common._checks import check_int, check_nonnegative, check_positive, check_real
from recursions.common._jit import jit
from recursions.common._rng import RngLike, as_seed_sequence
from recursions.common.codes import HeapPolicy
from recursions.dists import as_law
from recursions.model import maps as maps
from recursions.model._inputs import check_input
from recursions.model._system import System
from recursions.vectors import kth_smallest

if TYPE_CHECKING:
    from recursions.model._renewal_inputs import PoissonArrivals, RenewalArrivals

__all__ = ["JobClass", "Redundancy", "as_classes", "class_probs", "free_system_sample",
           "free_system_work"]

_MEAN_SAMPLES = 20_000
"""Jobs drawn to estimate the mean size of a class given by a joint sampler only."""


@dataclass(frozen=True)
class JobClass:
    """A class of redundant jobs: ``d`` components, done after ``k`` of them finish.

    Parameters
    ----------
    d : int
        Number of components (servers the job is sent to), ``d >= 1``.
    k : int
        Components needed, ``1 <= k <= d``; the other ``d - k`` are cancelled.
    size : Law or frozen scipy.stats distribution, optional
        Law of one component's size (finite mean); the ``d`` sizes are i.i.d. from it, or all
        equal with ``identical=True``. May be omitted when ``joint`` is given.
    weight : float, default 1.0
        Relative frequency of the class (``>= 0``; normalised over the classes).
    joint : callable, optional
        ``joint(gen, n) -> (n, d)`` array of non-negative component sizes (one job a row),
        replacing ``size`` for sampling; checked on every block.
    identical : bool, default False
        Identical copies: one size drawn from ``size`` for all ``d`` components.
    mean_size : float, optional (keyword)
        The mean component size. Leave it out with ``size`` (it is the law's mean); with
        ``joint`` give it when known, else it is estimated from ``20_000`` jobs drawn by
        ``joint`` (Monte Carlo, seeded by ``rng``; its standard error is ``mean_size_se``).
    rng : int, Generator, SeedSequence or None, default 1 (keyword)
        Seed of that estimate (``joint`` without ``mean_size`` only).

    Attributes
    ----------
    mean_size_se : float
        Standard error of ``mean_size``: 0 when exact (a law, or given), else the error of the
        estimate over jobs (the ``d`` components of a job may be dependent).

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.model.redundancy import JobClass
    >>> c = JobClass(3, 2, rc.dists.Exponential(1.0))
    >>> c.d, c.k, c.mean_size
    (3, 2, 1.0)
    >>> JobClass(2, 3, rc.dists.Exponential(1.0))
    Traceback (most recent call last):
    ...
    ValueError: k must be an integer in [1, 2], got 3
    """

    d: int
    k: int
    size: Any = None
    weight: float = 1.0
    joint: Callable[[np.random.Generator, int], Any] | None = None
    identical: bool = False
    mean_size: float | None = field(default=None, kw_only=True, repr=False, compare=False)
    rng: RngLike = field(default=1, kw_only=True, repr=False, compare=False)
    mean_size_se: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        d = check_int(self.d, "d", 1)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "k", check_int(self.k, "k", 1, d))
        object.__setattr__(self, "weight", check_nonnegative(self.weight, "weight"))
        if self.joint is None and self.size is None:
            raise ValueError("size must be given (a law) unless joint is given")
        if self.size is not None:
            object.__setattr__(self, "size", as_law(self.size, name="size"))
        if self.joint is not None:
            if not callable(self.joint):
                raise TypeError(f"joint must be callable joint(gen, n) -> (n, d), got "
                                f"{type(self.joint).__name__}")
            if self.identical:
                raise ValueError("identical=True and joint are exclusive")
        if self.mean_size is not None and self.joint is None:
            raise ValueError("mean_size is given with joint only (with size it is the law's "
                             "mean)")
        if self.mean_size is not None:
            mean, se = check_positive(self.mean_size, "mean_size"), 0.0
        elif self.joint is not None:  # Monte Carlo over jobs, seeded by rng
            per_job = self.sample(np.random.default_rng(as_seed_sequence(self.rng)),
                                  _MEAN_SAMPLES).mean(axis=1)
            mean = float(per_job.mean())
            se = float(per_job.std(ddof=1) / np.sqrt(per_job.size))
        else:
            mean, se = float(self.size.mean), 0.0
        object.__setattr__(self, "mean_size", mean)
        object.__setattr__(self, "mean_size_se", se)

    @property
    def iid(self) -> bool:
        """Whether the component sizes are i.i.d. from :attr:`size`."""
        return self.joint is None and not self.identical

    @property
    def exponential(self) -> bool:
        """Whether the sizes are i.i.d. exponential (the work-conserving case)."""
        return self.iid and self.size.exponential_rate is not None

    def sample(self, gen: np.random.Generator, n: int) -> np.ndarray:
        """Component sizes of ``n`` jobs, shape ``(n, d)``.

        Parameters
        ----------
        gen : numpy.random.Generator
            Source of randomness.
        n : int
            Number of jobs.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValueError
            When ``joint`` returns the wrong shape or negative or non-finite sizes.

        Examples
        --------
        >>> import numpy as np, recursions as rc
        >>> from recursions.model.redundancy import JobClass
        >>> c = JobClass(2, 1, rc.dists.Deterministic(1.5), identical=True)
        >>> c.sample(np.random.default_rng(0), 2).tolist()
        [[1.5, 1.5], [1.5, 1.5]]
        """
        if self.joint is not None:
            a = np.asarray(self.joint(gen, n), dtype=np.float64)
            if a.shape != (n, self.d):
                raise ValueError(f"joint(gen, n) must return an array of shape (n, d) = "
                                 f"({n}, {self.d}), got {a.shape}")
            if not np.all(np.isfinite(a)) or np.any(a < 0):
                raise ValueError("joint(gen, n) must return finite non-negative sizes")
            return a
        if self.identical:
            x = np.asarray(self.size.sample(gen, n), dtype=np.float64)
            return np.repeat(x[:, None], self.d, axis=1)
        return np.asarray(self.size.sample(gen, n * self.d), dtype=np.float64).reshape(n, self.d)


def as_classes(classes: Any) -> tuple[JobClass, ...]:
    """``classes`` (one :class:`JobClass` or a sequence of them) as a checked tuple.

    Raises ``TypeError`` for anything but job classes and ``ValueError`` for none, or for
    weights that are all zero (the check :class:`Redundancy` makes; ``loynes`` uses it too).
    """
    if isinstance(classes, JobClass):
        classes = [classes]
    try:
        out = tuple(classes)
    except TypeError:
        raise TypeError("classes must be a JobClass or a sequence of them") from None
    if not out:
        raise ValueError("classes must not be empty")
    for i, c in enumerate(out):
        if not isinstance(c, JobClass):
            raise TypeError(f"classes[{i}] must be a JobClass, got {type(c).__name__}")
    if sum(c.weight for c in out) <= 0:
        raise ValueError("classes: the weights must not all be zero")
    return out


def class_probs(classes: Sequence[JobClass]) -> np.ndarray:
    """Class probabilities ``pi_j`` (weights normalised)."""
    w = np.array([c.weight for c in classes])
    return w / w.sum()


@dataclass(frozen=True)
class Redundancy(System):
    """Cancel-on-completion redundancy on ``servers`` servers (:ref:`theory-redundancy-map`).

    A job picks class ``j`` with probability proportional to ``weight`` and ``d_j`` distinct
    *ranks* of the sorted vector (Floyd's algorithm, ``d_j`` uniforms: the same law as ``d_j``
    servers drawn uniformly without replacement, and monotone); ``T`` is the ``k_j``-th
    smallest of ``w_i + xi_i`` and ``w'_i = min(w_i + xi_i, max(w_i, T))``; with a finite
    ``frame`` workloads above it are truncated to it; then the vector drains by ``tau``.
    Monotone in ``w`` and in the sizes; ``(d, d)`` dominates ``(d, k)``. Not work-conserving.

    The innovation row (``uniforms`` wide, ``1 + 2 dmax``) is ``[class uniform, dmax routing
    uniforms, dmax component sizes]``, so the input carries arrivals only: build it with
    :meth:`poisson` or :meth:`renewal` (other inputs are refused by :meth:`check_input`). The
    value the kernel returns (``found``) is the response time ``T``.

    Parameters
    ----------
    servers : int
        Number of servers ``n >= max d_j``.
    classes : JobClass or sequence of JobClass
        The job classes (weights not all zero).
    frame : float, default inf
        Workload cap ``c > 0`` (``inf``: the basic model).

    Examples
    --------
    The paper's worked example, ``(d, k) = (3, 2)``, sizes ``(7, 4, 3)`` at workloads
    ``(5, 3, 6)``: ``T = 9`` and the new workloads are ``(9, 7, 9)``.

    >>> import recursions as rc
    >>> from recursions import redundancy as R
    >>> sys3 = R.Redundancy(3, [R.JobClass(3, 2, rc.dists.Exponential(1.0))])
    >>> # sorted workloads (3, 5, 6): Floyd picks ranks (0, 1, 2), which get sizes (4, 7, 3)
    >>> u = [0.0, 0.0, 0.99, 0.99, 4.0, 7.0, 3.0]
    >>> sys3.step([3.0, 5.0, 6.0], sigma=0.0, tau=0.0, u=u).tolist()
    [7.0, 9.0, 9.0]
    """

    classes: tuple[JobClass, ...] = ()
    frame: float = np.inf
    kernel: ClassVar[Any] = staticmethod(maps.redundancy)
    monotone: ClassVar[bool] = True
    finds_response: ClassVar[bool] = True

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """The heap engine's redundancy rule (``O(d log n)`` per arrival)."""
        return (HeapPolicy.REDUNDANCY, self.dmax)

    @property
    def estimates(self) -> tuple[str, ...]:
        """A job's response time (its first copy's completion) in place of the wait."""
        return ("mean_response", "mean_workload", "busy_fraction", "p_all_busy")

    def load(self, input: Any) -> float | None:
        """``None``: the work a job brings depends on the state (cancellation).

        Condition (3) on service times does not apply to cancel-on-completion redundancy.
        """
        return None

    def __post_init__(self) -> None:
        s = check_int(self.servers, "servers", 1)
        cls = as_classes(self.classes)
        for i, c in enumerate(cls):
            if c.d > s:
                raise ValueError(f"classes[{i}]: d = {c.d} exceeds servers = {s}")
        object.__setattr__(self, "classes", cls)
        fr = check_real(self.frame, "frame (inf: no frame)", 0.0, open_lo=True, finite=False)
        object.__setattr__(self, "frame", fr)
        super().__post_init__()

    @property
    def own_laws(self) -> tuple[Any, ...]:
        """The classes' component size laws, which the standard errors' moment conditions read.

        Those of ``joint`` classes are left out: their moments are the user's to know. The
        conditions of :func:`recursions.inference._moment_conditions.clt_failures` are then
        applied to
        one component's size, which is conservative: the time a job holds a server is at most
        its component's size, and with ``k < d`` the ``k``-th of ``d`` i.i.d. sizes has a
        lighter tail than one size.

        Examples
        --------
        >>> import recursions as rc
        >>> from recursions.model.redundancy import JobClass, Redundancy
        >>> Redundancy(4, [JobClass(2, 1, rc.dists.Lomax(3.5, mean=1.0))]).own_laws
        (Lomax(shape=3.5, scale=2.5; mean=1, scv=2.33333),)
        """
        return tuple(c.size for c in self.classes if c.joint is None)

    @property
    def dmax(self) -> int:
        """Largest number of components ``max_j d_j``."""
        return max(c.d for c in self.classes)

    @property
    def uniforms(self) -> int:  # type: ignore[override]
        """Width ``1 + 2 dmax`` of the innovation row."""
        return 1 + 2 * self.dmax

    @property
    def probs(self) -> np.ndarray:
        """Class probabilities ``pi_j``."""
        return class_probs(self.classes)

    def _params(self) -> np.ndarray:
        pi = self.probs
        cum = np.cumsum(pi)
        cum[-1] = 1.0
        rows = [[float(c.d), float(c.k), float(cum[j])] for j, c in enumerate(self.classes)]
        return np.array([self.frame, float(len(self.classes)), float(self.dmax)]
                        + [x for r in rows for x in r])

    def class_of(self, u0: np.ndarray) -> np.ndarray:
        """Class indices for class uniforms ``u0`` (the kernel's rule)."""
        cum = self.params[5::3][:-1]
        return np.searchsorted(cum, np.asarray(u0), side="right")

    def innovations(self, gen: np.random.Generator, n: int) -> np.ndarray:
        """Innovation rows ``[class uniform, dmax uniforms, dmax sizes]``, shape ``(n, 1+2dmax)``.

        Sizes are drawn per class, in one block per class.

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
        m = self.dmax
        U = np.zeros((n, 1 + 2 * m))
        U[:, :1 + m] = gen.random((n, 1 + m))
        cls = self.class_of(U[:, 0])
        for j, c in enumerate(self.classes):
            idx = np.flatnonzero(cls == j)
            if idx.size:
                U[idx, 1 + m:1 + m + c.d] = c.sample(gen, idx.size)
        return U

    def random_innovations(self, gen: np.random.Generator, n: int) -> np.ndarray:
        """Innovations for property searches: :meth:`innovations` with boundary values mixed in.

        Routing uniforms are set to 0 or just below 1 now and then, and sizes to 0, to a
        common value (ties) or scaled by up to 20.

        Parameters
        ----------
        gen : numpy.random.Generator
            Source of randomness.
        n : int
            Number of cases.

        Returns
        -------
        numpy.ndarray
        """
        U = self.innovations(gen, n)
        m = self.dmax
        c = gen.random((n, 1 + m))
        uni = U[:, :1 + m]
        uni[c < 0.1] = 0.0
        uni[(c >= 0.1) & (c < 0.2)] = np.nextafter(1.0, 0.0)
        sz = U[:, 1 + m:]
        c = gen.random((n, m))
        sz[c < 0.1] = 0.0
        tie = gen.random(n) < 0.1
        sz[tie] = sz[tie, :1]
        sz *= np.where(gen.random(n) < 0.3, gen.uniform(0.0, 20.0, n), 1.0)[:, None]
        return U

    def _check_u(self, u: Any) -> np.ndarray:
        m = self.dmax
        if u is None:
            raise ValueError(f"Redundancy.step needs u: [class uniform, {m} routing uniforms, "
                             f"{m} component sizes]")
        a = np.atleast_1d(np.asarray(u, dtype=np.float64)).ravel()
        if a.size != 1 + 2 * m:
            raise ValueError(f"u must hold 1 + 2 dmax = {1 + 2 * m} numbers, got {a.size}")
        if np.any(~(a[:1 + m] >= 0) | (a[:1 + m] >= 1)):
            raise ValueError(f"u[:{1 + m}] (class and routing uniforms) must lie in [0, 1)")
        if not np.all(np.isfinite(a[1 + m:])) or np.any(a[1 + m:] < 0):
            raise ValueError(f"u[{1 + m}:] (component sizes) must be finite and >= 0")
        return a

    @property
    def mean_component(self) -> float:
        """Mean component size ``sum_j pi_j E xi_j``."""
        return float(sum(p * c.mean_size for p, c in zip(self.probs, self.classes,
                                                         strict=True)))

    def poisson(self, rate: float) -> PoissonArrivals:
        """Poisson arrivals of total rate ``rate`` (``lambda n``) for this system.

        An input that carries arrivals only
        (:class:`~recursions.model._renewal_inputs.PoissonArrivals`): its placeholder service
        time, the mean component size, is ignored by the map and only sets
        :func:`recursions.simulate`'s default profile grid.

        Parameters
        ----------
        rate : float
            Total arrival rate ``> 0``.

        Returns
        -------
        recursions.model._renewal_inputs.PoissonArrivals

        Examples
        --------
        >>> import recursions as rc
        >>> from recursions import redundancy as R
        >>> sys_ = R.Redundancy(10, [R.JobClass(2, 1, rc.dists.Exponential(1.0))])
        >>> sys_.poisson(5.0)
        PoissonArrivals(rate=5.0)
        """
        from recursions.model._renewal_inputs import PoissonArrivals

        return PoissonArrivals(rate, work_scale=self._work_scale())

    def renewal(self, interarrival: Any) -> RenewalArrivals:
        """Renewal arrivals with i.i.d. interarrival times from ``interarrival``.

        An input that carries arrivals only
        (:class:`~recursions.model._renewal_inputs.RenewalArrivals`), as :meth:`poisson` for
        Poisson arrivals.

        Parameters
        ----------
        interarrival : Law or frozen scipy.stats distribution
            Law of the times between jobs (for all ``n`` servers together).

        Returns
        -------
        recursions.model._renewal_inputs.RenewalArrivals

        Examples
        --------
        >>> import recursions as rc
        >>> sys_ = rc.Redundancy(10, [rc.JobClass(2, 1, rc.dists.Exponential(1.0))])
        >>> sys_.renewal(rc.dists.Deterministic(0.2)).arrival_rate
        5.0
        """
        from recursions.model._renewal_inputs import RenewalArrivals

        return RenewalArrivals(interarrival, work_scale=self._work_scale())

    def _work_scale(self) -> float:
        m = self.mean_component
        return m if np.isfinite(m) and m > 0 else 1.0

    def check_input(self, input: Any) -> None:
        """Refuse an input that carries service times: this system draws its own work.

        Component sizes come from the job classes, so the service times of an input such as
        ``rc.Poisson(rate, service)`` would be silently ignored. Accepted: inputs marked
        :attr:`~recursions.Input.arrivals_only`, from :meth:`poisson` or :meth:`renewal`.

        Parameters
        ----------
        input : recursions.Input
            The input.

        Raises
        ------
        TypeError
            If ``input`` is not a :class:`~recursions.Input`.
        ValueError
            If it does not carry arrivals only.

        Examples
        --------
        >>> import recursions as rc
        >>> s = rc.Redundancy(4, [rc.JobClass(2, 1, rc.dists.Exponential(1.0))])
        >>> s.check_input(s.poisson(2.0))
        >>> s.check_input(rc.Poisson(2.0, rc.dists.Exponential(1.0)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Redundancy draws each job's component sizes from its job classes, ...
        """
        check_input(input)
        if not input.arrivals_only:
            raise ValueError("Redundancy draws each job's component sizes from its job classes, "
                             f"so the service times of {input!r} would be ignored: use "
                             "system.poisson(rate) for Poisson arrivals, or "
                             "system.renewal(interarrival) for renewal arrivals")

    def __repr__(self) -> str:
        fr = "" if self.frame == np.inf else f", frame={self.frame!r}"
        return f"Redundancy({self.servers}, {list(self.classes)!r}{fr})"


@jit
def free_chunk(params, p, U, eta):
    """Free (unregulated) system on labelled positions ``p``: ``eta[i]`` = work of job ``i``.

    Same selection and update as :func:`recursions.model.maps.redundancy` (on labels instead of
    ranks: the same law), without drain or positive part; positions are re-centred at their
    minimum every ``p.size`` jobs.
    """
    n = p.size
    dmax = int(params[2])
    ranks = np.empty(dmax, dtype=np.int64)
    done = np.empty(dmax)
    scratch = np.empty(dmax)
    for i in range(U.shape[0]):
        u = U[i]
        j = maps.redundancy_class(params, u[0])
        d = int(params[3 + 3 * j])
        k = int(params[3 + 3 * j + 1])
        maps.floyd_ranks(u[1:1 + d], d, n, ranks)
        for q in range(d):
            done[q] = p[ranks[q]] + u[1 + dmax + q]
        t = kth_smallest(done, d, k, scratch)
        e = 0.0
        for q in range(d):
            r = ranks[q]
            x = p[r]
            v = x if x > t else t
            if done[q] < v:
                v = done[q]
            e += v - x
            p[r] = v
        eta[i] = e
        if (i + 1) % n == 0:
            lo = p.min()
            for m in range(n):
                p[m] -= lo


def _check_redundancy(system: Any) -> None:
    if not isinstance(system, Redundancy):
        raise TypeError(f"system must be a Redundancy system, got {type(system).__name__}")


def free_system_work(system: Redundancy, jobs: int, warmup: int | None = None,
                     batches: int = 32, *, rng: RngLike = 1, chunk: int = 65536
                     ) -> tuple[float, float]:
    """Stationary mean work per job ``a`` of the free system, with its batch-means error.

    The free system (Stolyar 2021, §16) lets workloads go negative: only the relative positions
    matter, and they form a Markov chain whose law does not depend on the arrival rate. The
    critical rate per server is ``1 / a`` (:ref:`theory-redundancy-stability`).

    Parameters
    ----------
    system : Redundancy
        The system (its ``frame`` is ignored).
    jobs : int
        Measured jobs (``>= batches``).
    warmup : int, optional
        Discarded jobs (default ``50 n``).
    batches : int, default 32
        Batches for the standard error.
    rng : int, Generator, SeedSequence or None, default 1
        Seed (``None``: fresh OS entropy, not reproducible).
    chunk : int, default 65536
        Jobs drawn per block.

    Returns
    -------
    (float, float)
        ``a`` and its standard error.

    Raises
    ------
    TypeError
        If ``system`` is not a :class:`Redundancy`, or a count is not an integer.
    ValueError
        If ``jobs < 1``, ``batches`` is not in ``[1, jobs]``, ``warmup < 0`` or ``chunk < 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions import redundancy as R
    >>> s = R.Redundancy(20, [R.JobClass(2, 1, rc.dists.Exponential(1.0))])
    >>> a, se = R.free_system_work(s, 200_000, rng=1)
    >>> abs(a - 1.0) < 5 * se + 0.01     # exponential: a = k E xi
    True
    """
    _check_redundancy(system)
    jobs = check_int(jobs, "jobs", 1)
    batches = check_int(batches, "batches", 1, jobs)
    x = free_system_sample(system, jobs, warmup, rng=rng, chunk=chunk)
    means = np.array([b.mean() for b in np.array_split(x, batches)])
    se = float(means.std(ddof=1) / np.sqrt(batches)) if batches > 1 else float("nan")
    return float(x.mean()), se


def free_system_sample(system: Redundancy, jobs: int, warmup: int | None = None, *,
                       rng: RngLike = 1, chunk: int = 65536) -> np.ndarray:
    """The work each of ``jobs`` jobs adds to the free system, in arrival order.

    The series behind :func:`free_system_work` (the same draws for the same arguments), for
    an output analysis of one's own: batch sums for
    :func:`recursions.inference._batch_means.interval`, a test of independence, a histogram.

    Parameters
    ----------
    system : Redundancy
        The system (its ``frame`` is ignored).
    jobs : int
        Measured jobs.
    warmup : int, optional
        Discarded jobs (default ``50 n``).
    rng : int, Generator, SeedSequence or None, default 1
        Seed (``None``: fresh OS entropy, not reproducible).
    chunk : int, default 65536
        Jobs drawn per block.

    Returns
    -------
    numpy.ndarray
        Shape ``(jobs,)``: the work added by each measured job (its mean estimates ``a``).

    Raises
    ------
    TypeError
        If ``system`` is not a :class:`Redundancy`, or a count is not an integer.
    ValueError
        If ``jobs < 1``, ``warmup < 0`` or ``chunk < 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions import redundancy as R
    >>> s = R.Redundancy(20, [R.JobClass(2, 1, rc.dists.Exponential(1.0))])
    >>> x = R.free_system_sample(s, 100_000, rng=1)
    >>> float(x.mean()) == R.free_system_work(s, 100_000, rng=1)[0]
    True
    """
    _check_redundancy(system)
    jobs = check_int(jobs, "jobs", 1)
    warmup = 50 * system.servers if warmup is None else check_int(warmup, "warmup", 0)
    chunk = check_int(chunk, "chunk", 1)
    gen = np.random.default_rng(as_seed_sequence(rng))
    p = np.zeros(system.servers)
    total = warmup + jobs
    eta = np.empty(total)
    for start in range(0, total, chunk):
        c = min(chunk, total - start)
        free_chunk(system.params, p, system.innovations(gen, c), eta[start:start + c])
    return eta[warmup:]
