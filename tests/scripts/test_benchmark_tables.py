"""The benchmark scripts return their tables as Rows and write them as CSV on --csv."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from recursions.common._tables import Rows

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _tables():
    spec = importlib.util.spec_from_file_location("_bench_tables", BENCH / "_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_finish_returns_rows_and_writes_csv_only_when_asked(tmp_path, monkeypatch):
    pd = pytest.importorskip("pandas")
    mod = _tables()
    monkeypatch.setattr(mod, "RESULTS", tmp_path)
    rows = [{"S": 1, "load": 0.5, "rate": 2.5}, {"S": 10, "load": 0.5, "rate": 1.5}]
    monkeypatch.setattr(sys, "argv", ["bench.py"])
    table = mod.finish(rows, ("S", "load"), "demo")
    assert isinstance(table, Rows) and table.dims == ("S", "load") and list(table) == rows
    assert not (tmp_path / "demo.csv").exists()
    monkeypatch.setattr(sys, "argv", ["bench.py", "--csv"])
    mod.finish(rows, ("S", "load"), "demo")
    back = pd.read_csv(tmp_path / "demo.csv")
    assert back["rate"].tolist() == [2.5, 1.5] and back["S"].tolist() == [1, 10]
    ds = table.to_xarray()
    assert ds["rate"].sel(S=10, load=0.5).item() == 1.5


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")
                                          if not p.name.startswith("_")))
def test_every_benchmark_returns_its_table(script):
    # each benchmark's entry points end in finish(...): its table goes to pandas and CSV
    text = (BENCH / script).read_text()
    imported = re.search(r"^from _tables import [^\n]*\bfinish\b.*$", text, flags=re.M)
    assert imported and "finish(" in text[imported.end():]


def test_throughput_floors_compute_simulates_numbers(monkeypatch):
    # the speed ratios mean something only if both floors compute simulate's very statistics:
    # final state, P(wait) and mean workload equal bit for bit, at 1, 3 (no full 4-lane
    # block), 10 and 16 servers (inside the branch-free pass's range)
    monkeypatch.syspath_prepend(str(BENCH))
    # imported by its own name, as the script imports it: numba's cache of its floors then
    # loads in a later session (under another name the cached index could not be read back)
    monkeypatch.delitem(sys.modules, "kw_throughput", raising=False)
    mod = importlib.import_module("kw_throughput")
    for s in (1, 3, 10, 16):
        assert mod.minimal_check(s, 0.9 * s, 3000), s


def test_the_c_loop_computes_the_waits_of_the_map(monkeypatch, tmp_path):
    # the C peer's ratios mean something only if it runs the same map with the statistics
    # it claims: its waits agree with Erlang C, and its minimal and full versions and both
    # of its joins give the same per-batch wait sums (same seed, same draws)
    import shutil

    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.skip("no C compiler: benchmarks/c_loop.py skips itself too")
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_c", BENCH / "c_loop.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    exe = mod.compile_peer(tmp_path)
    for s in (1, 10):
        lam = 0.9 * s
        runs = [mod.run_peer(exe, s, lam, 400_000, full, one, 3)[1]
                for full in (False, True) for one in ((False, True) if s > 1 else (False,))]
        assert mod.agrees(runs[0], s, lam)
        for other in runs[1:]:
            np.testing.assert_array_equal(other, runs[0])
