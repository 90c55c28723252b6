"""Your own map, first class: :class:`Map` wraps a step function into a system.

A step function has the signature of every built-in kernel (:mod:`recursions.maps`)::

    @numba.njit(cache=True)
    def step(w, sigma, tau, u, params):  # w: sorted float64 vector, changed in place
        ...                              # u: row of uniforms in [0, 1); params: float64 array
        return found                     # workload found where the customer joined, or rc.LOST

and ``rc.Map(step, servers=4, uniforms=1, params=[2.0], name="...")`` is accepted wherever a
system is. The helpers of :mod:`recursions.vectors` (add at a rank and restore the order,
drain, ranks of uniforms) make a step a few lines.

How it runs: the drivers of :mod:`recursions._engine` (forward runs with every statistic,
Loynes windows, batches of single steps, coupling) reach a map only through its kernel,
``STEP(w, sigma, tau, u, params)``; :mod:`recursions.drivers` compiles them once per kernel,
built-in or yours, and caches them on disk (named by a hash of the drivers' source and of
the whole file defining the step) for later processes. The built-in kernels also declare
their join (and, for those that add at one rank, the rank), which the drivers use to drain
and join in their own loops; a step of yours runs as a whole step, so a separately written
JSW runs at about 0.7x the built-in at ten servers (where the built-in's one-pass join
helps) and 1.0x at one and at a hundred (``benchmarks/kw_throughput.py``).
``rc.Map(rc.maps.jsw, ...)`` is the built-in kernel and runs at its speed. Steps defined in
a closure are compiled without the cache. A plain Python step runs the same drivers as plain
Python: correct, and slow (a :class:`SlowMapWarning` says so, once).

The first time a map's drivers are needed, a contract check runs on a short random sample
(:meth:`Map.check_contract`): a step that leaves ``w`` unsorted, negative or non-finite,
returns NaN, or reads more uniforms than declared is refused with a :class:`MapContractError`
naming the map and the input that broke it.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._cache import cache_failure
from ._rng import RngLike, as_seed_sequence
from ._validate import check_int, check_positive
from .codes import LOST
from .drivers import compiled_drivers, warm
from .systems import System

__all__ = ["Map", "MapContractError", "SlowMapWarning"]

_ANNOUNCED: set[int] = set()  # steps whose compile time (or slowness) was already said


class MapContractError(ValueError):
    """A step function broke the contract of a map (see :class:`Map`)."""


class SlowMapWarning(UserWarning):
    """A :class:`Map` with a plain Python step runs as plain Python (about 100x slower)."""


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
        Work the servers do per unit time when all are busy (default ``servers``): the
        load is ``E[sigma] / (capacity E[tau])``.
    check : bool, default True
        Run the contract check on a short sample the first time the drivers are needed.

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
    step_function: Any = None
    name: str = ""
    _uniforms: int = 0
    _monotone: bool = False
    _loss: bool = False
    _block_sizes: tuple[int, ...] = ()
    _capacity: float = 0.0
    _check: bool = True

    def __init__(self, step: Callable[..., Any], servers: int, *, uniforms: int = 0,
                 params: Sequence[float] = (), name: str | None = None,
                 monotone: bool = False, blocks: Sequence[int] | None = None,
                 loss: bool = False, capacity: float | None = None,
                 check: bool = True) -> None:
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
        label = name if name is not None else getattr(step, "__name__", "map")
        for k, v in (("step_function", step), ("servers", S), ("name", str(label)),
                     ("_uniforms", m), ("_monotone", bool(monotone)), ("_loss", bool(loss)),
                     ("_block_sizes", sizes), ("_capacity", cap), ("_check", bool(check)),
                     ("params", p)):
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_drivers", None)

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
        """Work done per unit time with every server busy."""
        return self._capacity

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
                self._loss, self._block_sizes, self._capacity, self.params.tobytes())

    def __eq__(self, other: object) -> bool:
        # not System's dataclass __eq__, which compares ``servers`` only (every Map with
        # 3 servers would be equal to every other, and collide as dict keys)
        if not isinstance(other, Map):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __getstate__(self) -> dict[str, Any]:
        # the compiled drivers are a module, which cannot be pickled: a copy (e.g. in a
        # worker process of ly.sweep) loads them again, from numba's cache
        state = dict(self.__dict__)
        state["_drivers"] = None
        return state

    # -- the compiled drivers -----------------------------------------------------------
    @property
    def kernel(self) -> Any:
        """The step function."""
        return self.step_function

    @property
    def drivers(self) -> Any:
        """The drivers compiled for this step (checked and compiled on first use)."""
        cached = self.__dict__.get("_drivers")
        if cached is not None:
            return cached
        if self._check:
            self.check_contract(samples=200)
        t0 = time.perf_counter()
        mod, how = compiled_drivers(self.step_function)
        first = id(self.step_function) not in _ANNOUNCED
        if how == "python" and first:
            warnings.warn(f"rc.Map {self.name!r}: the step is a plain Python function, so "
                          "every driver runs as plain Python (about 100x slower); decorate "
                          "it with @numba.njit", SlowMapWarning, stacklevel=3)
        if how != "python" and first:
            warm(mod, self.servers, self.uniforms, self.params)
            note = {"cached": "numba caches them for later processes",
                    "uncached": "not cached: the step is a closure or has no source"}[how]
            print(f"rc.Map {self.name!r}: drivers ready in {time.perf_counter() - t0:.1f} s "
                  f"({note})", file=sys.stderr)
        _ANNOUNCED.add(id(self.step_function))
        object.__setattr__(self, "_drivers", mod)
        return mod

    # -- the contract -------------------------------------------------------------------
    def check_contract(self, samples: int = 2000, *, rng: RngLike = 1) -> int:
        """Run the step on random valid inputs and refuse it if it breaks the contract.

        The inputs mix empty servers, ties, tiny gaps and large workloads, ``sigma`` and
        ``tau`` equal to 0, and uniforms near 0 and 1. After each step, ``w`` must be finite,
        non-negative and sorted (in each block) and the result finite and ``>= 0`` or
        ``rc.LOST``; the step is run twice with different values *beyond* the declared
        uniforms, and a different result means it reads more than it declared.

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
            Naming the map, the input and what went wrong.

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
            outs = [self._run_one(w, sigma, tau, u, pad) for pad in (0.0, 1.0 - 2**-20)]
            (w1, f1), (w2, f2) = outs
            case = (f"w={w.tolist()}, sigma={sigma!r}, tau={tau!r}, u={u.tolist()}, "
                    f"params={self.params.tolist()}")
            if not (np.array_equal(w1, w2) and (f1 == f2 or (math.isnan(f1) and
                                                             math.isnan(f2)))):
                raise MapContractError(
                    f"rc.Map {self.name!r} reads more than uniforms={m} uniform(s): values "
                    f"beyond u[{m - 1 if m else 0}] changed its result, at {case}")
            self._check_result(w1, f1, case, blocks)
        return int(samples)

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
                 pad: float) -> tuple[np.ndarray, float]:
        buf = np.full(self.uniforms + 8, pad)
        buf[: self.uniforms] = u
        view = buf[: self.uniforms]  # reading beyond the declared uniforms reads `pad`
        out = w.copy()
        try:
            found = self.step_function(out, sigma, tau, view, self.params)
        except Exception as exc:
            cache_error = cache_failure(exc)  # an on-disk cache failed: not the map's fault
            if cache_error is not None:
                raise cache_error from cache_error.__cause__
            raise MapContractError(
                f"rc.Map {self.name!r} raised {type(exc).__name__}: {exc} at w={w.tolist()}, "
                f"sigma={sigma!r}, tau={tau!r}, u={u.tolist()} (an IndexError on u means it "
                f"reads more than uniforms={self.uniforms})") from exc
        try:
            return out, float(found)
        except (TypeError, ValueError):
            raise MapContractError(f"rc.Map {self.name!r} returned {found!r}, not a number "
                                   "(the workload found, or rc.LOST)") from None

    def _check_result(self, w: np.ndarray, found: float, case: str,
                      blocks: list[tuple[int, int]]) -> None:
        what = None
        if not np.all(np.isfinite(w)):
            what = "left w non-finite"
        elif np.any(w < 0):
            what = "left w negative"
        elif any(np.any(np.diff(w[lo:hi]) < 0) for lo, hi in blocks):
            what = "left w unsorted" + self._block_note()
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
