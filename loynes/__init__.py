"""Backward Loynes sequences, stability checks and closed forms.

Where things are
----------------
==========================================  ===================================
name                                         module
==========================================  ===================================
``erlang_b``, ``erlang_c``,                  :mod:`loynes.closed_forms`
``mm_c_mean_wait``,
``pollaczek_khinchine_mean_wait``,
``md_c_waiting``
==========================================  ===================================
"""

from .closed_forms import (
    erlang_b,
    erlang_c,
    md_c_waiting,
    mm_c_mean_wait,
    pollaczek_khinchine_mean_wait,
)

__all__ = [
    "erlang_b",
    "erlang_c",
    "md_c_waiting",
    "mm_c_mean_wait",
    "pollaczek_khinchine_mean_wait",
]
