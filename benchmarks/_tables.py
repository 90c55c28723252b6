"""Benchmark tables as :class:`recursions.tables.Rows`, like every other table of results.

Each benchmark prints its table as text and returns it as ``Rows`` (one dict per measured
point, the parameter columns named in ``dims``), so ``table.to_pandas()`` and
``table.to_xarray()`` work on it as on ``ly.sweep``'s results; with ``--csv`` on the command
line it is also written to ``benchmarks/results/NAME.csv``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from recursions.tables import Rows

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
