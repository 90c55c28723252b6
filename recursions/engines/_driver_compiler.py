"""Compiled drivers for a kernel: the driver template, bound to one map.

The template is :mod:`recursions.engines._driver_template`.

A kernel is a numba function ``step(w, sigma, tau, u, params) -> found`` (every map of
:mod:`recursions.model.maps`, or a user's :class:`recursions.Map`). :func:`compiled_drivers`
compiles the template's source once per kernel with ``STEP`` bound to it (and, for the
drain-last kernels of :data:`recursions.model.maps.DRAIN_LAST`, ``JOIN`` to its join, so the
driver drains the vector itself); so adding a built-in map is one kernel and one class, and
a user's map runs the same drivers as a whole step. The drivers that draw inside the loop
(``run_draws``) are a further copy per pair of law codes, with the codes and ``DRAW`` as
constants (``compiled_drivers(step, laws)``), and for the kernels of
:data:`recursions.model.maps.RANKED` at 2 to :data:`ONE_PASS_SERVERS` servers one more, with
``RANK`` bound and ``PASS`` on, which joins and drains in one branch-free pass
(:func:`uses_one_pass`); the heap engine's are a copy per pair of law codes, and for a lean
run (only statistics of what customers find) per policy too, with its statistics compiled in
(:func:`heap_drivers`). Each is compiled on first use.

When the kernel is a module-level function whose source file can be read, the compiled source
is written to a file named by a hash of the engine's own sources (:data:`ENGINE_SOURCES`:
every file of :mod:`recursions` the drivers compile in), the kernel's source file, the package
and numba versions, the jit options, the law codes and the one-pass flag
(``$QUEUE_RECURSIONS_CACHE``, default
``~/.cache/queue-recursions``), and compiled with numba's on-disk cache, so later processes
load it, and an edited kernel or engine gets a new file. Helpers imported from a user's *other*
files are not part of the hash (as with numba's own cache): after editing those, clear the
folder. A kernel defined in a closure, or whose source file cannot be read (a Jupyter cell),
is compiled without the cache; a plain Python function runs the drivers as Python.

The cache is kept safe (:mod:`recursions.common._caches`): the folder is created with mode 0700 and
used only while it (and the folders above it) are yours and not writable by group or others;
a cached file runs only as the exact text this version generates (a differing one is
rewritten, with a :class:`~recursions.common._caches.CacheWarning` naming it); a numba cache file
that fails to load is removed and rebuilt once. ``rc.clear_cache()`` or
``python -m loynes cache --clear`` empties the caches.

:func:`drivers_of` is what the rest of the library asks: the drivers that iterate a system
(a system declares its kernel; its drivers are the engines'), refused for a system that has
no map on workload vectors, and for a user's :class:`recursions.Map` its contract checked
on first use (each driver compiles on its first call: a run compiles only what it uses).
"""

from __future__ import annotations

import hashlib
import inspect
import re
import sys
import types
import warnings
import weakref
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from recursions.model._bounds import Envelope
    from recursions.model._system import System
    from recursions.model._user_map import Map

from recursions.common import _caches as _cache
from recursions.common._caches import drivers_root
from recursions.common._caches import temporary_name as _temporary_name  # noqa: F401 - tests use it here
from recursions.common._jit import JIT_OPTIONS, is_dispatcher
from recursions.common._jit import jit as _project_jit
from recursions.common.codes import LawCode
from recursions.dists.kernel import sampler
from recursions.model import _system
from recursions.model._user_map import SlowMapWarning

__all__ = ["ENGINE_SOURCES", "ONE_PASS_SERVERS", "compiled_drivers", "drawing_compiled",
           "drivers_of", "drivers_root", "heap_drivers", "pointer_drivers", "uses_one_pass"]

ENGINE_SOURCES = ("engines/_driver_template.py", "common/_jit.py", "common/_caches.py",
                  "engines/_accumulator.py", "engines/_replications.py", "common/codes.py",
                  "model/maps.py", "vectors.py", "dists/kernel.py")
"""The files of :mod:`recursions` compiled into every driver (the template and what it imports,
directly or not); their text is part of the cache key (``tests/recursions/model/test_user_map.py``
checks that the list is closed under their imports)."""


def _python_jit(fn: Any = None, **_: Any) -> Any:
    """Stand-in for the project's ``jit`` that leaves functions as plain Python."""
    return (lambda f: f) if fn is None else fn


def _uncached_jit(fn: Any = None, *, parallel: bool = False, inline: str = "never") -> Any:
    import numba

    options = dict(JIT_OPTIONS, cache=False, parallel=parallel)
    if inline != "never":
        options["inline"] = inline
    return numba.njit(**options) if fn is None else numba.njit(**options)(fn)


PLACEHOLDER = "# placeholder:"
"""The mark of a line that a compiled copy of a template drops: each such line names one
global (``from ... import x as NAME``, ``from ... import NAME`` or ``NAME = ...``) that the
compiler binds instead, per copy. The lines keep the templates importable as plain modules
(:mod:`recursions.engines._driver_template` runs JSW's block drivers, :mod:`recursions.engines.
_heap` the heap engine's), and the compiler refuses a template whose placeholders are not
exactly the names it binds."""

_PLACEHOLDER_NAME = re.compile(r"^(?:from \S+ import \w+ as (\w+)|from \S+ import (\w+)|(\w+) = )")


def _placeholders_out(src: str, bound: Collection[str], what: str) -> str:
    """``src`` without its placeholder lines, checked to name exactly the globals ``bound``."""
    kept, named = [], set()
    for line in src.splitlines(keepends=True):
        if PLACEHOLDER not in line:
            kept.append(line)
            continue
        found = _PLACEHOLDER_NAME.match(line)
        if found is None:  # guards the templates against edits
            raise RuntimeError(f"{what}: a placeholder line names no global: {line!r}")
        named.add(next(g for g in found.groups() if g))
    if named != set(bound):  # guards the templates against edits
        raise RuntimeError(f"{what}: its placeholders {sorted(named)} are not the names the "
                           f"compiler binds {sorted(bound)}")
    return "".join(kept)


TEMPLATE_NAMES = ("STEP", "JOIN", "RANK", "FUSED", "PASS", "RANKED", "ONE_PASS_MAX", "DRAW",
                  "SCODE", "TCODE", "DRAW_S", "DRAW_T", "LEAN", "jit")
"""The globals a copy of the driver template has bound (:func:`_load`)."""

HEAP_NAMES = ("DRAW", "SCODE", "TCODE", "DRAW_S", "DRAW_T", "POLICY", "WIDE", "LEAN", "jit")
"""The globals a copy of the heap engine has bound (:func:`heap_drivers`)."""


def _driver_source() -> str:
    """The template's source, without its placeholder lines (:data:`PLACEHOLDER`)."""
    src = (Path(__file__).with_name("_driver_template.py")).read_text()
    return _placeholders_out(src, TEMPLATE_NAMES, "the driver template")


def _engine_text() -> str:
    """The text of every file in :data:`ENGINE_SOURCES`, in order."""
    root = Path(__file__).parents[1]  # the recursions package
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


def _cache_key(step: Any, laws: tuple[int, int] | None = None,
               one_pass: bool = False, lean: bool = False) -> str | None:
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

    from recursions import __version__

    h = hashlib.sha256()
    for part in (_driver_source(), _engine_text(), user_src, file_text, py.__module__,
                 py.__qualname__, __version__, numba.__version__,
                 repr(sorted(JIT_OPTIONS.items())), repr(_join_of(step)[1]),
                 repr(_rank_of(step) is not None), repr(laws), repr(one_pass),
                 repr(ONE_PASS_SERVERS), *(["lean"] if lean else [])):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _join_of(step: Any) -> tuple[Any, bool]:
    """``(JOIN, FUSED)`` for ``step``: its join if it is a drain-last kernel, else a stand-in.

    The stand-in (JSW's join) is never called (``FUSED`` is false); it only lets the drivers
    type-check the branch that would call it.
    """
    from recursions.model import maps as maps

    try:
        join = maps.DRAIN_LAST.get(step)
    except TypeError:  # an unhashable callable
        join = None
    if join is None:
        return (maps.jsw_join if is_dispatcher(step) else maps.jsw_join.py_func), False
    return join, True


def _rank_of(step: Any) -> Any:
    """The joined rank of ``step`` (:data:`recursions.model.maps.RANKED`), or ``None``."""
    from recursions.model import maps as maps

    try:
        return maps.RANKED.get(step)
    except TypeError:  # an unhashable callable
        return None


def uses_one_pass(step: Any, servers: int) -> bool:
    """Whether the drawing drivers of ``step`` at ``servers`` servers join in one pass.

    True for the kernels of :data:`recursions.model.maps.RANKED` at 2 to :data:`ONE_PASS_SERVERS`
    servers, where the branch-free pass (:func:`recursions.engines._driver_template.insert_drain`)
    beats the
    insertion loop; beyond, reading every coordinate twice costs more than the mispredicted
    exit. It is a compile-time constant of its own copy of the drivers, since a choice at run
    time inside the loop slowed the whole loop. Measured in ``docs/benchmarks.md``: the range
    in section :ref:`The one-pass range <bench-pass-range>` (table ``kw_pass_range``), the
    run-time choice in section :ref:`Compile-time choices in the drawing drivers
    <bench-drivers>`.
    """
    return _rank_of(step) is not None and 1 < servers <= ONE_PASS_SERVERS


ONE_PASS_SERVERS = 32
"""The most servers at which the drawing drivers of a ranked kernel join in one pass.

Set from the table of ``docs/benchmarks.md``, section :ref:`The one-pass range
<bench-pass-range>` (``pass_range_rows`` of ``benchmarks/kw_throughput.py``); mirrored by
``ONE_PASS_MAX`` in :mod:`recursions.engines._driver_template`, which the drivers bind to it.
"""


def _load(step: Any, source: str, key: str | None, jit: Any,
          laws: tuple[int, int] | None = None, one_pass: bool = False,
          lean: bool = False, pointer: bool = False) -> tuple[Any, bool]:
    """Execute the driver source with ``STEP``, ``JOIN``, ``RANK``, the flags, ``jit`` bound.

    With ``pointer``, ``STEP`` is :func:`~recursions.engines._step_pointer.call_step` (the
    step comes with the parameters) and ``step`` only chooses the stand-ins. Returns the
    module and whether it was loaded from the on-disk cache folder.
    """
    from recursions.engines._step_pointer import call_step
    from recursions.model import maps as maps

    join, fused = _join_of(step)
    rank = _rank_of(step)
    if pointer:  # a user's step: neither a drain-last kernel nor a ranked one
        join, fused, rank = maps.jsw_join, False, None
    ranked = rank is not None
    if rank is None:  # a stand-in, never called (PASS and RANKED are false)
        rank = maps.jsw_joined_rank if is_dispatcher(step) else maps.jsw_joined_rank.py_func
    scode, tcode = _NO_LAWS if laws is None else laws
    bound = {"STEP": call_step if pointer else step, "JOIN": join, "FUSED": fused, "RANK": rank,
             "PASS": one_pass,
             "RANKED": ranked, "ONE_PASS_MAX": ONE_PASS_SERVERS, "DRAW": laws is not None,
             "SCODE": scode, "TCODE": tcode, "DRAW_S": sampler(scode), "DRAW_T": sampler(tcode),
             "LEAN": lean, "jit": jit}
    assert set(bound) == set(TEMPLATE_NAMES)
    return _load_source("drivers", source, key, bound)


def _load_source(prefix: str, source: str, key: str | None,
                 bound: dict[str, Any]) -> tuple[Any, bool]:
    """Execute ``source`` as a module with the globals ``bound`` set first.

    With a ``key``, as the file ``{prefix}_{key}.py`` of the cache folder (numba's on-disk
    cache then keeps its compiled functions); without one, or when that folder cannot be
    used or is not private (a :class:`~recursions.common._caches.CacheWarning` says why), compiled
    in memory. The file is rewritten unless it holds exactly ``source``, and ``source`` is
    what runs, never the file's text (:mod:`recursions.common._caches`). Returns the module and
    whether it came from the cache folder.
    """
    import types

    bound = dict(bound)
    if key is not None:
        name = f"recursions._{prefix}_{key}"
        try:
            folder = _cache.drivers_folder()  # None: refused, with a warning
            if folder is not None:
                path = folder / f"{prefix}_{key}.py"
                _cache.verified_file(path, source)
                return _cache.load_module(name, path, source, bound), True
        except _cache.CacheError:
            raise
        except (OSError, RuntimeError):  # no writable cache folder, or numba cannot cache
            sys.modules.pop(name, None)  # there: compile without the on-disk cache
        bound["jit"] = _uncached_jit
    mod = types.ModuleType(f"recursions._{prefix}")
    mod.__dict__.update(bound)
    exec(compile(source, f"<recursions {prefix}>", "exec"), mod.__dict__)
    return mod, False


_NO_LAWS = (int(LawCode.DETERMINISTIC), int(LawCode.DETERMINISTIC))
"""The law codes bound in the block drivers, whose ``run_draws`` is not used (the shortest
branch: no draw at all)."""

_DRIVERS: dict[tuple[int, tuple[int, int] | None, bool, bool], tuple[Any, Any, str]] = {}
_WARNED: set[int] = set()


def compiled_drivers(step: Callable[..., Any], laws: tuple[int, int] | None = None,
                     servers: int | None = None, lean: bool = False,
                     pointer: bool = False) -> tuple[Any, str]:
    """The drivers of the template compiled for the kernel ``step``, and how.

    Parameters
    ----------
    step : callable
        A numba-compiled (``@njit``) step function, or a plain Python one.
    laws : (int, int), optional
        The service and interarrival :class:`~recursions.common.codes.LawCode` that ``run_draws``
        draws inside the loop: they are compile-time constants of those drivers, so the loop
        holds only the two laws' own samplers (a run-time choice among all the laws costs
        time at every draw: ``docs/benchmarks.md``, section :ref:`Compile-time choices in the
        drawing drivers <bench-drivers>`). Drivers for other codes refuse ``run_draws``.
        Default: the drivers that take pre-drawn blocks (``run_chunk`` and the rest). Each
        pair is compiled on first use and cached like the others.
    servers : int, optional
        With ``laws``: the number of servers the drivers will run. Where
        :func:`uses_one_pass` says so, they are the copy that joins in one branch-free pass
        (the same numbers); other counts share the other copy.
    lean : bool, default False
        With ``laws``: the copy whose drawing loop keeps only what customers find (arrivals,
        waits, losses: the columns behind ``p_wait``, ``mean_wait``, ``p_loss``,
        ``overflow_work`` and ``mean_response``), not the state they see (total workload,
        busy servers, profile snapshots, the histogram of waits), whose sums stay zero.
        The numbers it keeps are those of the full copy, bit for bit.
    pointer : bool, default False
        For a compiled step with no join or rank of its own: ``run_draws`` (with ``laws``) or
        ``run_chunk`` (without) on the one copy of the loop that calls its step through a
        pointer (:mod:`recursions.engines._step_pointer`), compiled once for every step and
        cached on disk, so a new or edited step costs only its own compile. The same
        numbers; slower by a call per arrival, and by the bounds checks of a checked map's
        step (:func:`pointer_drivers`).

    Returns
    -------
    module, str
        The drivers (``run_chunk``, ``run_draws``, ``run_path``, ``run_checked``,
        ``apply_rows``, ``step_once``, ``couple_chunk``), and ``"cached"``, ``"uncached"``
        or ``"python"``.
    """
    if laws is not None:
        laws = (int(laws[0]), int(laws[1]))
    if pointer and is_dispatcher(step) and _rank_of(step) is None and not _join_of(step)[1]:
        from recursions.engines._step_pointer import PointerRefused

        try:
            return pointer_drivers(step, laws, lean and laws is not None), "pointer"
        except PointerRefused:  # the step's own copy, as for a long run
            pass
    one = laws is not None and servers is not None and uses_one_pass(step, int(servers))
    lean = bool(lean) and laws is not None
    hit = _DRIVERS.get((id(step), laws, one, lean))
    if hit is not None and hit[0] is step:
        return hit[1], hit[2]
    source = _driver_source()
    if is_dispatcher(step):
        key = _cache_key(step, laws, one, lean)
        mod, on_disk = _load(step, source, key,
                             _project_jit if key is not None else _uncached_jit, laws, one, lean)
        how = "cached" if on_disk else "uncached"
    else:
        how = "python"
        mod, _ = _load(step, source, None, _python_jit, laws, one, lean)
    _DRIVERS[(id(step), laws, one, lean)] = (step, mod, how)
    return mod, how


def drawing_compiled(step: Callable[..., Any], laws: tuple[int, int], servers: int,
                     lean: bool = False, pointer: bool = False) -> bool:
    """Whether the drivers of ``step`` drawing ``laws`` at ``servers`` are compiled already.

    True once the loop of that copy (:func:`compiled_drivers` with these arguments) has
    been compiled, or loaded from the on-disk cache, in this process; with ``pointer``, the
    pointer loop for those laws (:func:`pointer_drivers`).

    Examples
    --------
    >>> from recursions.model.maps import jsw
    >>> drawing_compiled(jsw, (1, 1), 3) in (True, False)
    True
    """
    codes = (int(laws[0]), int(laws[1]))
    if pointer:
        mod = _POINTER_LOOPS.get((codes, lean))
        return mod is not None and bool(mod.advance.signatures)
    hit = _DRIVERS.get((id(step), codes, uses_one_pass(step, int(servers)), lean))
    return hit is not None and hit[0] is step and bool(getattr(hit[1].advance, "signatures", ()))


_POINTER_LOOPS: dict[tuple[tuple[int, int] | None, bool], Any] = {}


class _PointerDrivers:
    """``run_draws`` or ``run_chunk`` of one step on the pointer loop (:func:`pointer_drivers`)."""

    def __init__(self, mod: Any, step: Any) -> None:
        from recursions.engines._step_pointer import StepPointer

        self.mod, self.pointer = mod, StepPointer(step)

    def run_draws(self, params: Any, *rest: Any) -> None:
        """The template's ``run_draws`` with the step carried in ``params``.

        An exception of the step (reported as unraisable inside the loop) is raised here.
        """
        from recursions.engines._step_pointer import raising_unraisable

        with raising_unraisable():
            self.mod.run_draws((self.pointer, params), *rest)

    def run_chunk(self, params: Any, *rest: Any) -> None:
        """The template's ``run_chunk`` with the step carried in ``params``.

        The replications run in turn, in this thread, where an exception of the step is
        raised after the chunk.
        """
        from recursions.engines._step_pointer import raising_unraisable

        with raising_unraisable():
            self.mod.run_chunk((self.pointer, params), *rest, serial=True)


def pointer_drivers(step: Any, laws: tuple[int, int] | None, lean: bool = False) -> Any:
    """``run_draws`` for the compiled ``step`` on the loop that calls steps through a pointer.

    The loop is the template compiled once per pair of law codes (and ``lean``) with ``STEP``
    calling the step carried in the parameters (:mod:`recursions.engines._step_pointer`),
    keyed and cached on disk like every other copy, without the step in the key: a new or
    edited step compiles only itself. With ``laws=None``, the loop that reads blocks
    (``run_chunk``), one for every law. For steps with no join or rank of their own (a
    built-in kernel that has them runs its own copy, which uses them). Raises
    :class:`~recursions.engines._step_pointer.PointerRefused` for a step that cannot be called
    through the pointer.

    Examples
    --------
    >>> import numpy as np
    >>> from recursions.model.maps import jsw
    >>> drivers = pointer_drivers(jsw, (1, 1))
    >>> hasattr(drivers, "run_draws")
    True
    """
    import numba

    from recursions import __version__

    laws, lean = (None if laws is None else (int(laws[0]), int(laws[1]))), bool(lean)
    mod = _POINTER_LOOPS.get((laws, lean))
    if mod is None:
        h, source = hashlib.sha256(), _driver_source()
        pointer_text = Path(__file__).with_name("_step_pointer.py").read_text()
        for part in (source, _engine_text(), pointer_text, __version__,
                     numba.__version__, repr(sorted(JIT_OPTIONS.items())), repr(laws),
                     "pointer", *(["lean"] if lean else [])):
            h.update(part.encode())
            h.update(b"\0")
        from recursions.model import maps as maps

        mod, _ = _load(maps.jsw, source, h.hexdigest()[:24], _project_jit, laws, False, lean,
                       pointer=True)
        _POINTER_LOOPS[(laws, lean)] = mod
    return _PointerDrivers(mod, step)


_HEAPS: dict[tuple[tuple[int, int], int, bool, bool], Any] = {}


def heap_drivers(laws: tuple[int, int], policy: int | None = None, *,
                 wide: bool | None = None, lean: bool = False) -> Any:
    """The heap engine compiled with the law codes ``laws`` bound (``run_heap_draws``).

    As :func:`compiled_drivers` with ``laws``: the service and interarrival codes are
    compile-time constants of the copy, so its loop holds only those laws' samplers. Compiled
    on first use and cached on disk (keyed by the text of ``heap.py`` and of
    :data:`ENGINE_SOURCES`, the versions and the codes). With ``policy`` (a
    :class:`~recursions.common.codes.HeapPolicy`), the routing policy is a constant of the copy too;
    without, it is read at run time. With ``lean``, the copy keeps only what customers find
    (waits: no all-busy count, no profile snapshot, no histogram; it refuses a profile grid),
    as the dense engine's lean drivers do. ``wide`` chooses the heap's layout (4-ary with keys
    in heap order, or binary; default :data:`recursions.engines._heap.WIDE`): only the benchmark
    (``benchmarks/heap_layout.py``) asks for the other one.
    """
    from recursions.engines import _heap as heap

    laws = (int(laws[0]), int(laws[1]))
    pol = -1 if policy is None else int(policy)
    w = heap.WIDE if wide is None else bool(wide)
    lean = bool(lean)
    hit = _HEAPS.get((laws, pol, w, lean))
    if hit is not None:
        return hit
    import numba

    from recursions import __version__

    src = _placeholders_out((Path(__file__).with_name("_heap.py")).read_text(), HEAP_NAMES,
                            "recursions/engines/_heap.py")
    h = hashlib.sha256()
    for part in (src, _engine_text(), __version__, numba.__version__,
                 repr(sorted(JIT_OPTIONS.items())), repr(laws), *([repr(pol)] if pol >= 0 else []),
                 "wide" if w else "binary", *(["lean"] if lean else [])):
        h.update(part.encode())
        h.update(b"\0")
    bound = {"DRAW": True, "SCODE": laws[0], "TCODE": laws[1], "DRAW_S": sampler(laws[0]),
             "DRAW_T": sampler(laws[1]), "POLICY": pol, "WIDE": w, "LEAN": lean,
             "jit": _project_jit}
    mod, _ = _load_source("heap", src, h.hexdigest()[:24], bound)
    shared = ("sift_down", "sift_down4", "floyd_min") + (("redundancy_event",) if w == heap.WIDE
                                                          else ())
    for name in shared:
    # compiled (and cached) once in recursions.engines._heap, not again per copy
        setattr(mod, name, getattr(heap, name))
    _HEAPS[(laws, pol, w, lean)] = mod
    return mod


def drivers_of(system: System) -> Any:
    """The compiled drivers that iterate ``system``'s map.

    The template :mod:`recursions.engines._driver_template` compiled for the system's
    ``kernel`` (:func:`compiled_drivers`), once per kernel and cached on disk; the envelope
    of a monotone map (:attr:`recursions.Envelope.passes_through`) runs that map's drivers,
    and a :class:`recursions.Map` gets drivers for its own step function, its contract
    checked first. A system that is not a map on workload vectors (no ``"dense"`` among its
    ``engines``, such as a JIQ with a buffer) has none: asking raises ``ValueError``, so
    that no step, coupling or backward run iterates some other map in its place.

    Parameters
    ----------
    system : recursions.System
        The system.

    Returns
    -------
    module
        The drivers (``run_chunk``, ``run_path``, ``step_once``, ``apply_rows``,
        ``couple_chunk``, ...).

    Raises
    ------
    ValueError
        For a system with no map on workload vectors.

    Examples
    --------
    >>> import recursions as rc
    >>> drivers_of(rc.Envelope(rc.JSW(2))) is drivers_of(rc.JSW(2))
    True
    >>> drivers_of(rc.JSQ(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: JSQ(servers=2, buffer=None) is not a map on workload vectors (it runs on ...
    """
    if system.user_step:
        return _map_drivers(cast("Map", system))
    if getattr(system, "passes_through", False):  # an envelope that is its map
        return drivers_of(cast("Envelope", system).system)
    if "dense" not in system.engines:
        raise ValueError(f"{system!r} is not a map on workload vectors (it runs on the "
                         f"{' and '.join(system.engines)} engines, which keep counts of "
                         f"jobs): simulate it with rc.simulate")
    return compiled_drivers(system.kernel)[0]


_ANNOUNCED: set[int] = set()  # plain Python steps whose slowness was already said
_MAP_DRIVERS: dict[int, Any] = {}  # id(map) -> its drivers, while the map lives


def _map_drivers(m: Map) -> Any:
    """The drivers of a user's map: its contract checked, then their source bound, on first use.

    Once per map (a copy, as in a worker process, checks and loads them again, from
    numba's cache): the contract check on a short sample unless ``check=False``
    (:meth:`recursions.Map.check_contract`), and with ``check="always"`` the parallel
    drivers run serially (:func:`_serial_drivers`). Nothing is compiled here: each driver
    compiles on its first call, so a run compiles only what it uses (a ``simulate`` that
    draws in the loop compiles none of these, :func:`check_monotone
    <coupling.check_monotone>` only ``apply_rows``). A plain Python step gets a
    :class:`recursions.SlowMapWarning`, once per step function.
    """
    cached = _MAP_DRIVERS.get(id(m))
    if cached is not None:
        return cached
    if m.check:
        m.check_contract(samples=200)
    mod, how = compiled_drivers(m.kernel)
    if how == "python" and id(m.step_function) not in _ANNOUNCED:
        warnings.warn(f"rc.Map {m.name!r}: the step is a plain Python function, so "
                      "every driver runs as plain Python (about 100x slower); decorate "
                      "it with @numba.njit", SlowMapWarning, stacklevel=4)
    _ANNOUNCED.add(id(m.step_function))
    if m.check == "always":
        mod = _serial_drivers(mod)
    _MAP_DRIVERS[id(m)] = mod
    weakref.finalize(m, _MAP_DRIVERS.pop, id(m), None)
    return mod


def _serial_drivers(mod: Any) -> Any:
    """The drivers ``mod`` with their two parallel ones run one row at a time.

    An exception with run-time values (the state that broke, in
    :class:`~recursions.model._map_step_checks.MapStepError`) raised inside a numba parallel
    region comes out as a bare ``SystemError`` (``apply_rows``, a ``prange``), and
    replications in threads (``run_chunk``) would run on past the first broken step; the
    drivers of a checking kernel (``check="always"``) therefore run those two serially: a
    namespace over ``mod`` with them replaced.
    """
    def run_chunk(  # type: ignore[no-untyped-def]
            params, W, sig, tau, U, collect, t0, total, nbatch, grid, h, every, acc, hist, path):
        mod.run_chunk(params, W, sig, tau, U, collect, t0, total, nbatch, grid, h, every, acc,
                      hist, path, serial=True)

    def apply_rows(params, W, sig, tau, U, found):  # type: ignore[no-untyped-def]
        for i in range(W.shape[0]):
            out, f = mod.step_once(params, W[i], sig[i], tau[i], U[i])
            W[i] = out
            found[i] = f

    names = {k: v for k, v in vars(mod).items() if not k.startswith("__")}
    return types.SimpleNamespace(**dict(names, run_chunk=run_chunk, apply_rows=apply_rows))


_system.DRIVERS[:] = [drivers_of]  # System.step finds the drivers here (see its DRIVERS)
