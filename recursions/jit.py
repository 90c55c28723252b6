"""The numba ``jit`` of the project, for kernels of every package built on :mod:`recursions`.

:func:`jit` compiles with the project's options (:data:`JIT_OPTIONS`: ``nopython``,
``cache=True``, no ``fastmath``) after checking numba's cache folder. It is written in
``recursions/_jit.py`` (whose file the compiled drivers include, see
:data:`recursions.drivers.ENGINE_SOURCES`); this module is the public name other packages
import it by.
"""

from __future__ import annotations

from ._jit import JIT_OPTIONS, jit

__all__ = ["JIT_OPTIONS", "jit"]
