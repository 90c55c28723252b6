"""The block layout of a system's states, as the coupling tools see it.

A state is a vector of ``servers`` coordinates cut into consecutive separately sorted blocks
(``system.blocks``). The leading block of length ``system.split`` (only
:class:`~recursions.SplitBound` has ``split > 0``) is *exogenous*: both states of an ordered pair
share it. Every other block is free: ``u ≺ v`` means ``u(i) <= v(i)`` in every coordinate, so in
every block.
"""

from __future__ import annotations

from typing import Any

Block = tuple[int, int]


def layout(system: Any) -> tuple[int, tuple[Block, ...]]:
    """``(split, free)``: the shared leading block's length and the free blocks ``(lo, hi)``.

    Empty blocks (``SplitBound(S, 0)`` declares ``(0, 0)``) are dropped.

    Raises
    ------
    ValueError
        If ``split > 0`` but the first declared block is not ``(0, split)``.
    """
    p = int(system.split)
    blocks = tuple((int(lo), int(hi)) for lo, hi in system.blocks if hi > lo)
    if p:
        if not blocks or blocks[0] != (0, p):
            raise ValueError(f"{system!r} declares split={p} but its first block is "
                             f"{blocks[0] if blocks else None}, not (0, {p})")
        blocks = blocks[1:]
    return p, blocks


def refines(a: tuple[Block, ...], b: tuple[Block, ...]) -> bool:
    """Whether every block of ``a`` lies inside a block of ``b``."""
    return all(any(lo >= c and hi <= d for c, d in b) for lo, hi in a)


def sizes(blocks: tuple[Block, ...]) -> list[int]:
    """Block lengths."""
    return [hi - lo for lo, hi in blocks]


def shifted(sizes_: list[int], start: int) -> tuple[Block, ...]:
    """Blocks ``(lo, hi)`` of the given lengths, laid out from ``start``."""
    out, lo = [], start
    for n in sizes_:
        out.append((lo, lo + n))
        lo += n
    return tuple(out)
