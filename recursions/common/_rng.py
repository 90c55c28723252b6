"""Seeds and block-indexed random streams (no global state anywhere).

Two kinds of stream are used:

* **forward** streams: one ``numpy.random.Generator`` (PCG64) per source of randomness, drawn
  sequentially. Drawing ``n`` numbers in one call or in several chunks gives the same numbers, so
  results do not depend on how a run is chunked.
* **backward** (time-indexed) streams: the draws for the block of times
  ``[-(b+1)B, -bB)`` come from a Philox generator whose counter is set from ``b``. The draw used
  at time ``-k`` is therefore the same whatever horizon is asked for, which the backward Loynes
  scheme and coupling from the past require.
"""

from __future__ import annotations

import numbers
from typing import TypeAlias

import numpy as np

BLOCK = 4096
"""Length of one block of a backward (time-indexed) stream."""

RngLike: TypeAlias = int | np.random.Generator | np.random.SeedSequence | None
"""What every public ``rng=`` parameter takes (keyword-only, default ``1`` everywhere).

An integer seed (reproducible; the default ``1``), a ``numpy.random.Generator`` (a seed is drawn
from it), a ``SeedSequence`` (used as is) or ``None`` (fresh OS entropy: not reproducible).
"""

def as_seed_sequence(rng: object, name: str = "rng") -> np.random.SeedSequence:
    """Turn the public ``rng`` argument into a ``SeedSequence``.

    Parameters
    ----------
    rng : int, numpy.random.Generator, numpy.random.SeedSequence or None
        An integer seed, a generator (a seed is drawn from it, advancing it once), a seed
        sequence (used as is) or ``None`` (fresh OS entropy: not reproducible).
    name : str
        Parameter name used in error messages.

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> as_seed_sequence(1).entropy
    1
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(int(rng.integers(0, 2**63 - 1)))
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {rng}")
        return np.random.SeedSequence(int(rng))
    raise TypeError(
        f"{name} must be an int, a numpy.random.Generator, a SeedSequence or None, "
        f"got {type(rng).__name__}"
    )


def child(seed: np.random.SeedSequence, *path: int) -> np.random.SeedSequence:
    """Derive a named sub-sequence of ``seed`` without mutating it.

    Parameters
    ----------
    seed : numpy.random.SeedSequence
        The parent.
    *path : int
        Non-negative integers naming the child.

    Returns
    -------
    numpy.random.SeedSequence
        ``SeedSequence(seed.entropy, spawn_key=seed.spawn_key + path)``.
    """
    return np.random.SeedSequence(
        seed.entropy, spawn_key=tuple(seed.spawn_key) + tuple(path), pool_size=seed.pool_size
    )


def forward_generator(seed: np.random.SeedSequence, *path: int) -> np.random.Generator:
    """Sequential generator for the forward stream named ``path``.

    Parameters
    ----------
    seed : numpy.random.SeedSequence
        The parent seed.
    *path : int
        Stream name.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.Generator(np.random.PCG64(child(seed, 0, *path)))


class BlockRng:
    """Generators indexed by block number, for time-indexed (backward) streams.

    Parameters
    ----------
    seed : numpy.random.SeedSequence
        The parent seed.
    *path : int
        Stream name.

    Examples
    --------
    >>> import numpy as np
    >>> br = BlockRng(np.random.SeedSequence(3), 1)
    >>> bool(np.all(br.generator(5).random(4) == br.generator(5).random(4)))
    True
    """

    def __init__(self, seed: np.random.SeedSequence, *path: int) -> None:
        self._key = child(seed, 1, *path).generate_state(2, np.uint64)

    def generator(self, block: int) -> np.random.Generator:
        """Return a fresh generator for ``block`` (same block, same numbers).

        Parameters
        ----------
        block : int
            Non-negative block index.

        Returns
        -------
        numpy.random.Generator
        """
        return np.random.Generator(np.random.Philox(key=self._key, counter=int(block) << 128))
