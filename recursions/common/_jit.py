"""The one place that sets numba's jit options for the whole project.

Every compiled kernel is decorated with :func:`jit`: ``nopython`` mode, ``cache=True`` (so a
second process pays no compilation) and *no* ``fastmath``, which would let the compiler reorder
comparisons and break the exact ordering of sorted workload vectors.

Numba's cache does not notice when a function *called* by a cached kernel changes; after
editing a kernel run ``make clean-cache`` or ``python -m loynes cache --clear`` (fresh clones,
as in CI, start clean anyway). Importing this module checks numba's cache folder first
(:mod:`recursions.common._caches`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

# OpenMP worker threads that spin while waiting steal the CPU from the thread doing the work on a
# busy or small machine (docs/benchmarks.md, bench-omp-wait). Ask for passive waiting unless the
# user chose otherwise; libgomp reads this when numba first loads its OpenMP threading layer.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba

from recursions.common._caches import guard_numba_cache_dir, guard_numba_loads

# Before any kernel is decorated (numba fixes a function's cache folder then): a NUMBA_CACHE_DIR
# that others can write is replaced by a private folder, and a cache file that fails to load is
# rebuilt (see recursions.common._caches).
guard_numba_cache_dir()
guard_numba_loads()

F = TypeVar("F", bound=Callable[..., Any])

JIT_OPTIONS: dict[str, Any] = {
    "cache": True,
    "nogil": True,
    "fastmath": False,
    "error_model": "numpy",
}


def inlined(fn: Any) -> Any:
    """A copy of the compiled ``fn`` that numba inlines into the function calling it.

    For the library's own kernels: a helper called as a function of its own compiles on its
    own and then again inside its caller's module, in every first run (redundancy's map:
    :ref:`bench-first-result`). The helpers of :mod:`recursions.vectors` stay functions of
    their own for users' steps, which then compile only themselves after an edit, with
    compile options of their own.

    Examples
    --------
    >>> from recursions.common._jit import inlined
    >>> from recursions.vectors import drain
    >>> inlined(drain).targetoptions["inline"]
    'always'
    """
    return jit(fn.py_func, inline="always")


def jit(fn: F | None = None, *, parallel: bool = False, inline: str = "never") -> Any:
    """Compile ``fn`` with the project's jit options.

    Parameters
    ----------
    fn : callable, optional
        The function to compile. When omitted, a decorator is returned.
    parallel : bool, default False
        Enable ``numba.prange`` loops (the drivers' ``apply_rows`` only: the replications of
        a run go side by side in threads, :mod:`recursions.engines._replications`).
    inline : {"never", "always"}, default "never"
        ``"always"`` inlines the function into its callers in numba's own IR, so the arrays
        it takes cost no reference counting per call (the drivers' per-arrival helpers).

    Returns
    -------
    numba.core.registry.CPUDispatcher or callable
        The compiled function, or a decorator. Functions defined where numba cannot keep a
        cache (an interactive session) are compiled without one.

    Examples
    --------
    >>> from recursions.common._jit import jit
    >>> @jit
    ... def add(a, b):
    ...     return a + b
    >>> add(1.0, 2.0)
    3.0
    """
    options = dict(JIT_OPTIONS, parallel=parallel)
    if inline != "never":
        options["inline"] = inline

    def compile_(f: F) -> Any:
        try:
            return numba.njit(**options)(f)
        except RuntimeError as exc:  # defined where the cache cannot live (a REPL, a doctest)
            if "cannot cache" not in str(exc):
                raise
            return numba.njit(**dict(options, cache=False))(f)

    if fn is None:
        return compile_
    return compile_(fn)


def is_dispatcher(step: Any) -> bool:
    """Whether ``step`` is a numba dispatcher (compiled), not a plain Python function.

    Examples
    --------
    >>> import recursions as rc
    >>> is_dispatcher(rc.maps.jsw), is_dispatcher(rc.maps.jsw.py_func)
    (True, False)
    """
    return hasattr(step, "py_func") and hasattr(step, "signatures")
