"""The checks of a step function of your own: its errors, bounds checking, the checking kernel.

A :class:`~recursions.Map` is refused when its step breaks the contract of a map (an index
out of bounds, more uniforms or parameters read than declared, a state left unsorted,
negative or non-finite, a bad result): :class:`MapContractError` says what broke and where.
To see an index out of bounds at all, the step is compiled again with numba's bounds
checking (:func:`bounds_checked`, the helpers it calls by a global name included). With
``check="always"`` the map's kernel is :func:`checking_kernel`, which runs that copy and looks
at the state after every step, raising :class:`MapStepError` from inside the compiled
drivers. These are the contract's machinery, kept apart from :class:`~recursions.Map` itself
(:mod:`recursions.model._user_map`), which runs them on its samples and its runs.
"""

from __future__ import annotations

import types
import weakref
from typing import Any

import numpy as np

from recursions.common._jit import is_dispatcher, jit
from recursions.common.codes import LOST

__all__ = ["MapContractError", "MapStepError", "bounds_checked", "checked_copy",
           "checking_kernel"]


class MapContractError(ValueError):
    """A step function broke the contract of a map (see :class:`~recursions.Map`)."""


# what the checking kernel of ``check="always"`` found wrong after a step (0: nothing)
_RAISED, _NAN_W, _INF_W, _NEGATIVE_W, _UNSORTED_W, _NAN_FOUND, _UNDECLARED_LOSS, _BAD_FOUND = (
    range(1, 9))
_WHAT = {_RAISED: "raised an exception (under bounds checking: an index out of bounds)",
         _NAN_W: "left NaN in w", _INF_W: "left w non-finite (inf)",
         _NEGATIVE_W: "left w negative", _UNSORTED_W: "left w unsorted",
         _NAN_FOUND: "returned NaN",
         _UNDECLARED_LOSS: "returned rc.LOST (a lost customer) but is declared loss=False",
         _BAD_FOUND: "returned a workload found that is not finite and >= 0, nor rc.LOST"}

_LIVE: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()  # id -> its Map
"""The maps with ``check="always"``, by the key their checking kernel raises with."""


class MapStepError(MapContractError):
    """A step broke the contract during a run of a map built with ``check="always"``.

    Raised from inside the compiled drivers by the checking kernel (see
    :class:`~recursions.Map`); the message names the map, what broke, the state and input of
    that step and the state it left. ``args`` after construction is that message alone.
    """

    def __init__(self, *args: Any) -> None:
        if len(args) == 8 and isinstance(args[0], int) and isinstance(args[1], int):
            super().__init__(_step_error_message(*args))
        else:
            super().__init__(*args)


def _step_error_message(key: int, code: int, before: Any, sigma: float, tau: float,
                        u: Any, after: Any, found: float) -> str:
    """The message of a :class:`MapStepError`: the step again, diagnosed, where it can be."""
    m = _LIVE.get(key)
    w0, uu = np.asarray(before, dtype=np.float64), np.asarray(u, dtype=np.float64)
    name = repr(m.name) if m is not None else "(a map with check='always')"
    if m is not None:  # run that step again through the contract check, for its message
        try:
            m._check_case(w0, float(sigma), float(tau), uu, m._blocks())
        except MapContractError as exc:
            return f"{exc} (caught by check='always' during a run)"
        except Exception:  # pragma: no cover - the diagnosis itself failed: say what we have
            pass
    what = _WHAT.get(code, f"broke the contract (code {code})")
    return (f"rc.Map {name} {what} (caught by check='always' during a run): at "
            f"w={w0.tolist()}, sigma={float(sigma)!r}, tau={float(tau)!r}, u={uu.tolist()} "
            f"it gave w={np.asarray(after).tolist()}, found={float(found)!r}")


def _state_code_py(w: Any, found: float, edges: Any, loss: bool) -> int:
    """What is wrong with the state ``w`` and the result ``found`` after a step (0: nothing)."""
    for i in range(w.size):
        x = w[i]
        if x != x:
            return _NAN_W
        if x - x != 0.0:
            return _INF_W
        if x < 0.0:
            return _NEGATIVE_W
    for b in range(edges.size - 1):
        for i in range(edges[b], edges[b + 1] - 1):
            if w[i] > w[i + 1]:
                return _UNSORTED_W
    if found != found:
        return _NAN_FOUND
    if found == LOST:
        return 0 if loss else _UNDECLARED_LOSS
    if not found >= 0.0 or found - found != 0.0:
        return _BAD_FOUND
    return 0


_state_code = jit(_state_code_py)

_CHECKED: dict[int, tuple[Any, Any]] = {}  # id(dispatcher) -> (it, its bounds-checked copy)


def bounds_checked(fn: Any, _seen: frozenset[int] = frozenset()) -> Any:
    """``fn`` compiled again with numba's bounds checking (``boundscheck=True``).

    The numba functions it calls through a global name (the helpers of
    :mod:`recursions.vectors`, or yours) are compiled again the same way, so an index out of
    bounds anywhere among them raises ``IndexError`` instead of reading or writing past the
    end of an array. Helpers reached through a module attribute (``mod.helper``) or a
    closure keep their own compilation. A plain Python function is returned as it is
    (numpy checks its indices). The copies are compiled without numba's cache, once per
    process.

    Parameters
    ----------
    fn : callable
        A numba ``@njit`` function, or a plain Python one.

    Returns
    -------
    callable
    """
    if not is_dispatcher(fn):
        return fn
    hit = _CHECKED.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    import numba

    py = fn.py_func
    seen = _seen | {id(fn)}
    names: set[str] = set()
    todo = [py.__code__]
    while todo:  # the names its code (and the code nested in it) reads
        code = todo.pop()
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    scope = dict(py.__globals__)
    for name in names:
        obj = scope.get(name)
        if is_dispatcher(obj) and id(obj) not in seen:
            scope[name] = bounds_checked(obj, seen)
    copy = types.FunctionType(py.__code__, scope, py.__name__, py.__defaults__,
                              py.__closure__)
    copy.__qualname__ = py.__qualname__
    options = {k: v for k, v in fn.targetoptions.items()
               if k not in ("cache", "boundscheck", "nopython")}
    checked = numba.njit(**options, boundscheck=True, cache=False)(copy)
    _CHECKED[id(fn)] = (fn, checked)
    return checked


def checked_copy(fn: Any) -> Any:
    """The bounds-checked copy of ``fn`` (:func:`bounds_checked`) compiled in this process, or None.

    A map's contract check compiles that copy first; a short run may then call it in place
    of ``fn`` (the same numbers, and an index out of bounds raises) rather than compile
    ``fn`` too (:class:`recursions.engines._step_pointer.StepPointer`).
    """
    hit = _CHECKED.get(id(fn))
    return hit[1] if hit is not None and hit[0] is fn else None


def checking_kernel(step: Any, edges: np.ndarray, loss: bool, owner: Any) -> Any:
    """A kernel that runs ``step`` and raises :class:`MapStepError` if the step broke.

    ``owner`` is the map whose kernel it is (``check="always"``): its error message runs the
    step that broke again through the map's contract check, for the diagnosis.
    """
    _LIVE[id(owner)] = owner
    key = id(owner)
    code_of = _state_code if is_dispatcher(step) else _state_code_py

    def checking_step(w, sigma, tau, u, params):  # type: ignore[no-untyped-def]
        before = w.copy()
        found = 0.0
        code = 0
        try:
            found = step(w, sigma, tau, u, params)
        except Exception:
            code = _RAISED
        if code == 0:
            code = code_of(w, found, edges, loss)
        if code != 0:
            raise MapStepError(key, code, before, sigma, tau, u.copy(), w.copy(), found)
        return found

    if not is_dispatcher(step):
        return checking_step
    import numba

    return numba.njit(nogil=True, error_model="numpy")(checking_step)
