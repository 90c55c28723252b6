"""Argument checks for every package built on :mod:`recursions` (one wording everywhere).

``coupling``, ``loynes``, the benchmarks and the studies check their arguments with these
functions, so that a wrong *type* raises ``TypeError`` and a wrong *value* ``ValueError``
worded alike across the project (``servers must be an integer >= 1, got 0``). The checks live
in ``recursions/_validate.py``, beside the classes they check for (:func:`check_input` in
:mod:`recursions.inputs`, :func:`check_system` in :mod:`recursions.systems`) and in
``recursions/_memory.py`` (:func:`require_memory`); this module is the public name other
packages import them by.

Examples
--------
>>> from recursions.validation import check_int
>>> check_int(3, "servers", 1)
3
"""

from __future__ import annotations

from ._memory import available_memory, require_memory
from ._validate import (
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
from .inputs import check_input
from .systems import check_system

__all__ = [
    "MAX_COUNT",
    "SCALE_MAX",
    "SCALE_MIN",
    "available_memory",
    "check_bool",
    "check_count",
    "check_input",
    "check_int",
    "check_nonnegative",
    "check_points",
    "check_positive",
    "check_real",
    "check_scale",
    "check_system",
    "require_memory",
]
