"""Loading a benchmark script (``benchmarks/NAME.py``) as a module in the tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@contextmanager
def benchmark_module(filename: str, name: str) -> Iterator[ModuleType]:
    """``benchmarks/filename`` imported as module ``name`` while the block runs.

    The folder is on ``sys.path`` meanwhile (the scripts import ``_tables`` and ``_oracles``),
    and the module is in ``sys.modules`` (its dataclasses look their module up).
    """
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / filename)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(name, None)
        sys.path.remove(str(BENCH))
