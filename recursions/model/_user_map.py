"""Your own map, first class: :class:`Map` wraps a step function into a system.

A step function has the signature of every built-in kernel (:mod:`recursions.model.maps`)::

    @numba.njit(cache=True)
    def step(w, sigma, tau, u, params):  # w: sorted float64 vector, changed in place
        ...                              # u: row of uniforms in [0, 1); params: float64 array
        return found                     # workload found where the customer joined, or rc.LOST

and ``rc.Map(step, servers=4, uniforms=1, params=[2.0], name="...")`` is accepted wherever a
system is. The helpers of :mod:`recursions.vectors` (add at a rank and restore the order,
drain, ranks of uniforms) make a step a few lines.

How it runs: the drivers of :mod:`recursions.engines._driver_template` (forward runs with every
statistic, Loynes windows, batches of single steps, coupling) reach a map only through its kernel,
``STEP(w, sigma, tau, u, params)``; :mod:`recursions.engines._driver_compiler` compiles them once
per kernel,
built-in or yours, and caches them on disk (named by a hash of the drivers' source and of
the whole file defining the step) for later processes. The built-in kernels also declare
their join (and, for those that add at one rank, the rank), which the drivers use to drain
and join in their own loops; a step of yours runs as a whole step, so a separately written
JSW is slower than the built-in where the built-in's one-pass join helps (at ten servers),
and as fast elsewhere (measured in ``docs/benchmarks.md``, section :ref:`Your own maps: whole
steps and checked steps <bench-user-maps>`).
``rc.Map(rc.maps.jsw, ...)`` is the built-in kernel and runs at its speed. Steps defined in
a closure are compiled without the cache. A plain Python step runs the same drivers as plain
Python: correct, and slow (a :class:`SlowMapWarning` says so, once).

The first time a map's drivers are needed, a contract check runs on a short random sample
(:meth:`Map.check_contract`), with the step compiled again with numba's bounds checking
(``boundscheck=True``, the helpers it calls by a global name included): a step that indexes
``w`` out of bounds, reads more uniforms than declared or ``params`` past the ones given,
leaves ``w`` unsorted (in a block), negative or non-finite, or returns NaN is refused with a
:class:`MapContractError` naming the map, what broke, and the input that broke it. A short
sample can miss a rare state: ``rc.Map(..., check="always")`` runs the same checks at every
step of every tool (for debugging; see :class:`Map`), and without it the runs of
:func:`recursions.simulate` still look at every batch's statistics and the state at the end
of each chunk (:meth:`Map.check_run`), and refuse a NaN, a negative or an unsorted state, or
a customer lost by a map declared without loss.

This module is the map itself: what it declares, its identity, its contract check and the
look at its runs. The contract's errors, the step compiled with bounds checking and the
checking kernel of ``check="always"`` are in :mod:`recursions.model._map_step_checks`; the
drivers, with the contract check on first use, are the engines'
(:func:`recursions.engines.drivers_of`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from recursions.common._caches import cache_failure
from recursions.common._checks import check_int, check_positive
from recursions.common._rng import RngLike, as_seed_sequence
from recursions.common.codes import LOST
from recursions.model._map_step_checks import MapContractError, bounds_checked, checking_kernel
from recursions.model._system import System

__all__ = ["Map", "SlowMapWarning"]


def _builtin(step: Any) -> bool:
    """Whether ``step`` is a kernel of :mod:`recursions.model.maps` (servers of unit speed)."""
    from recursions.model import maps as maps

    name = getattr(step, "__name__", None)
    return isinstance(name, str) and getattr(maps, name, None) is step


class SlowMapWarning(UserWarning):
    """A :class:`Map` with a plain Python step runs as plain Python (orders of magnitude slower)."""


@dataclass(frozen=True, init=False, eq=False)
class Map(System):
    """A system given by your own step function.

    Parameters
    ----------
    step : callable
        ``step(w, sigma, tau, u, params) -> found``: apply the map in place to the sorted
        float64 vector ``w`` for a customer with service time ``sigma`` followed by ``tau``
        time units, with ``u`` a row of ``uniforms`` uniforms in ``[0, 1)`` and ``params``
        a float64 array; return the workload found at the server joined (``>= 0``), or
        ``rc.LOST`` (``-1.0``) for a lost customer. Decorate it with ``@numba.njit`` (a plain
        Python function works too, slowly).
    servers : int
        Length ``S`` of the workload vector.
    uniforms : int, default 0
        Uniforms the step reads per arrival.
    params : sequence of float, default ()
        Parameters passed to the step as a float64 array.
    name : str, optional
        For messages and reports (default: the step's name).
    monotone : bool, default False
        Declared monotonicity (``cp.check_monotone`` tests it); Loynes' theorem and the
        sandwich of ``cp.perfect_sample`` rely on it.
    blocks : sequence of int, optional
        Sizes of separately sorted consecutive blocks (summing to ``servers``); default one
        block.
    loss : bool, default False
        Whether customers can be lost. ``ly.check_stability`` treats condition (3) (load
        below 1) as necessary for a map without loss, and does not use it when
        ``loss=True``.
    capacity : float, optional
        Work the servers do per unit time when all are busy: the load is
        ``E[sigma] / (capacity E[tau])``. Without it (and for a step other than a built-in
        kernel of :mod:`recursions.model.maps`) ``servers`` (unit speeds) is *assumed*:
        ``rc.simulate``'s load warning uses it, but ``ly.check_stability`` does not decide a
        verdict on condition (3) with an assumed capacity (its report names the capacity
        assumed); declare it for servers of other speeds.
    check : bool or "always", default True
        ``True``: run the contract check on a short sample the first time the drivers are
        needed (:meth:`check_contract`, the step compiled with bounds checking). ``False``:
        trust the step. ``"always"``: that check, and the same checks at every step of every
        tool (``rc.simulate``, ``ly.loynes``, the coupling and perfect-sampling functions,
        :meth:`step`), for debugging: the map's kernel is then a checking kernel that runs
        the step compiled with bounds checking and looks at the state after each step, and
        raises a :class:`~recursions.model._map_step_checks.MapStepError` naming what broke
        (an index out of bounds, a read of ``u`` or ``params`` past its end, an unsorted
        block, a NaN, a negative value, a bad result) with the state and input of that
        step. Its drivers are compiled in each process (not cached) and run a few times
        slower than with ``check=True`` (measured in ``docs/benchmarks.md``, section
        :ref:`Your own maps: whole steps and checked steps <bench-user-maps>`).

    Notes
    -----
    A map runs on the dense engine (the whole vector, ``O(S)`` per step). The built-in
    ``rc.JSW`` switches to a heap engine from ``S >= 32`` (``O(log S)`` per step), so for a
    speed comparison with a built-in at large ``S`` pass ``engine="dense"`` to
    ``rc.simulate``.

    Examples
    --------
    >>> import numba, recursions as rc
    >>> from recursions.vectors import add_at_rank, drain
    >>> @numba.njit
    ... def second_least_if_busy(w, sigma, tau, u, params):
    ...     r = 0 if w[0] <= params[0] else 1   # least workload if below a threshold
    ...     found = add_at_rank(w, 0, w.size, r, sigma)
    ...     drain(w, tau)
    ...     return found
    >>> m = rc.Map(second_least_if_busy, servers=3, params=[2.0], name="threshold")
    >>> m.step([0.0, 1.0, 5.0], sigma=3.0, tau=1.0).tolist()
    [0.0, 2.0, 4.0]
    """

    joins_by_state: ClassVar[bool] = False  # a step of your own may route by service time
    user_step: ClassVar[bool] = True  # its contract is checked before drivers are compiled
    step_function: Any = None
    name: str = ""
    _uniforms: int = 0
    _monotone: bool = False
    _loss: bool = False
    _block_sizes: tuple[int, ...] = ()
    _capacity: float = 0.0
    _capacity_declared: bool = False
    _check: bool = True
    _always: bool = False

    def __init__(self, step: Callable[..., Any], servers: int, *, uniforms: int = 0,
                 params: Sequence[float] = (), name: str | None = None,
                 monotone: bool = False, blocks: Sequence[int] | None = None,
                 loss: bool = False, capacity: float | None = None,
                 check: bool | Literal["always"] = True) -> None:
        if not callable(step):
            raise TypeError(f"step must be a function step(w, sigma, tau, u, params), got "
                            f"{type(step).__name__}")
        S = check_int(servers, "servers", 1)
        m = check_int(uniforms, "uniforms", 0)
        p = np.array(params, dtype=np.float64).ravel()
        if np.any(np.isnan(p)):
            raise ValueError(f"params must be numbers (inf allowed, e.g. no frame), got "
                             f"{p.tolist()}")
        sizes = (S,) if blocks is None else tuple(check_int(b, "blocks", 1) for b in blocks)
        if sum(sizes) != S:
            raise ValueError(f"blocks must sum to servers={S}, got {list(sizes)}")
        cap = float(S) if capacity is None else check_positive(capacity, "capacity")
        if not (isinstance(check, bool) or check == "always"):
            raise ValueError(f"check must be True, False or 'always', got {check!r}")
        always = check == "always"
        label = name if name is not None else getattr(step, "__name__", "map")
        for k, v in (("step_function", step), ("servers", S), ("name", str(label)),
                     ("_uniforms", m), ("_monotone", bool(monotone)), ("_loss", bool(loss)),
                     ("_block_sizes", sizes), ("_capacity", cap),
                     ("_capacity_declared", capacity is not None or _builtin(step)),
                     ("_check", bool(check)), ("_always", always), ("params", p)):
            object.__setattr__(self, k, v)

    # -- declared capabilities --------------------------------------------------------
    @property
    def uniforms(self) -> int:  # type: ignore[override]
        """Uniforms the step reads per arrival."""
        return self._uniforms

    @property
    def monotone(self) -> bool:  # type: ignore[override]
        """The declared monotonicity."""
        return self._monotone

    @property
    def has_loss(self) -> bool:  # type: ignore[override]
        """Whether customers can be lost."""
        return self._loss

    @property
    def capacity(self) -> float:
        """Work done per unit time with every server busy (``servers`` unless declared)."""
        return self._capacity

    @property
    def capacity_declared(self) -> bool:
        """Whether the capacity is known rather than assumed to be ``servers``.

        Known when ``capacity=`` was given, or the step is a built-in kernel of
        :mod:`recursions.model.maps` (servers of unit speed).
        """
        return self._capacity_declared

    @property
    def check(self) -> bool | str:
        """``True``, ``False`` or ``"always"``, as given (see :class:`Map`)."""
        return "always" if self._always else self._check

    def _blocks(self) -> list[tuple[int, int]]:
        edges = [0, *np.cumsum(self._block_sizes).tolist()]
        return [(int(a), int(b)) for a, b in itertools.pairwise(edges)]

    def _block_note(self) -> str:
        return "" if len(self._block_sizes) == 1 else f" within each block {self._blocks()}"

    def __repr__(self) -> str:
        return f"Map({self.name!r}, servers={self.servers})"

    # -- identity and pickling ------------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        return (self.step_function, self.servers, self.name, self._uniforms, self._monotone,
                self._loss, self._block_sizes, self._capacity, self._capacity_declared,
                self._always, self.params.tobytes())

    def __eq__(self, other: object) -> bool:
        # not System's dataclass __eq__, which compares ``servers`` only (every Map with
        # 3 servers would be equal to every other, and collide as dict keys)
        if not isinstance(other, Map):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __getstate__(self) -> dict[str, Any]:
        # compiled functions cannot be pickled: a copy (e.g. in a worker process of
        # ly.sweep) builds them again where needed, and its drivers come from numba's cache
        state = dict(self.__dict__)
        state.pop("_checking", None)
        state.pop("_checked_step", None)
        return state

    # -- the kernel the drivers run -----------------------------------------------------
    @property
    def kernel(self) -> Any:
        """The kernel the drivers run.

        The step function, or with ``check="always"`` the checking kernel around its
        bounds-checked copy.
        """
        if not self._always:
            return self.step_function
        cached = self.__dict__.get("_checking")
        if cached is None:
            edges = np.array([0, *np.cumsum(self._block_sizes).tolist()], dtype=np.int64)
            cached = checking_kernel(self._bounds_checked_step(), edges, self._loss, self)
            object.__setattr__(self, "_checking", cached)
        return cached

    def _bounds_checked_step(self) -> Any:
        cached = self.__dict__.get("_checked_step")
        if cached is None:
            cached = bounds_checked(self.step_function)
            object.__setattr__(self, "_checked_step", cached)
        return cached

    # -- the contract -------------------------------------------------------------------
    def check_contract(self, samples: int = 2000, *, rng: RngLike = 1) -> int:
        """Run the step on random valid inputs and refuse it if it breaks the contract.

        The step runs compiled again with numba's bounds checking (:func:`bounds_checked`),
        with ``u`` and ``params`` exactly as long as declared, so an index past the end of
        ``w``, ``u`` or ``params`` raises instead of reading or writing memory that is not
        theirs; the error is traced to the array (by running the step again with ``u``, then
        ``params``, made longer). The inputs mix empty servers, ties, tiny gaps and large
        workloads, ``sigma`` and ``tau`` equal to 0, and uniforms near 0 and 1. After each
        step, ``w`` must be finite, non-negative and sorted (in each block) and the result
        finite and ``>= 0`` or ``rc.LOST``; the step is run again with different values
        *beyond* the declared uniforms, and beyond the parameters, and a different result
        means it reads more than it declared (a helper the bounds checking does not reach).

        Parameters
        ----------
        samples : int, default 2000
            Random cases.
        rng : int, Generator, SeedSequence or None, default 1
            Seed of the random cases (``None``: fresh OS entropy).

        Returns
        -------
        int
            The number of cases checked.

        Raises
        ------
        MapContractError
            Naming the map, what went wrong (an index out of bounds, too many uniforms,
            ``params`` read past the end, an unsorted block, a NaN, a negative value, a bad
            result) and the input and state that broke it.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.Map(rc.maps.jsw, servers=3).check_contract(samples=100)
        100
        """
        gen = np.random.default_rng(as_seed_sequence(rng))
        S, m = self.servers, self.uniforms
        blocks = self._blocks()
        for _ in range(check_int(samples, "samples", 1)):
            w, sigma, tau, u = self._random_case(gen, S, m, blocks)
            self._check_case(w, sigma, tau, u, blocks)
        return int(samples)

    def _check_case(self, w: np.ndarray, sigma: float, tau: float, u: np.ndarray,
                    blocks: list[tuple[int, int]]) -> None:
        """Refuse the step if it breaks the contract on this one input."""
        m = self.uniforms
        case = (f"w={w.tolist()}, sigma={sigma!r}, tau={tau!r}, u={u.tolist()}, "
                f"params={self.params.tolist()}")
        w1, f1 = self._run_one(w, sigma, tau, u, 0.0, 0.0, case)
        self._check_result(w1, f1, case, blocks)  # first: a NaN is not a read past the end
        for pad, ppad, what in ((1.0 - 2**-20, 0.0, f"more than uniforms={m} uniform(s): "
                                 f"values beyond u[{m - 1 if m else 0}]"),
                                (0.0, 1.5, f"params past the end (it was given "
                                 f"{self.params.size} parameter(s)): values beyond them")):
            w2, f2 = self._run_one(w, sigma, tau, u, pad, ppad, case)
            if not (np.array_equal(w1, w2, equal_nan=True)
                    and (f1 == f2 or (math.isnan(f1) and math.isnan(f2)))):
                raise MapContractError(f"rc.Map {self.name!r} reads {what} changed its "
                                       f"result, at {case}")

    @staticmethod
    def _random_case(gen: np.random.Generator, S: int, m: int,
                     blocks: list[tuple[int, int]]) -> tuple[np.ndarray, float, float,
                                                            np.ndarray]:
        scale = float(gen.choice([1e-9, 1.0, 10.0, 1e3]))
        w = gen.exponential(scale, S)
        w[gen.random(S) < 0.3] = 0.0
        if S > 1 and gen.random() < 0.3:  # ties
            w[gen.integers(0, S)] = w[gen.integers(0, S)]
        for lo, hi in blocks:
            w[lo:hi] = np.sort(w[lo:hi])
        sigma = float(gen.choice([0.0, gen.exponential(1.0), gen.exponential(10.0)]))
        tau = float(gen.choice([0.0, gen.exponential(0.5), gen.exponential(20.0)]))
        u = gen.random(m)
        if m and gen.random() < 0.2:
            u[gen.integers(0, m)] = gen.choice([0.0, 1.0 - 2**-40])
        return w, sigma, tau, u

    def _run_one(self, w: np.ndarray, sigma: float, tau: float, u: np.ndarray,
                 pad: float, ppad: float, case: str) -> tuple[np.ndarray, float]:
        """The bounds-checked step on a copy of ``w``; returns it and the result.

        ``u`` and ``params`` are exactly as long as declared (views of longer buffers filled
        with ``pad`` and ``ppad``).
        """
        step = self._bounds_checked_step()
        buf = np.full(self.uniforms + 8, pad)
        buf[: self.uniforms] = u
        view = buf[: self.uniforms]  # reading beyond the declared uniforms reads `pad`
        pbuf = np.full(self.params.size + 8, ppad)
        pbuf[: self.params.size] = self.params
        pview = pbuf[: self.params.size]
        out = w.copy()
        try:
            found = step(out, sigma, tau, view, pview)
        except IndexError as exc:
            raise MapContractError(
                f"rc.Map {self.name!r} {self._locate(step, w, sigma, tau, u, exc)}, at "
                f"{case}") from exc
        except Exception as exc:
            cache_error = cache_failure(exc)  # an on-disk cache failed: not the map's fault
            if cache_error is not None:
                raise cache_error from cache_error.__cause__
            raise MapContractError(
                f"rc.Map {self.name!r} raised {type(exc).__name__}: {exc} at {case}") from exc
        try:
            return out, float(found)
        except (TypeError, ValueError):
            raise MapContractError(f"rc.Map {self.name!r} returned {found!r}, not a number "
                                   "(the workload found, or rc.LOST)") from None

    def _locate(self, step: Any, w: np.ndarray, sigma: float, tau: float, u: np.ndarray,
                exc: IndexError) -> str:
        """Which array an ``IndexError`` of the step indexed past its end, in words."""
        longer_u = np.concatenate([u, np.full(8, 0.5)])
        longer_p = np.concatenate([self.params, np.full(8, 1.0)])

        def fails(uu: np.ndarray, pp: np.ndarray) -> bool:
            try:
                step(w.copy(), sigma, tau, uu, pp)
            except IndexError:
                return True
            except Exception:  # another error, once past the index: not an index error
                return False
            return False

        m, p = self.uniforms, self.params
        reads_u = f"reads more than uniforms={m} uniform(s): it indexed u past its end"
        reads_p = (f"reads params past the end: it was given {p.size} parameter(s) "
                   f"{p.tolist()} and indexed params beyond them")
        if not fails(longer_u, p):
            return f"{reads_u} (IndexError: {exc})"
        if not fails(u, longer_p):
            return f"{reads_p} (IndexError: {exc})"
        if not fails(longer_u, longer_p):
            return f"{reads_u}, and {reads_p} (IndexError: {exc})"
        return (f"indexed out of bounds (IndexError: {exc}), not u or params: w, of size "
                f"{self.servers} (an index outside 0..{self.servers - 1}; a write there "
                f"corrupts memory in a run without bounds checking), or an array of its own")

    def _check_result(self, w: np.ndarray, found: float, case: str,
                      blocks: list[tuple[int, int]]) -> None:
        what = None
        nan = np.flatnonzero(np.isnan(w))
        neg = np.flatnonzero(w < 0)
        unsorted = [(lo, hi, lo + int(np.flatnonzero(np.diff(w[lo:hi]) < 0)[0]))
                    for lo, hi in blocks if np.any(np.diff(w[lo:hi]) < 0)]
        if nan.size:
            what = f"left w non-finite: NaN at w[{int(nan[0])}]"
        elif not np.all(np.isfinite(w)):
            what = f"left w non-finite: inf at w[{int(np.flatnonzero(np.isinf(w))[0])}]"
        elif neg.size:
            what = f"left w negative: w[{int(neg[0])}] = {float(w[neg[0]])!r} < 0"
        elif unsorted:
            lo, hi, i = unsorted[0]
            block = "" if len(blocks) == 1 else f" in block [{lo}, {hi})"
            what = (f"left w unsorted{self._block_note()}: w[{i}] > w[{i + 1}]{block}")
        elif math.isnan(found):
            what = "returned NaN"
        elif found == LOST and not self._loss:
            what = ("returned rc.LOST (a lost customer) but is declared loss=False: pass "
                    "loss=True (condition (3) is then not a necessary condition)")
        elif not (found >= 0 or found == LOST) or math.isinf(found):
            what = f"returned {found!r}: the workload found must be finite and >= 0, or rc.LOST"
        if what is not None:
            raise MapContractError(f"rc.Map {self.name!r} {what}: at {case} it gave "
                                   f"w={w.tolist()}, found={found!r}")

    # -- the runs -----------------------------------------------------------------------
    def check_run(self, W: np.ndarray, acc: np.ndarray | None = None, *,
                  where: str = "at the end of a run") -> None:
        """Refuse a run whose states or batch statistics show a broken step.

        Called by :func:`recursions.simulate` at the end of each chunk of arrivals (every
        batch's statistics are then complete or in progress): a cheap look, once per chunk,
        that costs the runs of a map nothing per arrival and catches what the contract
        check's short sample missed when it shows there: a NaN or inf in a batch's sums
        (which a NaN in the state gives, even if a later drain clears it), a customer lost by
        a map declared without loss (which a negative entry joined gives), or a final state
        that is not finite, non-negative and sorted in each block. A rare broken state that
        leaves no such trace is seen only by ``check="always"``.

        Parameters
        ----------
        W : numpy.ndarray
            The states, one row per replication.
        acc : numpy.ndarray, optional
            The per-(replication, batch) sums of the drivers (``recursions.engines._accumulator``).
        where : str
            Where in the run, for the message.

        Raises
        ------
        MapContractError
            Naming the map, the replication and batch (or the state), and what broke.
        """
        from recursions.engines import _accumulator as st

        hint = ("; run it with rc.Map(..., check='always') to find the step that broke "
                "(the check of a short sample on first use did not see it)")
        if acc is not None and acc.size:
            bad = ~np.isfinite(acc).all(axis=-1)
            if bad.any():
                r, b = (int(i) for i in np.argwhere(bad)[0])
                cols = [n for n, c in (("workload", st.WORK), ("wait", st.WAIT_SUM),
                                       ("busy", st.BUSY)) if not np.isfinite(acc[r, b, c])]
                raise MapContractError(
                    f"rc.Map {self.name!r}: the statistics of batch {b} of replication {r} "
                    f"are NaN or infinite ({', '.join(cols) or 'a sum'}) {where}: the step "
                    f"left NaN or inf in w, or returned it{hint}")
            lost = acc[..., st.LOST]
            if not self._loss and np.any(lost > 0):
                r, b = (int(i) for i in np.argwhere(lost > 0)[0])
                raise MapContractError(
                    f"rc.Map {self.name!r}: {int(lost[r, b])} customer(s) of batch {b} of "
                    f"replication {r} were counted lost (the step returned a negative "
                    f"workload found: rc.LOST, or a negative entry of w joined) {where}, but "
                    f"the map is declared loss=False{hint}")
        W2 = np.atleast_2d(W)
        for r, w in enumerate(W2):
            what = None
            if not np.all(np.isfinite(w)):
                what = "has NaN or inf"
            elif np.any(w < 0):
                what = f"has a negative entry, w[{int(np.flatnonzero(w < 0)[0])}]"
            else:
                for lo, hi in self._blocks():
                    if np.any(np.diff(w[lo:hi]) < 0):
                        what = "is unsorted" + self._block_note()
                        break
            if what is not None:
                raise MapContractError(f"rc.Map {self.name!r}: the state of replication {r} "
                                       f"{where} {what}: w={w.tolist()}{hint}")
