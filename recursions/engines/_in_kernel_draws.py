"""Which laws the kernels draw themselves, and which are drawn in blocks by numpy.

:func:`recursions.simulate` asks :func:`drawn_laws` for the laws of a renewal input that the
dense and heap kernels draw inside their loops (compiled per pair of law codes); every other
input is drawn outside in blocks. Both ways give the same numbers bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recursions.common.codes import LawCode
from recursions.engines._run_plan import KernelLaws
from recursions.model._inputs import Input
from recursions.model._renewal_inputs import Renewal, is_renewal

__all__ = ["KERNEL_DRAWS", "KERNEL_LAWS", "drawn_laws", "kernel_laws"]

# laws whose in-kernel draws, one at a time, are not the numbers of one block ``sample``
_BLOCKWISE = (int(LawCode.HYPEREXPONENTIAL), int(LawCode.COXIAN))

KERNEL_DRAWS = True
"""Whether built-in laws are drawn inside the kernels (``True``) or in blocks by numpy.

On. The in-kernel loops run on drivers compiled for the input's two law codes
(``compiled_drivers`` and ``heap_drivers`` of :mod:`recursions.engines._driver_compiler`,
with ``laws``): the codes, and whether the loop draws at all, are compile-time constants,
so only the laws' own samplers are in the loop. That is faster than numpy's blocks drawn by
a helper thread, and leaves the second core free (measured in ``docs/benchmarks.md``,
section :ref:`Compile-time choices in the drawing drivers <bench-drivers>`). Each law pair
compiles its drivers once, on first use, and numba caches them on disk, so only the laws of
:data:`KERNEL_LAWS` are drawn inside by default. Both ways give the same numbers bit for bit
(``tests/recursions/engines/test_in_kernel_draws.py`` runs both, for every law with an
in-kernel sampler).
"""


KERNEL_LAWS = frozenset({int(LawCode.EXPONENTIAL), int(LawCode.DETERMINISTIC)})
"""The law codes drawn inside the kernels by default; other laws are drawn in blocks.

Each pair of codes drawn in a loop is a copy of the drivers compiled for that pair (once,
then cached on disk; what a copy costs: :ref:`bench-drivers`), so the default keeps the pairs
few: exponential and deterministic times (M/M/S, M/D/S, D/M/S). Every other
law with an element-by-element sampler (:class:`~recursions.dists.Erlang`,
:class:`~recursions.dists.Uniform`, :class:`~recursions.dists.LogNormal`,
:class:`~recursions.dists.Lomax`, :class:`~recursions.dists.Empirical`) can be added, with the
same numbers; HyperExponential and Coxian cannot (their blocks draw all phases first).
"""


def kernel_laws(input: Input) -> tuple[int, np.ndarray, int, np.ndarray] | None:
    """``(service code, params, interarrival code, params)`` to draw inside the kernels.

    For a renewal input (``Renewal``, ``Poisson`` and their arrivals-only forms) whose two laws
    have an in-kernel sampler drawing element by element (:mod:`recursions.dists.kernel`), so
    the kernel sees the very numbers of the block draws, and codes in :data:`KERNEL_LAWS`;
    ``None`` otherwise (the input is drawn in blocks outside: modulated and periodic inputs,
    scipy laws, HyperExponential and Coxian, the laws left out of :data:`KERNEL_LAWS`).

    Parameters
    ----------
    input : recursions.Input
        The input.

    Returns
    -------
    tuple or None

    Examples
    --------
    >>> import recursions as rc
    >>> kernel_laws(rc.Poisson(2.0, rc.dists.Exponential(1.0)))[0::2]
    (1, 1)
    >>> kernel_laws(rc.Poisson(2.0, rc.dists.Erlang(2, rate=1.0))) is None  # drawn in blocks
    True
    """
    if not is_renewal(input) or type(input)._forward is not Renewal._forward:
        return None
    out: list[Any] = []
    for law in (input.service, input.interarrival):
        ks = law.kernel_sampler()
        if ks is None or int(ks[0]) in _BLOCKWISE or int(ks[0]) not in KERNEL_LAWS:
            return None
        out += [int(ks[0]), np.ascontiguousarray(ks[1], dtype=np.float64)]
    return out[0], out[1], out[2], out[3]


def drawn_laws(input: Input) -> KernelLaws | None:
    """The laws drawn inside the kernels (:data:`KERNEL_DRAWS`, :func:`kernel_laws`).

    Parameters
    ----------
    input : recursions.Input
        The input.

    Returns
    -------
    tuple or None
        :func:`kernel_laws` while :data:`KERNEL_DRAWS` is on, else ``None``.

    Examples
    --------
    >>> import recursions as rc
    >>> drawn_laws(rc.Periodic([1.0], [2.0], phase=0)) is None
    True
    """
    return kernel_laws(input) if KERNEL_DRAWS else None
