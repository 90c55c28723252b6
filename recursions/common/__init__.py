"""What the three packages share: seeds, argument checks, memory, jit, workers, tables, figures.

``recursions``, ``coupling`` and ``loynes`` (and the benchmarks and studies) import their
plumbing from here, so that it exists once and is worded alike everywhere: ``rng=`` arguments
typed :data:`RngLike` and turned into seed sequences by :func:`as_seed_sequence`; argument
checks that raise ``TypeError`` for a wrong type and ``ValueError`` for a wrong value
(``servers must be an integer >= 1, got 0``); :func:`require_memory` before a large
allocation; :func:`jit`, the project's numba options; the process pool with its progress bar;
the tables every result converts to; and the helpers every result's ``.plot`` shares.

Examples
--------
>>> from recursions.common import check_int
>>> check_int(3, "servers", 1)
3
"""

from __future__ import annotations

from recursions.common._checks import (
    MAX_COUNT,
    SCALE_MAX,
    SCALE_MIN,
    check_bool,
    check_count,
    check_int,
    check_nonnegative,
    check_points,
    check_positive,
    check_real,
    check_scale,
)
from recursions.common._erlang import erlang_b, erlang_c
from recursions.common._figures import axes, band, level_span, pyplot, title
from recursions.common._html import html_table
from recursions.common._jit import JIT_OPTIONS, jit
from recursions.common._memory import available_memory, require_memory
from recursions.common._pool import (
    check_workers,
    cores,
    dumps,
    progress_bar,
    run_in_processes,
)
from recursions.common._rng import (
    BLOCK,
    BlockRng,
    RngLike,
    as_seed_sequence,
    child,
    forward_generator,
)
from recursions.common._tables import (
    EXTRA,
    Record,
    Rows,
    Table,
    column,
    record_dict,
    to_pandas,
    to_xarray,
)

__all__ = [
    "BLOCK",
    "EXTRA",
    "JIT_OPTIONS",
    "MAX_COUNT",
    "SCALE_MAX",
    "SCALE_MIN",
    "BlockRng",
    "Record",
    "RngLike",
    "Rows",
    "Table",
    "as_seed_sequence",
    "available_memory",
    "axes",
    "band",
    "check_bool",
    "check_count",
    "check_int",
    "check_nonnegative",
    "check_points",
    "check_positive",
    "check_real",
    "check_scale",
    "check_workers",
    "child",
    "column",
    "cores",
    "dumps",
    "erlang_b",
    "erlang_c",
    "forward_generator",
    "html_table",
    "jit",
    "level_span",
    "progress_bar",
    "pyplot",
    "record_dict",
    "require_memory",
    "run_in_processes",
    "title",
    "to_pandas",
    "to_xarray",
]
