"""Every study in ``studies/`` runs in its ``--quick`` mode and writes what it promises.

Each study declares ``NAME`` (its results file is ``NAME.csv``) and ``COLUMNS`` (the columns
the issue that asked for it names); the quick run must write rows with those columns and the
provenance columns, and a figure, both locally and with its tasks on a Dask cluster.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

import pytest

STUDIES = Path(__file__).resolve().parents[2] / "studies"
SCRIPTS = sorted(p for p in STUDIES.glob("[a-z]*.py"))


def _load(path: Path):
    sys.path.insert(0, str(STUDIES))
    try:
        spec = importlib.util.spec_from_file_location(f"study_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(STUDIES))


def test_common_refuses_missing_columns(tmp_path):
    sys.path.insert(0, str(STUDIES))
    try:
        import _common
    finally:
        sys.path.remove(str(STUDIES))
    args = _common.parse("t", ["--quick", "--out", str(tmp_path)])
    with pytest.raises(KeyError, match="lacks the columns"):
        _common.write([{"a": 1, "seed": 1, "seconds": 0.0}], ["a", "b"], "t", args)


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_quick_run_writes_its_results(path, tmp_path):
    mod = _load(path)
    mod.main(["--quick", "--out", str(tmp_path)])  # the default: in process while cheap
    csv_path = tmp_path / f"{mod.NAME}.csv"
    with csv_path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows, f"{csv_path} has no rows"
    header = list(rows[0])
    for col in (*mod.COLUMNS, "version", "seed", "seconds"):
        assert col in header, f"{mod.NAME}.csv lacks {col}"
    assert (tmp_path / f"{mod.NAME}.png").stat().st_size > 0


def test_quick_runs_on_a_dask_cluster(tmp_path):
    # --scheduler ADDRESS sends the tasks to Dask workers, which unpickle the script's task
    # functions (defined in __main__, so pickled by value): every study must survive that
    import subprocess

    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        for path in SCRIPTS:
            out = tmp_path / path.stem
            done = subprocess.run(
                [sys.executable, str(path), "--quick", "--scheduler", cluster.scheduler_address,
                 "--out", str(out)], capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, (path.stem, done.stderr[-2000:])
            assert any(out.glob("*.csv")), path.stem
