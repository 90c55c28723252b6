"""Refuse work that cannot fit in memory, before allocating it."""

from __future__ import annotations

import math

__all__ = ["available_memory", "require_memory"]


def available_memory() -> float:
    """Bytes of memory available now (Linux ``MemAvailable``), or ``inf`` where unknown.

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:  # pragma: no cover - not Linux
        pass
    return math.inf


def require_memory(nbytes: float, what: str, fix: str) -> None:
    """Raise ``MemoryError`` naming ``what`` and ``fix`` when ``nbytes`` exceed what is free.

    Parameters
    ----------
    nbytes : float
        Bytes the work will allocate.
    what : str
        What needs them (e.g. ``"JSW with 10^9 servers and 8 replications"``).
    fix : str
        What to change.

    Examples
    --------
    >>> require_memory(1e3, "a small run", "nothing")
    """
    have = available_memory()
    if nbytes > have:
        raise MemoryError(f"{what} needs about {nbytes / 2**30:.3g} GiB and "
                          f"{have / 2**30:.3g} GiB is available: {fix}")
