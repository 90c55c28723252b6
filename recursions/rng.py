"""Seeds and random streams for every package built on :mod:`recursions`.

``RngLike`` is the type of every ``rng=`` argument (an int, a ``numpy.random.Generator``, a
``SeedSequence`` or ``None``); :func:`as_seed_sequence` turns it into a ``SeedSequence``,
:func:`child` and :func:`forward_generator` name streams below it, and :class:`BlockRng` gives
the time-indexed (backward) streams, :data:`BLOCK` times per block. They are written in
``recursions/_rng.py``; this module is the public name other packages import them by.

Examples
--------
>>> from recursions.rng import as_seed_sequence, forward_generator
>>> a = forward_generator(as_seed_sequence(1), 2).random()
>>> a == forward_generator(as_seed_sequence(1), 2).random()
True
"""

from __future__ import annotations

from ._rng import BLOCK, BlockRng, RngLike, as_seed_sequence, child, forward_generator

__all__ = ["BLOCK", "BlockRng", "RngLike", "as_seed_sequence", "child", "forward_generator"]
