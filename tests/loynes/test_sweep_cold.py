"""Sweeps from a cold start, as on a new machine: empty drivers and numba caches.

Each test runs a script in a fresh process whose ``QUEUE_RECURSIONS_CACHE`` and
``NUMBA_CACHE_DIR`` are new empty folders, so the worker processes must compile what they
run (before the fix every point that compiled in a worker failed with numba's
``Cannot set NUMBA_NUM_THREADS ...``, and a user map's points were blamed on the map). The
pool's table must equal, row by row, the table of the same sweep run in process (which runs
second, on the caches the pool's workers filled).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json, math, sys
    import numba
    import numpy as np
    import recursions as rc
    import loynes as ly


    @numba.njit(cache=True)
    def fcfs(w, sigma, tau, u, params):  # a user's own JSW
        found = rc.vectors.add_at_rank(w, 0, w.size, 0, sigma)
        rc.vectors.drain(w, tau)
        return found


    def user_system(p):
        return rc.Map(fcfs, servers=3, name="my-fcfs")


    def plain(x):
        if isinstance(x, float) and math.isnan(x):
            return "nan"
        return x


    def table_rows(t):
        cols = [c for c in t if c != "error"]
        return [[plain(t[c][i].item() if hasattr(t[c][i], "item") else t[c][i]) for c in cols]
                + [t["error"][i]] for i in range(len(t[cols[0]]))]


    if __name__ == "__main__":
        which, workers = sys.argv[1], int(sys.argv[2])
        if which == "jpsw":
            m = ly.stability_map(ly.SystemFamily("jpsw", 6),
                                 ly.PoissonAtLoad(6, rc.dists.Exponential(1.0)),
                                 loads=[0.9, 0.96, 0.99, 1.0], params=[1, 3],
                                 max_workers=workers, progress=False, steps=2**12,
                                 horizon=2**12)
        else:
            m = ly.stability_map(user_system, ly.PoissonAtLoad(3, rc.dists.Exponential(1.0)),
                                 loads=[0.5, 0.95, 1.1], params=[0], max_workers=workers,
                                 progress=False, steps=2**12, horizon=2**12, boundaries=False)
        print(json.dumps({"rows": table_rows(m.table), "execution": str(m.execution),
                          "verdicts": m.verdicts.ravel().tolist()}))
''')


def run_cold(tmp_path, which, workers):
    script = tmp_path / "cold_sweep.py"
    script.write_text(SCRIPT)
    cache = tmp_path / f"cache-{which}"  # empty for the pool run, which goes first
    env = {**__import__("os").environ, "QUEUE_RECURSIONS_CACHE": str(cache / "drivers"),
           "NUMBA_CACHE_DIR": str(cache / "numba")}
    res = subprocess.run([sys.executable, str(script), which, str(workers)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("which", ["jpsw", "user-map"])
def test_cold_pool_equals_in_process(tmp_path, which):
    pool = run_cold(tmp_path, which, 2)  # the workers compile: the caches are empty
    assert pool["execution"] == "pool: max_workers=2"
    errors = [row[-1] for row in pool["rows"] if row[-1] is not None]
    assert errors == []
    here = run_cold(tmp_path, which, 0)
    assert pool["rows"] == here["rows"]
    verdicts = here["verdicts"]
    assert "unstable" in verdicts and "error" not in verdicts
    if which == "jpsw":
        assert "stable" in verdicts and "undecided" in verdicts  # theorems and growth tests
