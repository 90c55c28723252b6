"""What the benchmarks' minimal loops share: written here by hand, not taken from the library.

A floor must compute ``simulate``'s statistics without calling the code it is compared with,
so its helpers live here, apart from :mod:`recursions`.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def level_bin(grid, h, x):
    """Levels of the uniform grid strictly below ``x`` (searchsorted 'left')."""
    ng = grid.size
    if x <= grid[0]:
        return 0
    j = min(max(int(np.ceil((x - grid[0]) * (1.0 / h))), 0), ng)  # as the library's
    while j > 0 and grid[j - 1] >= x:
        j -= 1
    while j < ng and grid[j] < x:
        j += 1
    return j
