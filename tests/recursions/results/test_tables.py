"""Results as tables: to_dict() of every result type, Table / Rows, the missing extra."""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import numpy as np
import pytest

import coupling as cp
import loynes as ly
import recursions as rc
from loynes._calibration import VERDICT_CELLS, verdict_table
from recursions.common._tables import EXTRA, Rows, Table, plain, record_dict
from recursions.inference._estimate import Estimate

needs_extra = pytest.mark.skipif(
    importlib.util.find_spec("pandas") is None or importlib.util.find_spec("xarray") is None,
    reason=f"the tables extra is not installed ({EXTRA})",
)

E = rc.dists.Exponential


def same(a, b):
    """``a`` (a to_dict value) equals the attribute ``b``."""
    if isinstance(b, Estimate):
        assert a == {"value": plain(b.value), "se": plain(b.se)} or (
            np.array_equal(a["value"], b.value, equal_nan=True)
            and np.array_equal(a["se"], b.se, equal_nan=True)
        )
    elif isinstance(b, np.ndarray):
        assert np.array_equal(a, b, equal_nan=b.dtype.kind == "f")
    elif hasattr(b, "to_dict") and not isinstance(b, type):
        assert a == b.to_dict()
    elif isinstance(b, float) and math.isnan(b):
        assert math.isnan(a)
    else:
        assert a == b


def round_trip(obj, extra=()):
    d = obj.to_dict()
    names = [k for k in vars(type(obj)).get("__dataclass_fields__", {}) if not k.startswith("_")]
    assert set(names) <= set(d)
    for k in [*names, *extra]:
        same(d[k], getattr(obj, k))
    return d


# -- one result ---------------------------------------------------------------------------


def test_estimate_prints_ci_and_to_dict():
    e = Estimate(0.5, 0.01)
    assert str(e) == "0.5 ± 0.01"
    assert e.ci(0.95) == (0.4804, 0.5196)
    lo, hi = e.ci(0.5)
    assert lo < 0.5 < hi and hi - lo < 0.0196
    assert e.to_dict() == {"value": 0.5, "se": 0.01}
    assert type(Estimate(np.float64(0.5), np.float64(0.1)).to_dict()["value"]) is float
    a = Estimate(np.array([1.0, 2.0]), np.array([0.1, np.nan]))
    assert str(a) == "[1 ± 0.1, 2 ± nan]"
    lo, hi = a.ci(0.9)
    assert lo.shape == (2,) and np.isclose(lo[0], 1 - 1.645 * 0.1, atol=1e-3)
    assert math.isnan(lo[1]) and math.isnan(hi[1])
    with pytest.raises(ValueError, match="level"):
        e.ci(1.0)
    d = a.to_dict()
    assert np.array_equal(d["se"], a.se, equal_nan=True)


def test_simulation_result_to_dict():
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, E(1.0)), steps=4_000, rng=1, grid=[0.0, 1.0])
    d = round_trip(res)
    assert d["p_wait"]["value"] == res.p_wait.value and d["p_loss"] is None
    assert d["batch_check"] == (res.batch_check.to_dict() if res.batch_check else None)
    assert not any(k.startswith("_") for k in d)


def test_perfect_sample_to_dict():
    ps = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, E(1.0)), 20, rng=1)
    d = round_trip(ps, extra=("size", "p_wait", "mean_wait", "mean_workload", "busy_fraction"))
    assert d["size"] == 20 and d["p_loss"] is None


def test_loynes_result_and_report_to_dict():
    inp = rc.Poisson(1.0, E(1.0))
    res = ly.loynes(rc.JSW(2), inp, 2**10, rng=1)
    d = round_trip(res, extra=("limit", "total_workload"))
    assert d["basis"] == res.basis.to_dict() and "controlled" in d["basis"]
    rep = ly.check_stability(rc.JSW(2), inp, steps=2**10, horizon=2**10, rng=1)
    rd = json.loads(json.dumps(rep.to_dict()))  # JSON as before
    assert rd["verdict"] == rep.verdict
    assert rd["conditions"][0]["name"] == rep.conditions[0].name
    round_trip(rep.conditions[0])


def test_growth_and_coupling_results_to_dict():
    g = ly.growth_rate(rc.JSW(2), rc.Poisson(1.0, E(1.0)), steps=2**10, replications=3, rng=1)
    assert g.to_dict() == {"value": g.value, "se": g.se}
    ct = cp.coupling_time(
        rc.JSW(2), rc.Poisson(1.0, E(1.0)), [0.0, 0.0], [5.0, 5.0], rng=1, replications=4
    )
    round_trip(ct, extra=("replications",))
    mono = cp.check_monotone(rc.JSW(2), trials=50, rng=1)
    assert round_trip(mono)["counterexample"] is None


def test_theory_results_to_dict():
    eq = ly.jiq_equilibrium(0.5, E(1.0))
    d = eq.to_dict()
    assert d["rate_per_server"] == eq.rate_per_server and d["load"] == eq.load
    assert isinstance(d["service"], str)  # a law becomes its repr


def test_plain_and_record_dict():
    assert plain((np.int64(2), np.bool_(True), None, "x")) == [2, True, None, "x"]
    assert record_dict(Estimate(1.0, 0.5)) == {"value": 1.0, "se": 0.5, "reason": None}
    assert plain(np.arange(3)) == [0, 1, 2] and plain(np.float32(0.5)) == 0.5


# -- results scripts can use: JSON, one-line repr, summary, untrusted standard errors ------


def test_untrusted_estimate_never_shows_a_bare_se():
    e = Estimate(6.216, 0.1328, reason="no finite variance")
    assert not e.trusted and Estimate(1.0, 0.1).trusted
    assert str(e) == "6.216 (se not trusted: no finite variance)" and "±" not in str(e)
    assert e.to_dict() == {"value": 6.216, "se": None, "untrusted_se": 0.1328,
                           "reason": "no finite variance"}
    a = Estimate(np.array([1.0, 2.0]), np.array([0.1, 0.2]), reason="r")
    assert str(a) == "[1, 2] (se not trusted: r)"
    assert Estimate(1.0, 0.1).distrusted(None) == Estimate(1.0, 0.1)


@pytest.mark.filterwarnings("ignore::recursions.SimulationWarning")
def test_heavy_tailed_mean_carries_its_reason_everywhere():
    # Lomax(2.5): E[sigma^4] = inf, so the M/G/1 mean wait has no standard error at all
    res = rc.simulate(rc.JSW(1), rc.Poisson(0.8, rc.dists.Lomax(2.5, 1.5)), steps=2**16, rng=1)
    mw = res.mean_wait
    assert not mw.trusted and "E[sigma^4] = inf" in mw.reason
    assert res.p_wait.trusted  # a probability keeps its standard error
    for text in (str(mw), repr(res), res.summary(), res._repr_html_()):
        assert f"{float(mw.value):.4g} ± " not in text and "not trusted" in text
    d = json.loads(res.to_json())
    assert d["mean_wait"]["se"] is None and d["mean_wait"]["reason"] == mw.reason
    assert d["p_wait"]["se"] == res.p_wait.se
    t = ly.sweep(lambda a, rng: {"m": rc.simulate(
        rc.JSW(1), rc.Poisson(a, rc.dists.Lomax(2.5, 1.5)), steps=2**14, rng=rng).mean_wait},
        {"a": [0.5]}, max_workers=0, progress=False)
    assert math.isnan(t["m_se"][0]) and "E[sigma^4]" in t["m_untrusted"][0]


def test_results_are_json_and_print_in_one_line():
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, E(1.0)), steps=4_000, rng=1, grid=[0.0, 1.0],
                      record=True)
    d = json.loads(res.to_json(indent=1))
    assert d["final_state"] == res.final_state.tolist() and d["grid"] == [0.0, 1.0]
    assert len(d["path"][0]) == 4_000
    line = repr(res)
    assert "\n" not in line and len(line) < 400 and "array" not in line
    assert line.startswith("SimulationResult(JSW(servers=2), Poisson(")
    assert f"p_wait={res.p_wait:.4g}" in line
    assert res.summary().splitlines()[:2] == ["SimulationResult", "  system             "
                                             "JSW(servers=2)"]
    ps = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, E(1.0)), 50, rng=1)
    assert "\n" not in repr(ps) and "samples=<array (50, 2) float64>" in repr(ps)
    assert f"p_wait          {ps.p_wait:.4g}" in ps.summary()
    assert json.loads(ps.to_json())["samples"] == ps.samples.tolist()
    lr = ly.loynes(rc.JSW(2), rc.Poisson(1.0, E(1.0)), 2**10, rng=1)
    assert "states=<array" in repr(lr) and json.loads(lr.to_json())["stabilised"] is True


def test_to_json_is_strict():
    iv = rc.inference._batch_means.Interval("p", math.nan, math.inf, -math.inf, 0.95, 0, 1,
                                            False, "few")
    text = iv.to_json()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["value"] is None


# -- many results -------------------------------------------------------------------------


def draw(a, b, rng):
    x = np.random.default_rng(rng).random()
    return {"x": x, "m": Estimate(a + b + x, 0.1 * a)}


@needs_extra
def test_sweep_table_round_trips():
    grid = {"a": [1, 2, 3], "b": [0.5, 1.5]}
    t = ly.sweep(draw, grid, rng=3, max_workers=0, progress=False)
    assert isinstance(t, Table) and isinstance(t, dict) and t.dims == ("a", "b")
    assert list(t) == ["a", "b", "replication", "x", "m", "m_se", "error"]
    df = t.to_pandas()
    points = [(a, b) for a in grid["a"] for b in grid["b"]]
    assert list(zip(df["a"], df["b"], strict=True)) == points
    assert np.array_equal(df["m"].to_numpy(), t["m"]) and df["m_se"].tolist() == t["m_se"].tolist()
    ds = t.to_xarray()
    assert ds["a"].values.tolist() == grid["a"] and ds["b"].values.tolist() == grid["b"]
    assert {"x", "m", "m_se"} <= set(ds.data_vars)
    for row in t.rows():
        assert ds["m"].sel(a=row["a"], b=row["b"]).item() == row["m"]
        assert ds["m_se"].sel(a=row["a"], b=row["b"]).item() == pytest.approx(0.1 * row["a"])
    reps = ly.sweep(draw, grid, rng=3, max_workers=0, progress=False, replications=2)
    assert reps.dims == ("a", "b", "replication")
    assert reps.to_xarray()["x"].shape == (3, 2, 2)
    frame = ly.sweep(draw, grid, rng=3, max_workers=0, progress=False, table="pandas")
    assert type(frame).__name__ == "DataFrame" and frame["x"].tolist() == t["x"].tolist()


@needs_extra
def test_stability_map_tables():
    m = ly.stability_map(
        ly.SystemFamily("jpsw", 2),
        ly.PoissonAtLoad(2, E(1.0)),
        [0.5, 1.2],
        [0, 1],
        max_workers=0,
        progress=False,
        steps=2**10,
        horizon=2**10,
    )
    df = m.to_pandas()
    assert len(df) == 4 and df["verdict"].tolist() == m.verdicts.ravel().tolist()
    ds = m.to_xarray()
    assert ds["p"].values.tolist() == [0, 1] and ds["load"].values.tolist() == [0.5, 1.2]
    assert ds["verdict"].values.tolist() == m.verdicts.tolist()
    assert np.array_equal(ds["confidence"].values, m.confidence, equal_nan=True)
    assert {"cond3", "cond3_se", "growth", "growth_se"} <= set(ds.data_vars)
    assert np.array_equal(ds["boundary (11)"].values, m.boundaries["(11)"])


@needs_extra
def test_rows_and_calibration_table():
    rows = verdict_table(VERDICT_CELLS[:2], seeds=[1])
    assert isinstance(rows, Rows) and isinstance(rows, list) and rows.dims == ("cell",)
    df = rows.to_pandas()
    assert df["cell"].tolist() == [c.name for c in VERDICT_CELLS[:2]]
    assert df.to_dict(orient="records")[0]["wrong"] == rows[0]["wrong"]
    ds = rows.to_xarray()
    assert ds["cell"].values.tolist() == sorted(c.name for c in VERDICT_CELLS[:2])
    cols = Rows([{"S": 1, "rate": 2.0}, {"S": 2, "rate": None}], dims=["S"]).columns()
    assert cols["S"].dtype.kind == "i" and math.isnan(cols["rate"][1])


@needs_extra
def test_table_checks_its_columns():
    with pytest.raises(ValueError, match="equal lengths"):
        Table({"a": [1, 2], "b": [1]})
    with pytest.raises(ValueError, match="not columns"):
        Table({"a": [1]}, dims=["b"])
    with pytest.raises(ValueError, match="no parameter axes"):
        Table({"a": [1]}).to_xarray()
    with pytest.raises(ValueError, match="repeat"):
        Table({"a": [1, 1], "v": [0.0, 1.0]}, dims=["a"]).to_xarray()


@pytest.mark.parametrize("missing", ["pandas", "xarray"])
def test_missing_extra_says_what_to_install(monkeypatch, missing):
    t = Table({"a": [1, 2], "v": [0.5, 0.25]}, dims=["a"])
    monkeypatch.setitem(sys.modules, missing, None)  # import now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'queue-recursions\[tables\]'"):
        t.to_xarray()
    if missing == "pandas":
        with pytest.raises(ImportError, match=EXTRA.replace("[", r"\[").replace("]", r"\]")):
            Rows([{"a": 1}]).to_pandas()
