"""Parameter sweeps (loynes.sweep), stability maps (loynes._stability_maps) and the sweep CLI."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types

import numpy as np
import pytest

import recursions as rc
from loynes._cli import main
from loynes._runners import _main_from_unreadable_file
from loynes._stability import check_stability
from loynes._stability_maps import PoissonAtLoad, SystemFamily, stability_map
from loynes._sweep import NOT_RUN, SweepInterrupted, as_table, expand_grid, sweep

GRID = {"a": [1, 2, 3], "b": [0.5, 1.5]}


def draw(a, b, rng):
    u = np.random.default_rng(rng).random()
    return {"x": a * b, "u": float(u)}


def draw_or_fail(a, b, rng):
    if a == 2 and b == 1.5:
        raise ValueError("bad point a=2")
    return draw(a, b, rng)


def slow_draw(a, rng):
    time.sleep(0.25)
    return float(np.random.default_rng(rng).random())


def rows(t):
    cols = list(t)
    return [tuple(t[c][i] for c in cols) for i in range(len(t[cols[0]]))]


def same(t1, t2):
    assert list(t1) == list(t2)
    for c in t1:
        a, b = np.asarray(t1[c]), np.asarray(t2[c])
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(a, b)
        else:
            assert a.tolist() == b.tolist(), c


# -- local ------------------------------------------------------------------------------


def test_local_rows_in_grid_order_and_seeded():
    t = sweep(draw, GRID, rng=7, max_workers=2, progress=False, table="dict")
    assert list(t) == ["a", "b", "replication", "x", "u", "error"]
    assert t["a"].tolist() == [1, 1, 2, 2, 3, 3]
    assert t["b"].tolist() == [0.5, 1.5] * 3
    assert t["x"].tolist() == [a * b for a in GRID["a"] for b in GRID["b"]]
    seeds = np.random.SeedSequence(7).spawn(6)
    assert t["u"].tolist() == [np.random.default_rng(s).random() for s in seeds]
    assert t["error"].tolist() == [None] * 6


def test_local_independent_of_workers():
    t1 = sweep(draw, GRID, rng=3, max_workers=1, progress=False, table="dict", replications=2)
    t2 = sweep(draw, GRID, rng=3, max_workers=2, progress=False, table="dict", replications=2)
    t0 = sweep(draw, GRID, rng=3, max_workers=0, progress=False, table="dict", replications=2)
    same(t1, t2)
    same(t1, t0)
    assert t1["replication"].tolist() == [0, 1] * 6
    assert len(set(t1["u"].tolist())) == 12
    t3 = sweep(draw, GRID, rng=4, max_workers=0, progress=False, table="dict")
    assert t3["u"].tolist() != t1["u"].tolist()[::2]


def test_failing_point_reported_others_complete():
    t = sweep(draw_or_fail, GRID, rng=1, max_workers=2, progress=False, table="dict")
    err = t["error"].tolist()
    assert err[3] == "ValueError: bad point a=2"
    assert [e for i, e in enumerate(err) if i != 3] == [None] * 5
    assert math.isnan(t["x"][3]) and not np.isnan(np.delete(t["x"], 3)).any()


def test_scalar_result_and_list_grid_and_lambda():
    t = sweep(lambda n, rng: n * n, [{"n": 3}, {"n": 1}], max_workers=1, progress=False,
              table="dict")
    assert t["n"].tolist() == [3, 1] and t["value"].tolist() == [9, 1]


@pytest.mark.parametrize(("grid", "exc", "match"), [
    ({}, ValueError, "grid is empty"),
    ([], ValueError, "grid is empty"),
    ({"a": [], "b": [1]}, ValueError, r"grid\['a'\] is empty"),
    ({"a": 1, "b": [1]}, TypeError, r"grid\['a'\] must be a list"),
    ("a=1", TypeError, "grid must be a dict"),
    (42, TypeError, "grid must be a dict"),
    ([{"a": 1, "b": 1}, 3], TypeError, r"grid\[1\] must be a dict"),
    ([{"a": 1, "b": 1}, {"a": 2}], ValueError, "same parameters"),
    ({"a": [1], "b": [1], "c": [2]}, ValueError, r"\['c'\] are not parameters"),
    ({"a": [1]}, ValueError, r"requires \['b'\]"),
    ({"a": [1], "b": [1], "rng": [1]}, ValueError, "'rng' is reserved"),
])
def test_bad_grid_raises_before_work(grid, exc, match):
    calls = []

    def f(a, b, rng):
        calls.append(1)
        return 0.0

    with pytest.raises(exc, match=match):
        sweep(f, grid, max_workers=0, progress=False)
    assert calls == []


def test_bad_options():
    with pytest.raises(TypeError, match="keyword argument rng"):
        sweep(lambda a: a, {"a": [1]}, max_workers=0, progress=False)
    with pytest.raises(ValueError, match="replications"):
        sweep(draw, GRID, replications=0, progress=False)
    with pytest.raises(ValueError, match="max_workers"):
        sweep(draw, GRID, max_workers=-1, progress=False)
    with pytest.raises(ValueError, match="table"):
        sweep(draw, GRID, table="csv", progress=False)
    with pytest.raises(TypeError, match="client"):
        sweep(draw, GRID, client=3, progress=False)
    with pytest.raises(TypeError, match="func must be callable"):
        sweep(3, GRID, progress=False)


def test_expand_grid_order_and_as_table():
    names, pts = expand_grid({"x": np.array([1.0, 2.0]), "y": range(2)})
    assert names == ["x", "y"] and pts[1] == {"x": 1.0, "y": 1}
    assert type(pts[0]["x"]) is float
    t = as_table({"v": ["s", None], "n": [1, None]}, table="dict")
    assert t["v"].tolist() == ["s", None] and math.isnan(t["n"][1])


def press_ctrl_c_at_ten(a, rng):
    # Ctrl-C reaches the calling process while the workers run (they ignore it themselves);
    # sent by the task, not a timer, so a slow start of the pool cannot move it
    if a == 10:
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(1.0)
    return slow_draw(a, rng)


@pytest.fixture
def ctrl_c():
    # a process started in the background (`make test &`, some CI runners) inherits SIGINT
    # ignored, and Python then installs no KeyboardInterrupt handler: install it here
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_ctrl_c_returns_finished_rows(ctrl_c):
    with pytest.warns(SweepInterrupted, match="of 40 tasks not run"):
        t = sweep(press_ctrl_c_at_ten, {"a": list(range(40))}, max_workers=1, progress=False,
                  table="dict")
    err = t["error"].tolist()
    assert len(err) == 40 and err[-1] == NOT_RUN
    done = [i for i, e in enumerate(err) if e is None]
    assert done == list(range(len(done)))  # one worker: a prefix finished
    assert all(e == NOT_RUN for e in err[len(done):])
    assert 9 <= len(done) <= 11 and t.attrs["execution"].mode == "interrupted"  # in flight


# -- scripts: the __main__ guard and standard input -----------------------------------------

SCRIPT = """\
from loynes._sweep import sweep


def f(a, rng):
    return a * 2


{call}
"""
CALL = ('t = sweep(f, {{"a": [1, 2, 3]}}, max_workers={w}, progress=False, table="dict")\n'
        'print("OK", t["value"].tolist())')
GUARD = 'if __name__ == "__main__":\n'


def run_script(tmp_path, call, stdin=False):
    path = tmp_path / "script.py"
    path.write_text(SCRIPT.format(call=call))
    argv = [sys.executable, "-"] if stdin else [sys.executable, str(path)]
    return subprocess.run(argv, cwd=tmp_path, input=path.read_text() if stdin else None,
                          capture_output=True, text=True, timeout=180)


def test_script_with_guard_runs_on_workers(tmp_path):
    res = run_script(tmp_path, GUARD + textwrap.indent(CALL.format(w=2), "    "))
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["OK [2, 4, 6]"]


def test_script_without_guard_says_what_to_do(tmp_path):
    res = run_script(tmp_path, CALL.format(w=2))
    assert res.returncode != 0 and "OK" not in res.stdout
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("loynes._runners.SweepError: a worker process of the sweep died "
                           "(BrokenProcessPool)")
    assert 'if __name__ == "__main__":' in last and "max_workers=0" in last
    res = run_script(tmp_path, CALL.format(w=None))  # the default: cheap, so in process
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["OK [2, 4, 6]"]


def test_script_from_stdin_says_what_to_do(tmp_path):
    for call in (CALL.format(w=2), GUARD + textwrap.indent(CALL.format(w=2), "    ")):
        res = run_script(tmp_path, call, stdin=True)
        assert res.returncode != 0 and "OK" not in res.stdout
        assert "BrokenProcessPool" not in res.stderr  # detected before starting workers
        last = res.stderr.strip().splitlines()[-1]
        assert last.startswith("RuntimeError: sweep cannot start worker processes: the main "
                               "script was read from standard input")
        assert 'if __name__ == "__main__":' in last and "max_workers=0" in last
    res = run_script(tmp_path, CALL.format(w=0), stdin=True)  # in this process: fine
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["OK [2, 4, 6]"]


def test_unreadable_main_detected_in_process(monkeypatch, tmp_path):
    def main(**attrs):
        mod = types.ModuleType("__main__")
        for k, v in attrs.items():
            setattr(mod, k, v)
        monkeypatch.setitem(sys.modules, "__main__", mod)

    main(__file__="<stdin>", __spec__=None)
    assert _main_from_unreadable_file() == "<stdin>"
    with pytest.raises(RuntimeError, match="read from standard input"):
        sweep(draw, GRID, max_workers=2, progress=False)
    assert sweep(draw, GRID, max_workers=0, progress=False, table="dict")["x"].size == 6
    main(__file__=str(tmp_path / "gone.py"), __spec__=None)
    assert _main_from_unreadable_file() == str(tmp_path / "gone.py")
    (tmp_path / "here.py").write_text("")
    main(__file__=str(tmp_path / "here.py"), __spec__=None)  # a script run from a file
    assert _main_from_unreadable_file() is None
    main(__spec__=None)  # notebooks, python -c, the interactive prompt: no __file__
    assert _main_from_unreadable_file() is None
    main(__file__="<stdin>", __spec__=types.SimpleNamespace(name="pkg.tool"))  # python -m
    assert _main_from_unreadable_file() is None


# -- Dask -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  # loopback, any free port: dashboard_address=None would
                                  # still bind 8787 and warn when it is taken
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0") as lc, \
            distributed.Client(lc) as client:
        yield client


def test_dask_equals_local(cluster):
    local = sweep(draw_or_fail, GRID, rng=11, max_workers=2, progress=False, table="dict",
                  replications=2)
    dask = sweep(draw_or_fail, GRID, rng=11, client=cluster, progress=False, table="dict",
                 replications=2)
    same(local, dask)
    by_address = sweep(draw, GRID, rng=11, client=cluster.scheduler.address, progress=False,
                       table="dict")
    same(by_address, sweep(draw, GRID, rng=11, max_workers=0, progress=False, table="dict"))


def test_dask_survives_killed_worker(cluster):
    grid = {"a": list(range(16))}
    reference = sweep(slow_draw, grid, rng=5, max_workers=0, progress=False, table="dict")
    pids = list(cluster.run(os.getpid).values())
    assert len(pids) == 2
    timer = threading.Timer(0.8, os.kill, (pids[0], signal.SIGKILL))
    timer.start()
    try:
        t = sweep(slow_draw, grid, rng=5, client=cluster, progress=False, table="dict")
    finally:
        timer.cancel()
    assert not timer.is_alive()
    same(t, reference)  # every row exactly once, as undisturbed
    assert pids[0] not in cluster.run(os.getpid).values()  # the worker did die


# -- stability maps and the CLI ------------------------------------------------------------


def test_stability_map_matches_check_stability():
    service = rc.dists.Exponential(1.0)
    loads = [0.6, 0.9, 1.1]
    m = stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, service), loads, [0, 1],
                      rng=3, max_workers=2, progress=False, steps=2**12, horizon=2**12,
                      table="dict")
    assert m.verdicts.shape == (2, 3)
    seeds = np.random.SeedSequence(3).spawn(6)
    for i, p in enumerate([0, 1]):
        for j, rho in enumerate(loads):
            rep = check_stability(rc.JpSW(2, p), rc.Poisson(rho * 2, service),
                                  rng=seeds[i * 3 + j], steps=2**12, horizon=2**12)
            assert m.verdicts[i, j] == rep.verdict
    assert m.verdicts[0].tolist() == ["stable", "stable", "unstable"]
    assert m.verdicts[1, 2] == "unstable" and m.verdicts[1, 0] == "stable"
    np.testing.assert_allclose(m.boundaries["(3)"], [1.0, 1.0])
    np.testing.assert_allclose(m.boundaries["(11)"], [1.0, (1 + 5**0.5) / 4])
    assert m.confidence[0, 0] == math.inf
    assert str(m).splitlines()[1].strip() == "0  SSU"


def test_stability_map_plot_csv_and_errors(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = stability_map(lambda p: rc.JpSW(2, p), PoissonAtLoad(2, rc.dists.Exponential(1.0)),
                      [0.5], [0, 7], max_workers=0, progress=False, steps=2**10,
                      horizon=2**10, boundaries={"mine": lambda p: 0.9}, table="dict")
    assert m.verdicts.tolist() == [["stable"], ["error"]]
    assert "p must be" in m.table["error"][1]
    ax = m.plot()
    assert ax.get_ylabel() == "p"
    plt.close("all")
    m.to_csv(tmp_path / "m.csv")
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0].startswith("p,load,replication,verdict") and len(lines) == 3
    with pytest.raises(ValueError, match="loads is empty"):
        stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, rc.dists.Exponential(1.0)), [],
                      [0])
    with pytest.raises(ValueError, match="params is empty"):
        stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, rc.dists.Exponential(1.0)),
                      [0.5], [])


def test_cli_sweep_writes_csv_and_png(tmp_path, capsys):
    rc_ = main(["sweep", "--system", "jpsw", "--servers", "2", "--loads", "0.6:1.2:2",
                "--p", "0:1", "--out", str(tmp_path), "--steps", "2048", "--horizon", "2048",
                "--workers", "0", "--quiet"])
    assert rc_ == 0
    csv = (tmp_path / "stability_map.csv").read_text().splitlines()
    assert len(csv) == 5 and csv[0].startswith("p,load,")
    assert (tmp_path / "stability_map.png").read_bytes()[:4] == b"\x89PNG"
    out = capsys.readouterr().out
    assert "0  SU" in out and "ran in-process: max_workers=0" in out
    assert not (tmp_path / "stability_map.checkpoint.jsonl").exists()  # done: removed


def test_cli_sweep_resumes_an_interrupted_run(tmp_path, capsys, monkeypatch):
    argv = ["sweep", "--system", "jpsw", "--servers", "2", "--loads", "0.6:1.2:3", "--p", "0:1",
            "--out", str(tmp_path), "--steps", "2048", "--horizon", "2048", "--quiet"]
    assert main(argv) == 0
    whole = (tmp_path / "stability_map.csv").read_text()
    import loynes._stability_maps as sm

    real, calls = sm.check_stability, []

    def stop_at_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C during the third point
        return real(*args, **kwargs)

    monkeypatch.setattr(sm, "check_stability", stop_at_third)
    (tmp_path / "stability_map.csv").unlink()
    assert main(argv) == 130  # interrupted: its checkpoint keeps the two finished points
    assert not (tmp_path / "stability_map.csv").exists()
    assert len((tmp_path / "stability_map.checkpoint.jsonl").read_text().splitlines()) == 3
    monkeypatch.setattr(sm, "check_stability", real)
    assert main(argv) == 0
    assert (tmp_path / "stability_map.csv").read_text() == whole
    assert "2 of 6 tasks read from the checkpoint" in capsys.readouterr().out


@pytest.mark.parametrize(("flags", "match"), [
    (["--loads", "0.5:1"], "--loads: expected A:B:N"),
    (["--loads", "1:0.5:3"], "--loads: need 0 < A <= B"),
    (["--loads", "0.5:1:3", "--p", "0:9"], "--p: values must lie in 0..3"),
    (["--loads", "0.5:1:3", "--p", "a:b"], "--p: expected A:B"),
    (["--loads", "0.5:1:3", "--service", "nope:1"], "--service: unknown law"),
    (["--loads", "0.5:1:3", "--steps", "1"], "--steps must be >= 4, got 1"),
    (["--loads", "0.5:1:3", "--horizon", "0"], "--horizon must be >= 1, got 0"),
    (["--loads", "0.5:1:3", "--p", "1:1", "--d", "1:2"], "--d does not apply to --system jpsw"),
    (["--loads", "0.5:1:3", "--servers", "x"], "invalid int value"),
])
def test_cli_sweep_bad_flags(tmp_path, capsys, flags, match):
    argv = ["sweep", "--system", "jpsw", "--servers", "4", "--out", str(tmp_path), "--p", "0:1",
            *flags]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and match in err


@pytest.mark.parametrize(("system", "flags", "match"), [
    ("jpsw", [], "--system jpsw needs --p A:B"),
    ("leastofd", [], "--system leastofd needs --d A:B"),
    ("leastofd", ["--d", "1:2", "--p", "0:1"], "--p does not apply to --system leastofd"),
])
def test_cli_sweep_needs_its_own_parameter(tmp_path, capsys, system, flags, match):
    argv = ["sweep", "--system", system, "--servers", "4", "--loads", "0.5:1:3",
            "--out", str(tmp_path), *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and match in err


SMALL = ["--steps", "2048", "--horizon", "2048", "--workers", "0", "--quiet"]


def test_cli_sweep_json_prints_the_rows_the_grid_and_how_it_ran(tmp_path, capsys):
    import json

    argv = ["sweep", "--system", "jpsw", "--servers", "2", "--loads", "0.6:1.2:2", "--p", "0:1",
            "--out", str(tmp_path), *SMALL]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # stdout is the JSON document and nothing else
    assert out["param_name"] == "p" and out["params"] == [0, 1] and out["loads"] == [0.6, 1.2]
    assert out["verdicts"] == [["stable", "unstable"], ["stable", "unstable"]]
    assert out["execution"] == {"mode": "in-process", "workers": 0, "reason": "max_workers=0"}
    assert out["complete"] is True and out["checkpoint"] is None
    assert [(r["p"], r["load"], r["verdict"]) for r in out["rows"]] == [
        (0, 0.6, "stable"), (0, 1.2, "unstable"), (1, 0.6, "stable"), (1, 1.2, "unstable")]
    assert out["rows"][0]["confidence"] is None  # inf (a theorem decided): null, as check --json
    assert out["boundaries"]["(11)"][0] == pytest.approx(1.0)
    csv = (tmp_path / "stability_map.csv").read_text().splitlines()
    assert len(csv) == 5 and out["written"] == [str(tmp_path / "stability_map.csv"),
                                                str(tmp_path / "stability_map.png")]
    assert main(argv) == 0  # the same map as text
    assert "0  SU" in capsys.readouterr().out


@pytest.mark.parametrize(("system", "verdicts", "bounds"), [
    ("jsw", ["stable", "unstable"], {"(3)": [1.0]}),
    ("random", ["stable", "unstable"], {"(3)": [1.0]}),
    ("loss", ["stable", "stable"], {}),  # a loss system is stable at every load
    ("jiq", ["stable", "unstable"], {}),
])
def test_cli_sweep_maps_the_systems_without_a_parameter(tmp_path, capsys, system, verdicts,
                                                        bounds):
    import json

    assert main(["sweep", "--system", system, "--servers", "2", "--loads", "0.6:1.3:2",
                 "--out", str(tmp_path), "--json", *SMALL]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["param_name"] == "system" and out["params"] == [system]
    assert out["verdicts"] == [verdicts] and out["boundaries"] == bounds
    assert [r["system"] for r in out["rows"]] == [system, system]
    assert (tmp_path / "stability_map.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_sweep_takes_every_system_of_check(tmp_path):
    from loynes._cli import SYSTEMS, make_parser
    from loynes._stability_maps import FAMILY_PARAMETERS

    assert set(SYSTEMS) == set(FAMILY_PARAMETERS)
    for system in SYSTEMS:  # argparse exits on a --system it does not offer
        args = make_parser().parse_args(["sweep", "--system", system, "--servers", "3",
                                         "--loads", "1", "--out", str(tmp_path)])
        assert args.system == system and SystemFamily(system, 3).values()


@pytest.mark.parametrize("flags", [["--p", "0:1"], ["--d", "1:2"]])
def test_cli_sweep_refuses_a_parameter_for_a_system_without_one(tmp_path, capsys, flags):
    argv = ["sweep", "--system", "jsw", "--servers", "4", "--loads", "0.5:1:3",
            "--out", str(tmp_path), *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"{flags[0]} does not apply to --system jsw: it has no parameter" in err


def test_cli_sweep_json_of_an_interrupted_run(tmp_path, capsys, monkeypatch):
    import json

    import loynes._stability_maps as sm

    real, calls = sm.check_stability, []

    def stop_at_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sm, "check_stability", stop_at_second)
    argv = ["sweep", "--system", "jsw", "--servers", "2", "--loads", "0.6:1.2:3",
            "--out", str(tmp_path), "--json", *SMALL]
    assert main(argv) == 130
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["complete"] is False and out["execution"]["mode"] == "interrupted"
    assert out["verdicts"][0][0] == "stable" and out["written"] == []
    assert out["checkpoint"] == str(tmp_path / "stability_map.checkpoint.jsonl")
    assert "run the same command again" in captured.err


def test_system_family_parameters():
    assert SystemFamily("leastofd", 3).values() == [1, 2, 3]
    assert SystemFamily("split", 3).values() == [0, 1, 2]
    fam = SystemFamily("loss", 3)
    assert fam.param_name == "system" and fam.values() == ["loss"]
    assert fam("loss") == fam(None) == rc.Loss(3)
    with pytest.raises(ValueError, match="loss takes no parameter"):
        fam(1)
    with pytest.raises(ValueError, match="jpsw is swept over its parameter p: give an integer"):
        SystemFamily("jpsw", 3)(None)
    with pytest.raises(ValueError, match="kind must be one of"):
        SystemFamily("fcfs", 3)


def test_stability_map_refuses_a_load_for_other_servers():
    with pytest.raises(ValueError, match="load for 6 servers but system_factory"):
        stability_map(SystemFamily("jpsw", 3), PoissonAtLoad(6, rc.dists.Exponential(1.0)),
                      [0.9], [0], max_workers=0, progress=False)


# -- where tasks run by default, checkpoints, failures that keep finished work ---------------


def sleepy(a, rng):
    time.sleep(0.2)
    return float(np.random.default_rng(rng).random())


def test_default_runs_a_cheap_grid_in_process():
    t = sweep(draw, GRID, rng=3, progress=False, table="dict")
    ex = t.attrs["execution"]
    assert ex.mode == "in-process" and ex.workers == 0
    assert "never paid" in ex.reason or "no pool" in ex.reason
    same(t, sweep(draw, GRID, rng=3, max_workers=0, progress=False, table="dict"))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a pool needs two cores")
def test_default_starts_a_pool_once_it_pays(monkeypatch):
    import loynes._runners as runners

    monkeypatch.setattr(runners, "WORKER_START_S", 0.2)  # what a worker is taken to cost
    grid = {"a": list(range(30))}
    t = sweep(sleepy, grid, rng=4, progress=False, table="dict")
    ex = t.attrs["execution"]
    from loynes._runners import cores

    assert ex.mode == "pool" and ex.workers == min(cores(), 28), ex
    assert ex.reason.startswith("2 tasks ran here first")
    same(t, sweep(sleepy, grid, rng=4, max_workers=0, progress=False, table="dict"))


def test_spread_order_is_a_permutation():
    from loynes._runners import spread_order

    for n in (1, 2, 5, 16, 33):
        assert sorted(spread_order(n)) == list(range(n))
    assert spread_order(8)[:2] == [0, 4]


CALLS: list = []


def interrupt_at(a, rng):
    CALLS.append(a)
    if a == 7 and os.environ.get("SWEEP_TEST_INTERRUPT") == "1":
        raise KeyboardInterrupt
    return draw(a, 1.0, rng)


def test_checkpoint_resumes_to_the_uninterrupted_table(tmp_path, monkeypatch):
    grid = {"a": list(range(12))}
    path = tmp_path / "sweep.jsonl"
    whole = sweep(interrupt_at, grid, rng=9, max_workers=0, progress=False, table="dict")
    monkeypatch.setenv("SWEEP_TEST_INTERRUPT", "1")
    with pytest.warns(SweepInterrupted, match="5 of 12 tasks not run.*same checkpoint="):
        part = sweep(interrupt_at, grid, rng=9, max_workers=0, progress=False, table="dict",
                     checkpoint=path)
    assert part["error"].tolist()[7:] == [NOT_RUN] * 5
    assert len(path.read_text().splitlines()) == 1 + 7  # the head and the finished tasks
    with path.open("a") as fh:  # a line half-written when the run was killed
        fh.write('{"k": 9, "values": {"x"')
    monkeypatch.setenv("SWEEP_TEST_INTERRUPT", "0")
    CALLS.clear()
    resumed = sweep(interrupt_at, grid, rng=9, max_workers=0, progress=False, table="dict",
                    checkpoint=path)
    assert sorted(CALLS) == list(range(7, 12))  # only what had not finished
    same(resumed, whole)
    assert "7 of 12 tasks read from the checkpoint" in str(resumed.attrs["execution"])
    again = sweep(interrupt_at, grid, rng=9, max_workers=0, progress=False, table="dict",
                  checkpoint=path)
    same(again, whole)
    assert len(CALLS) == 5  # everything read back


def test_checkpoint_of_another_sweep_is_refused(tmp_path):
    from loynes._checkpoint import CheckpointMismatch

    path = tmp_path / "sweep.jsonl"
    sweep(draw, GRID, rng=1, max_workers=0, progress=False, checkpoint=path)
    with pytest.raises(CheckpointMismatch, match="other arguments: the seed differ"):
        sweep(draw, GRID, rng=2, max_workers=0, progress=False, checkpoint=path)
    with pytest.raises(CheckpointMismatch, match="other arguments: the grid differ"):
        sweep(draw, {"a": [1], "b": [2.0]}, rng=1, max_workers=0, progress=False,
              checkpoint=path)
    with pytest.raises(CheckpointMismatch, match=r"the function \(its name\), the function's "
                                                 "code differ"):
        sweep(draw_or_fail, GRID, rng=1, max_workers=0, progress=False, checkpoint=path)
    with pytest.raises(ValueError, match="fixed rng"):
        sweep(draw, GRID, rng=None, max_workers=0, progress=False, checkpoint=tmp_path / "x")
    with pytest.raises(ValueError, match="repr"):
        sweep(lambda f, rng: 1, {"f": [object()]}, max_workers=0, progress=False,
              checkpoint=tmp_path / "y")
    # a function in the grid is named by what it computes: accepted
    sweep(lambda f, rng: f(1, 2.0, rng)["x"], {"f": [draw]}, max_workers=0, progress=False,
          checkpoint=tmp_path / "w")
    (tmp_path / "z").write_text("not a checkpoint\n")
    with pytest.raises(CheckpointMismatch, match="not a sweep checkpoint"):
        sweep(draw, GRID, max_workers=0, progress=False, checkpoint=tmp_path / "z")


def test_checkpoint_reruns_tasks_that_raised(tmp_path):
    path = tmp_path / "sweep.jsonl"
    t1 = sweep(draw_or_fail, GRID, rng=5, max_workers=0, progress=False, table="dict",
               checkpoint=path)
    t2 = sweep(draw_or_fail, GRID, rng=5, max_workers=0, progress=False, table="dict",
               checkpoint=path)
    same(t1, t2)
    assert "1 of 6" not in str(t2.attrs["execution"])
    assert "5 of 6 tasks read from the checkpoint" in str(t2.attrs["execution"])


def die_at(a, rng):
    if a == 3 and os.path.exists(os.environ.get("SWEEP_TEST_DIE", "")):
        os._exit(3)  # the worker process dies: the pool breaks
    time.sleep(0.05)
    return float(np.random.default_rng(rng).random())


def test_broken_pool_keeps_finished_rows_and_resumes(tmp_path, monkeypatch):
    from loynes._sweep import SweepError

    marker = tmp_path / "die"
    marker.write_text("")
    monkeypatch.setenv("SWEEP_TEST_DIE", str(marker))
    grid = {"a": list(range(8))}
    path = tmp_path / "sweep.jsonl"
    with pytest.raises(SweepError, match="BrokenProcessPool") as info:
        sweep(die_at, grid, rng=2, max_workers=1, progress=False, table="dict",
              checkpoint=path)
    err = info.value.table["error"].tolist()
    assert err[:3] == [None] * 3  # one worker: the tasks before the fatal one finished
    assert all(e.startswith("not run: a worker process died") for e in err[3:])
    marker.unlink()
    resumed = sweep(die_at, grid, rng=2, max_workers=1, progress=False, table="dict",
                    checkpoint=path)
    same(resumed, sweep(die_at, grid, rng=2, max_workers=0, progress=False, table="dict"))


def test_stability_map_failure_carries_the_partial_map(monkeypatch):
    import loynes._runners as runners
    from loynes._sweep import SweepError

    def broken(func, tasks, sink, workers):
        sink.put(*runners.run_task(func, *tasks[0]))
        raise SweepError("the pool broke", "a worker process died (test)")

    monkeypatch.setattr(sys.modules["loynes._sweep"], "run_local", broken)
    with pytest.raises(SweepError) as info:
        stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, rc.dists.Exponential(1.0)),
                      [0.5, 1.2], [0], max_workers=2, progress=False, steps=2**10,
                      horizon=2**10)
    m = info.value.result
    assert m.verdicts.tolist() == [["stable", "not run"]]  # a point never run is not an error
    assert m.table["error"][1] == "not run: a worker process died (test)"


@pytest.mark.slow
def test_dask_killed_worker_keeps_finished_rows(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    import dask

    from loynes._sweep import SweepError

    marker = tmp_path / "die"
    marker.write_text("")
    monkeypatch.setenv("SWEEP_TEST_DIE", str(marker))
    grid = {"a": list(range(6))}
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address="127.0.0.1:0") as lc, \
            distributed.Client(lc) as client:
        with pytest.raises(SweepError, match="KilledWorker") as info:
            sweep(die_at, grid, rng=2, client=client, progress=False, table="dict")
    err = info.value.table["error"].tolist()
    assert err[3].startswith("not run: the Dask cluster failed (KilledWorker")
    assert err.count(None) >= 1
    marker.unlink()  # the reference runs in this process: no task may kill it
    done = sweep(die_at, grid, rng=2, max_workers=0, progress=False, table="dict")
    for i, e in enumerate(err):
        if e is None:
            assert info.value.table["value"][i] == done["value"][i]


def test_a_sweep_too_large_for_memory_is_refused_before_any_work():
    calls = []

    def f(a, rng):
        calls.append(a)
        return a

    with pytest.raises(MemoryError, match=r"sweep of .* tasks"):
        sweep(f, {"a": [1, 2]}, replications=2**50, max_workers=0, progress=False)
    assert calls == []


def test_default_stays_in_process_with_a_func_workers_cannot_receive(monkeypatch):
    import threading

    import loynes._runners as runners

    monkeypatch.setattr(runners, "WORKER_START_S", 0.01)
    lock = threading.Lock()

    def locked(a, rng):  # a lock cannot be pickled
        with lock:
            time.sleep(0.05)
        return a

    t = sweep(locked, {"a": list(range(8))}, progress=False, table="dict")
    ex = t.attrs["execution"]
    assert ex.mode == "in-process" and "cannot be sent to worker processes" in ex.reason
    assert t["value"].tolist() == list(range(8))
    with pytest.raises(TypeError, match="max_workers=0"):
        sweep(locked, {"a": [1, 2]}, max_workers=2, progress=False)


def test_checkpoint_identity_sees_what_the_function_computes(tmp_path):
    import functools

    from loynes._checkpoint import CheckpointMismatch

    def make(c):
        return lambda a, rng: a * c

    def scaled(c, a, rng):
        return a * c

    cases = [(make(1), make(100), "other arguments: its closure"),
             (lambda a, rng: a, lambda a, rng: a * 100, "other arguments: the function's code"),
             (functools.partial(scaled, 1), functools.partial(scaled, 100),
              "other arguments: its closure")]
    for i, (f, g, what) in enumerate(cases):
        path = tmp_path / f"c{i}.jsonl"
        sweep(f, {"a": [1, 2]}, max_workers=0, progress=False, checkpoint=path)
        with pytest.raises(CheckpointMismatch, match=f"{what} .*differ"):
            sweep(g, {"a": [1, 2]}, max_workers=0, progress=False, checkpoint=path)
    path = tmp_path / "arrays.jsonl"
    a, b = np.zeros(2000), np.zeros(2000)
    b[1000] = 5.0
    sweep(lambda v, rng: float(v.sum()), {"v": [a]}, max_workers=0, progress=False,
          checkpoint=path)
    with pytest.raises(CheckpointMismatch, match="grid differ"):
        sweep(lambda v, rng: float(v.sum()), {"v": [b]}, max_workers=0, progress=False,
              checkpoint=path)


def test_checkpoint_files_are_checked_before_any_work_and_locked(tmp_path):
    from loynes._checkpoint import Checkpoint, identity

    calls = []

    def f(a, rng):
        calls.append(a)
        return a

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ValueError, match="checkpoint: cannot open"):
        sweep(f, {"a": [1]}, max_workers=0, progress=False, checkpoint=blocker / "x.jsonl")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")  # one line, no newline: not a checkpoint, never overwritten
    with pytest.raises(ValueError, match="not a sweep checkpoint"):
        sweep(f, {"a": [1]}, max_workers=0, progress=False, checkpoint=notes)
    assert notes.read_text() == "my notes" and calls == []
    held = Checkpoint(tmp_path / "held.jsonl", identity(func="other"))
    held.open()
    try:
        with pytest.raises(ValueError, match="in use by another running sweep"):
            sweep(f, {"a": [1]}, max_workers=0, progress=False,
                  checkpoint=tmp_path / "held.jsonl")
    finally:
        held.close()
    assert calls == []


def test_results_that_tables_keep_as_they_are(tmp_path):
    from fractions import Fraction

    def f(a, rng):
        return {"big": 2**70 + a, "third": Fraction(a, 3)}

    path = tmp_path / "t.jsonl"
    t = sweep(f, {"a": [1, 2]}, max_workers=0, progress=False, table="dict", checkpoint=path)
    assert t["big"].tolist() == [2**70 + 1, 2**70 + 2]
    assert t["third"].tolist() == [1 / 3, 2 / 3]
    same(t, sweep(f, {"a": [1, 2]}, max_workers=0, progress=False, table="dict",
                  checkpoint=path))


def test_sweep_error_survives_pickling():
    import pickle

    from loynes._sweep import SweepError

    e = pickle.loads(pickle.dumps(SweepError("broke", "a reason", table={"a": 1})))
    assert str(e) == "broke" and e.reason == "a reason" and e.table == {"a": 1}


def _poisson_or_ctrl_c(load):
    if load > 0.6:
        raise KeyboardInterrupt  # Ctrl-C while the map runs its first point at load 0.7
    return rc.Poisson(2 * load, rc.dists.Exponential(1.0))


def test_ctrl_c_during_a_stability_map_warns_and_marks_points_not_run():
    with pytest.warns(SweepInterrupted, match="tasks not run"):
        m = stability_map(rc.JSW, _poisson_or_ctrl_c, [0.5, 0.7], [2, 3], max_workers=0,
                          progress=False, steps=2**10, horizon=2**10, boundaries=False)
    assert m.execution.mode == "interrupted"
    verdicts = m.verdicts.ravel().tolist()
    assert "error" not in verdicts and "not run" in verdicts
    assert m.verdicts[0, 1] == "not run" and m.verdicts[1, 1] == "not run"
    assert set(verdicts) <= {"stable", "not run"}  # what finished before the interruption
    text = str(m)
    assert "., not run" not in text and ". not run" in text
    assert all("E" not in line.split()[-1] for line in text.splitlines()[1:3])


def test_checkpoint_of_another_version_says_so(tmp_path):
    import json as _json

    from loynes._checkpoint import CheckpointMismatch

    path = tmp_path / "v.jsonl"
    sweep(draw, GRID, rng=1, max_workers=0, progress=False, checkpoint=path)
    lines = path.read_text().splitlines()
    head = _json.loads(lines[0])
    head["parts"]["version"], head["hash"] = "0.0.1", "0" * 32  # written by an older release
    path.write_text("\n".join([_json.dumps(head), *lines[1:]]) + "\n")
    with pytest.raises(CheckpointMismatch, match="other arguments: the library's version differ"):
        sweep(draw, GRID, rng=1, max_workers=0, progress=False, checkpoint=path)
