"""A user's step called through a pointer: one compiled loop for every map.

The drivers of :mod:`recursions.engines._driver_template` call the kernel ``STEP`` by name,
so each map gets a copy of the loop with its step compiled in: the fastest loop, and seconds
of compiling for every new or edited step. The copy compiled here instead binds ``STEP`` to
:func:`call_step`, which calls the step through a first-class function pointer carried with
its parameters, ``params = (StepPointer(step), params)``: one loop per pair of law codes,
compiled once (and cached on disk), and each new step costs only its own compile. The
numbers are those of the compiled-in copy; the loop is slower by the call it cannot inline,
and by the bounds checks of the copy of a checked map's step that it calls (:class:`StepPointer`;
measured on the benchmarks page, section :ref:`bench-first-result`), so the engines run it
for short runs only (:data:`recursions.engines._workload_engines.POINTER_ARRIVALS`).

A step called through a pointer cannot raise into the loop: numba reports the exception as
unraisable and the call returns 0. :func:`raising_unraisable` turns that report back into
the step's exception after the run, so an error is never a silent number.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

from numba.core import types
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.core.types.function_type import WrapperAddressProtocol

from recursions.common._jit import jit

__all__ = ["SIGNATURE", "PointerRefused", "StepPointer", "call_step", "raising_unraisable"]


SIGNATURE = types.float64(types.float64[::1], types.float64, types.float64,
                          types.float64[::1], types.float64[::1])
"""``step(w, sigma, tau, u, params) -> found`` as the drawing loop calls it."""


class PointerRefused(TypeError):
    """A step that cannot be called through a pointer of :data:`SIGNATURE`.

    It returns an integer, say, or was compiled eagerly for other types: it runs on its own
    copy of the loop instead.
    """


class StepPointer(WrapperAddressProtocol):
    """A compiled step as a first-class function of :data:`SIGNATURE`.

    Numba types it by its signature alone, so a loop that takes it compiles once for every
    step (a step passed as itself is typed by its own identity, and the loop recompiled).
    Where the step's map checked its contract in this process, the pointer is to the
    bounds-checked copy that check compiled
    (:func:`recursions.model._map_step_checks.checked_copy`): the same numbers, no second
    compile of the step, and an index out of bounds raises ``IndexError`` rather than read
    or write past an array (in these short runs; a long run's own copy of the loop runs the
    step itself, unchecked).

    Examples
    --------
    >>> from recursions.model.maps import jsw
    >>> StepPointer(jsw).signature() == SIGNATURE
    True
    """

    def __init__(self, step: Any) -> None:
        from numba.core.errors import TypingError

        from recursions.model._map_step_checks import checked_copy

        # the copy a map's contract check compiled with bounds checking, where there is one:
        # the same numbers (an index out of bounds raises), and the step is not compiled a
        # second time for a short run (bench-first-result); a step compiled eagerly for its
        # own signature is refused as itself (its copy would compile for any types)
        checked = checked_copy(step) if getattr(step, "_can_compile", False) else None
        self.step = step = checked or step
        try:
            step.compile(SIGNATURE.args)
            returns = step.overloads[SIGNATURE.args].signature.return_type
        except (TypingError, RuntimeError, KeyError) as exc:  # e.g. an eager signature of its own
            raise PointerRefused(f"the step does not compile for {SIGNATURE}: {exc}") from exc
        if returns != types.float64:
            raise PointerRefused(f"the step returns {returns}, not float64")

    def __wrapper_address__(self) -> int:
        """The address of the step's C wrapper for :data:`SIGNATURE`."""
        cres = self.step.get_compile_result(SIGNATURE)
        return int(cres.library.get_pointer_to_function(cres.fndesc.llvm_cfunc_wrapper_name))

    def signature(self) -> Any:
        """:data:`SIGNATURE`."""
        return SIGNATURE


@jit(inline="always")
def call_step(w, sigma, tau, u, params):  # type: ignore[no-untyped-def]
    """``STEP`` of the pointer copy: ``params[0]``, the step, on ``params[1]``."""
    return params[0](w, sigma, tau, u, params[1])


_LOCAL = threading.local()
_LOCK = threading.Lock()


def _hook(report: Any) -> None:
    """``sys.unraisablehook`` while pointer loops run: keep a step's exception for its thread.

    The first of a run is kept (a step that raises on a state it keeps raises at every later
    arrival too); other reports go to the hook this one was put in front of, or to Python's
    own where that hook hands them back here.
    """
    caught = getattr(_LOCAL, "caught", None)
    if caught is not None and report.exc_value is not None:
        if not caught:
            caught.append(report.exc_value)
        return
    if getattr(_LOCAL, "passing", False):  # a hook that forwards to this one
        sys.__unraisablehook__(report)
        return
    _LOCAL.passing = True
    try:
        _hook.previous(report)  # type: ignore[attr-defined]
    finally:
        _LOCAL.passing = False


_hook.previous = sys.unraisablehook  # type: ignore[attr-defined]


@contextlib.contextmanager
def raising_unraisable() -> Iterator[None]:
    """Raise, after the block, the first exception a step of this thread reported in it.

    The hook that keeps them is put in front of whatever ``sys.unraisablehook`` is at the
    time (and passes on the reports of other code and other threads), so replications that
    run in threads each get their own step's exception. Numba's warning that first-class
    functions are experimental, given each time a loop is called with one, is silenced (a
    filter for that message alone, put first again at each call): the pointer loop is tested
    against the compiled-in copy, number for number.
    """
    warnings.filterwarnings("ignore", message="First-class function type feature is "
                            "experimental", category=NumbaExperimentalFeatureWarning)
    with _LOCK:
        if sys.unraisablehook is not _hook:
            _hook.previous = sys.unraisablehook  # type: ignore[attr-defined]
            sys.unraisablehook = _hook
    outer = getattr(_LOCAL, "caught", None)
    caught: list[BaseException] = []
    _LOCAL.caught = caught
    try:
        yield
    finally:
        _LOCAL.caught = outer
    if caught:
        raise caught[0]
