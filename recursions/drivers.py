"""Compiled drivers for a kernel: the template :mod:`recursions._engine`, bound to one map.

A kernel is a numba function ``step(w, sigma, tau, u, params) -> found`` (every map of
:mod:`recursions.maps`, or a user's :class:`recursions.Map`). :func:`compiled_drivers`
compiles the template's source once per kernel with ``STEP`` bound to it (and, for the
drain-last kernels of :data:`recursions.maps.DRAIN_LAST`, ``JOIN`` to its join, so the
statistics are added up in the drain's own pass); so adding a built-in map is one kernel and
one class, and a user's map runs the very drivers of the built-ins.

When the kernel is a module-level function whose source file can be read, the compiled source
is written to a file named by a hash of the engine's own sources (:data:`ENGINE_SOURCES`:
every file of :mod:`recursions` the drivers compile in), the kernel's source file, the package
and numba versions and the jit options (``$QUEUE_RECURSIONS_CACHE``, default
``~/.cache/queue-recursions``), and compiled with numba's on-disk cache, so later processes
load it, and an edited kernel or engine gets a new file. Helpers imported from a user's *other*
files are not part of the hash (as with numba's own cache): after editing those, clear the
folder. A kernel defined in a closure, or whose source file cannot be read (a Jupyter cell),
is compiled without the cache; a plain Python function runs the drivers as Python.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ._jit import JIT_OPTIONS
from ._jit import jit as _project_jit
from ._stats import N_STATS, empty_path

__all__ = ["ENGINE_SOURCES", "compiled_drivers", "warm"]

ENGINE_SOURCES = ("_engine.py", "_jit.py", "_stats.py", "codes.py", "maps.py", "vectors.py",
                  "dists/kernel.py")
"""The files of :mod:`recursions` compiled into every driver (the template and what it imports,
directly or not); their text is part of the cache key (``tests/test_user_map.py`` checks that
the list is closed under their imports)."""


def _cache_root() -> Path:
    env = os.environ.get("QUEUE_RECURSIONS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "queue-recursions"


def _is_dispatcher(step: Any) -> bool:
    return hasattr(step, "py_func") and hasattr(step, "signatures")


def _python_jit(fn: Any = None, **_: Any) -> Any:
    """Stand-in for the project's ``jit`` that leaves functions as plain Python."""
    return (lambda f: f) if fn is None else fn


def _uncached_jit(fn: Any = None, *, parallel: bool = False, inline: str = "never") -> Any:
    import numba

    options = dict(JIT_OPTIONS, cache=False, parallel=parallel)
    if inline != "never":
        options["inline"] = inline
    return numba.njit(**options) if fn is None else numba.njit(**options)(fn)


_TEMPLATE_EDITS = (  # (line in recursions/_engine.py, what the compiled copy has instead)
    ("from ._jit import jit\n", ""),  # `jit` is bound by _load (cached, uncached or Python)
    ("from ._stats import (\n", "from recursions._stats import (\n"),
    ("from .dists.kernel import draw_one\n", "from recursions.dists.kernel import draw_one\n"),
    ("from .maps import jsw as STEP  # the template's kernel; compiled_drivers binds each "
     "map's own\n", ""),  # `STEP`, `JOIN` and `FUSED` are bound by _load
    ("from .maps import jsw_join as JOIN  # its join; compiled_drivers binds each map's own\n",
     ""),
    ("\nFUSED = True  # whether JOIN + the driver's own drain is STEP; bound by "
     "compiled_drivers\n", ""),
)


def _driver_source() -> str:
    """The template's source, with the lines that name the kernel and ``jit`` taken out."""
    src = (Path(__file__).with_name("_engine.py")).read_text()
    for line, new in _TEMPLATE_EDITS:
        if line not in src:  # pragma: no cover - guards the template against edits
            raise RuntimeError(f"recursions/_engine.py no longer has the line {line!r}")
        src = src.replace(line, new)
    return src


def _engine_text() -> str:
    """The text of every file in :data:`ENGINE_SOURCES`, in order."""
    root = Path(__file__).parent
    return "\0".join((root / name).read_text() for name in ENGINE_SOURCES)


def _source_file_text(py: Any) -> str | None:
    """The whole source file of the step (``None`` when it cannot be read).

    The cached drivers have the step, and whatever it calls, compiled into them, and numba
    checks only the generated file's time stamp. Hashing the step's whole file (as numba
    itself invalidates a cache when a function's file changes) gives new drivers when a
    helper or a constant next to the step is edited, not only the step's own lines.
    """
    try:
        path = inspect.getsourcefile(py)
        return Path(path).read_text() if path else None
    except (OSError, TypeError, UnicodeDecodeError):
        return None


def _cache_key(step: Any) -> str | None:
    """Hash naming the generated drivers, or ``None`` when the step cannot be cached.

    ``None`` for a closure, and for a step whose source file cannot be read (a Jupyter cell,
    code given to ``exec``): its helpers could change without changing the key.
    """
    py = step.py_func
    if py.__closure__ is not None or "<" in py.__qualname__:
        return None
    try:
        user_src = inspect.getsource(py)
    except (OSError, TypeError):
        return None
    file_text = _source_file_text(py)
    if file_text is None:
        return None
    import numba

    from . import __version__

    h = hashlib.sha256()
    for part in (_driver_source(), _engine_text(), user_src, file_text, py.__module__,
                 py.__qualname__, __version__, numba.__version__,
                 repr(sorted(JIT_OPTIONS.items())), repr(_join_of(step)[1])):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _join_of(step: Any) -> tuple[Any, bool]:
    """``(JOIN, FUSED)`` for ``step``: its join if it is a drain-last kernel, else a stand-in.

    The stand-in (JSW's join) is never called (``FUSED`` is false); it only lets the drivers
    type-check the branch that would call it.
    """
    from . import maps

    try:
        join = maps.DRAIN_LAST.get(step)
    except TypeError:  # an unhashable callable
        join = None
    if join is None:
        return (maps.jsw_join if _is_dispatcher(step) else maps.jsw_join.py_func), False
    return join, True


def _temporary_name(path: Path) -> Path:
    """A file next to ``path`` that no other process or thread writes (pid and uuid)."""
    return path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")


def _load(step: Any, source: str, key: str | None, jit: Any) -> tuple[Any, bool]:
    """Execute the driver source with ``STEP``, ``JOIN``, ``FUSED`` and ``jit`` bound.

    Returns the module and whether it was loaded from the on-disk cache folder.
    """
    import types

    join, fused = _join_of(step)
    bound = {"STEP": step, "JOIN": join, "FUSED": fused, "jit": jit}
    if key is not None:
        name = f"recursions._drivers_{key}"
        try:
            folder = _cache_root()
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"drivers_{key}.py"
            if not path.exists():
                tmp = _temporary_name(path)
                tmp.write_text(source)
                os.replace(tmp, path)
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            mod.__dict__.update(bound)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            return mod, True
        except (OSError, RuntimeError):  # no writable cache folder, or numba cannot cache
            sys.modules.pop(name, None)  # there: compile without the on-disk cache
            bound["jit"] = _uncached_jit
    mod = types.ModuleType("recursions._drivers")
    mod.__dict__.update(bound)
    exec(compile(source, "<recursions drivers>", "exec"), mod.__dict__)
    return mod, False


_DRIVERS: dict[int, tuple[Any, Any, str]] = {}
_WARNED: set[int] = set()


def compiled_drivers(step: Callable[..., Any]) -> tuple[Any, str]:
    """The drivers of :mod:`recursions._engine` compiled for the kernel ``step``, and how.

    Parameters
    ----------
    step : callable
        A numba-compiled (``@njit``) step function, or a plain Python one.

    Returns
    -------
    module, str
        The drivers (``run_chunk``, ``run_draws``, ``run_path``, ``apply_rows``,
        ``step_once``, ``couple_chunk``), and ``"cached"``, ``"uncached"`` or ``"python"``.
    """
    hit = _DRIVERS.get(id(step))
    if hit is not None and hit[0] is step:
        return hit[1], hit[2]
    source = _driver_source()
    if _is_dispatcher(step):
        key = _cache_key(step)
        mod, on_disk = _load(step, source, key,
                             _project_jit if key is not None else _uncached_jit)
        how = "cached" if on_disk else "uncached"
    else:
        how = "python"
        mod, _ = _load(step, source, None, _python_jit)
    _DRIVERS[id(step)] = (step, mod, how)
    return mod, how


def warm(mod: Any, servers: int, m: int, params: np.ndarray) -> None:
    """Compile every driver once, with the argument types the library passes."""
    S = servers
    W = np.zeros((1, S))
    sig, tau, U = np.zeros((1, 1)), np.zeros((1, 1)), np.zeros((1, 1, m))
    acc = np.zeros((1, 1, N_STATS))
    hist = np.zeros((1, 1, 1))
    mod.run_chunk(params, W, sig, tau, U, False, 0, 1, 1, np.zeros(0), 0.0, 1, acc, hist,
                  empty_path())
    gen = np.random.default_rng(0)
    mod.run_draws(params, np.zeros(S), gen, 1, np.ones(1), gen, 1, np.ones(1), gen, m, 1, True,
                  0, 1, 1, np.zeros(0), 0.0, 1, acc[0], hist[0], np.zeros((0, 0)))
    mod.run_path(params, np.zeros(S), sig[0], tau[0], U[0])
    mod.step_once(params, np.zeros(S), 0.0, 0.0, np.zeros(max(m, 1)))
    mod.apply_rows(params, np.zeros((1, S)), np.zeros(1), np.zeros(1), np.zeros((1, m)),
                   np.zeros(1))
    mod.couple_chunk(params, np.zeros(S), np.zeros(S), sig[0], tau[0], U[0])
