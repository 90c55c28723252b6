"""Benchmark tables as :class:`recursions.common._tables.Rows`, like every other table of results.

Each benchmark prints its table as text and returns it as ``Rows`` (one dict per measured
point, the parameter columns named in ``dims``), so ``table.to_pandas()`` and
``table.to_xarray()`` work on it as on ``ly.sweep``'s results; with ``--csv`` on the command
line it is also written to ``benchmarks/results/NAME.csv``.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from recursions.common._tables import Rows

RESULTS = Path(__file__).with_name("results")


def finish(rows: Iterable[Mapping[str, Any]], dims: Sequence[str], name: str) -> Rows:
    """The rows as ``Rows``; written to ``results/NAME.csv`` when ``--csv`` was given."""
    table = Rows(rows, dims=dims)
    if "--csv" in sys.argv:
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"{name}.csv"
        table.to_pandas().to_csv(path, index=False)
        print(f"table written to {path}")
    return table


def interleaved_ratio(run: Callable[[bool, int], tuple[float, Any]], rounds: int
                      ) -> dict[str, Any]:
    """Two copies timed in alternating order: ``run(copy, seed) -> (cpu seconds, numbers)``.

    Round ``r`` runs ``False`` then ``True`` (reversed in odd rounds) on seed ``r + 1``; each
    round gives ``time(False) / time(True)``. Returns the ratios' min / median / max and
    whether both copies gave the same numbers in every round.
    """
    ratios, same = [], True
    for r in range(rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        out = {c: run(c, r + 1) for c in order}
        same = same and out[False][1] == out[True][1]
        ratios.append(out[False][0] / out[True][0])
    return {"rounds": rounds, "ratio_min": min(ratios),
            "ratio_median": statistics.median(ratios), "ratio_max": max(ratios),
            "same_numbers": same}


def print_ratios(rows: Iterable[Mapping[str, Any]], what: str) -> None:
    """The rows of :func:`interleaved_ratio` by policy and servers, as a Markdown table."""
    print(f"| policy | servers | {what} (min / median / max) | same numbers |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['policy']} | {r['servers']:g} | {r['ratio_min']:.2f} / "
              f"{r['ratio_median']:.2f} / {r['ratio_max']:.2f} | {r['same_numbers']} |")
