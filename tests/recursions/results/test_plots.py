"""Results that draw themselves (``.plot``) and show a compact HTML summary (``_repr_html_``).

The plots are checked by the artists they draw (lines, bands, bars, labels, titles), not by
their pixels, on matplotlib's Agg backend.
"""

import math
import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.patches import Rectangle

import coupling as cp
import loynes as ly
import recursions as rc
from coupling._mms_exact import erlang_c, mmc_wait
from coupling._sample_plots import mmc_rates
from loynes._stability_maps import StabilityMap
from recursions.model.redundancy import JobClass

MM2 = rc.Poisson(1.5, rc.dists.Exponential(1.0))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def sim():
    return rc.simulate(rc.JSW(2), MM2, steps=10_000, rng=1)  # >= 320 x T (T = 18 arrivals)


@pytest.fixture(scope="module")
def seq():
    return ly.loynes(rc.JSW(2), MM2, 2**12, rng=1)


@pytest.fixture(scope="module")
def report():
    return ly.check_stability(rc.JpSW(2, 1), MM2, steps=2**10, horizon=2**10)


@pytest.fixture(scope="module")
def sample():
    return cp.perfect_sample(rc.JSW(2), MM2, 200, rng=1)


@pytest.fixture(scope="module")
def jiq():
    return ly.jiq_equilibrium(0.5, rc.dists.Erlang(2, mean=1.0))


@pytest.fixture(scope="module")
def fixed_point():
    return ly.redundancy_fixed_point(JobClass(2, 1, rc.dists.Exponential(1.0)), 0.4,
                                     balance_samples=1_000)


@pytest.fixture(scope="module")
def smap():
    loads = np.array([0.5, 1.2])
    return StabilityMap(loads, (0, 1), "p", np.array([["stable", "unstable"],
                                                      ["stable", "undecided"]]),
                        np.array([[math.inf, 5.0], [math.inf, math.nan]]), table={},
                        boundaries={"(3)": np.array([1.0, 1.0])})


def _bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _rows(html):
    """``{th: td}`` of a summary table (which must be well-formed markup)."""
    root = ET.fromstring(f"<div>{html}</div>")
    table = root.find("table")
    assert table is not None
    return {tr.find("th").text: tr.find("td").text for tr in table.iter("tr")}


# -- plots --------------------------------------------------------------------------------


def test_simulation_plot_draws_profile_and_wait_tail_with_bands(sim):
    _, given = plt.subplots()
    ax = sim.plot(given, level=0.9)
    assert ax is given
    assert [line.get_label().split(":")[0] for line in ax.lines] == ["x_w", "P(W > w)"]
    bands = _bands(ax)
    assert len(bands) == 2  # one fill_between per curve
    x = sim.profile(sim.grid)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), x.value)
    ys = bands[0].get_paths()[0].vertices[:, 1]  # the band holds the curve
    assert ys.min() <= x.value.min() and ys.max() >= x.value.max() - 1e-12
    assert ax.get_xlabel() == "level w (workload, time)"
    assert ax.get_ylabel() == "fraction / probability"
    t = ax.get_title(loc="left")
    assert t.startswith("Profile x_w and wait tail") and "JSW(servers=2)" in t and "90%" in t


def test_simulation_plot_refuses_a_bad_level(sim):
    with pytest.raises(ValueError, match="level"):
        sim.plot(level=1.5)


def test_loynes_plot_draws_the_sequence_against_the_horizon_with_its_basis(seq):
    ax = seq.plot()
    labels = [line.get_label() for line in ax.lines]
    assert labels[:2] == ["sum_i W_n(i): total workload", "max_i W_n(i): largest workload"]
    np.testing.assert_allclose(ax.lines[0].get_xdata(), seq.horizons)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), seq.total_workload)
    assert f"agree at n = {seq.stabilised_at}" in labels[2]
    assert ax.get_xscale() == "log" and ax.get_xlabel().startswith("horizon n")
    t = ax.get_title(loc="left")
    assert "limit reached" in t and "basis: certificate dominated-start" in t


def test_loynes_plot_shows_the_plateau_horizon_of_the_heuristic():
    res = ly.loynes(rc.JSW(2), MM2, 2**12, rng=1, certify=False)
    assert res.basis.kind == "heuristic" and res.min_horizon <= res.horizons[-1]
    labels = [line.get_label() for line in res.plot().lines]
    assert any(label.startswith("W_n constant from n =") for label in labels)
    assert any(f"n_min = {res.min_horizon:.3g}" in label for label in labels)


def test_stability_report_plot_draws_each_condition_against_its_threshold(report):
    ax = report.plot()
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == len(report.conditions) == 4
    assert [matplotlib.colors.to_hex(b.get_facecolor(), keep_alpha=False) for b in bars] == \
        [matplotlib.colors.to_hex("tab:green")] * 4  # every condition holds
    np.testing.assert_allclose([b.get_width() for b in bars],
                               [c.value for c in report.conditions])
    thresholds = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert [seg[0][0] for c in thresholds for seg in c.get_segments()] == [1.0, 0.0, 1.0, 1.0]
    names = [t.get_text().split("\n")[0] for t in ax.get_yticklabels()]
    assert names == ["(3)", "(9)", "(11)", "(8)"]
    assert ax.get_title(loc="left").startswith(
        "Stability conditions against their thresholds: STABLE")
    assert "decided by theorem theorem-1" in ax.get_title(loc="left")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0] == "holds" and legend[-1].startswith("threshold")


def test_stability_report_plot_error_bars_and_unknown_values():
    c = [ly.Condition("(3)", "s", "necessary", 0.5, 0.0, True, "exact"),
         ly.Condition("(9)", "s", "uniqueness", math.nan, 0.0, True, "an argument"),
         ly.Condition("(8)", "s", "sufficient", 1.1, 0.05, None, "estimated")]
    rep = ly.StabilityReport("sys", "inp", "undecided", "why", c)
    ax = rep.plot()
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert matplotlib.colors.to_hex(bars[2].get_facecolor(), keep_alpha=False) == \
        matplotlib.colors.to_hex("tab:gray")
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["0.5", "no value computed: holds by an argument (see the report)",
                     "1.1 ± 0.05"]
    assert len(ax.containers) >= 1 and "error bars: 95%" in ax.get_title(loc="left")
    assert ax.get_xlim()[1] >= 1.1 + 1.96 * 0.05


def test_perfect_sample_plot_draws_the_histogram_against_erlang_c(sample):
    ax = sample.plot(bins=20)
    assert len([p for p in ax.patches if isinstance(p, Rectangle)]) == 20
    heights = np.array([p.get_height() for p in ax.patches])
    widths = np.array([p.get_width() for p in ax.patches])
    # the histogram's area is the fraction of draws that wait
    assert (heights * widths).sum() == pytest.approx(float(np.mean(sample.found > 0)))
    (exact,) = ax.lines
    c, r = mmc_wait(2, 1.5, 1.0)
    assert exact.get_ydata()[0] == pytest.approx(c * r)
    assert "Erlang C" in exact.get_label() and f"{c:.3g}" in exact.get_label()
    assert ax.get_xlabel().startswith("W, the wait") and "area = P(W > 0)" in ax.get_ylabel()
    assert "against the exact law" in ax.get_title(loc="left")


def test_perfect_sample_plot_without_an_exact_law_says_so(sample):
    ax = sample.plot(exact=False)
    assert [line.get_label() for line in ax.lines] == [
        "no exact law drawn (known here for JSW M/M/S only)"]
    assert "exact law" not in ax.get_title(loc="left").splitlines()[0]
    by_hand = cp.PerfectSample(np.array([[0.0, 1.0], [0.0, 0.0], [0.5, 2.0]]), [1, 2, 3],
                               "monotone", repr(rc.JSW(2)), repr(MM2))
    ax = by_hand.plot(bins=4)  # no `found`: the total workload
    assert ax.get_xlabel().startswith("sum_i w(i)") and "no exact law" in ax.lines[0].get_label()


def test_mm_c_law_matches_the_closed_forms_of_loynes():
    for s, a in [(1, 0.5), (2, 1.0), (5, 4.2), (40, 35.0)]:
        assert erlang_c(s, a) == pytest.approx(ly.erlang_c(s, a), rel=1e-12)
    assert mmc_rates("JSW(servers=3)", repr(rc.Renewal(rc.dists.Exponential(2.0),
                                                          rc.dists.Exponential(0.5)))) == (
        3, 2.0, 0.5)
    assert mmc_rates(repr(rc.JpSW(3, 1)), repr(MM2)) is None
    assert mmc_rates(repr(rc.JSW(3)), repr(rc.Poisson(1.0, rc.dists.Erlang(2, mean=1.0)))) \
        is None
    c, r = mmc_wait(3, 2.0, 1.0)  # mean wait C / (S mu - lambda)
    assert c / r == pytest.approx(ly.mm_c_mean_wait(3, 2.0, 1.0))
    with pytest.raises(ValueError, match="offered_load"):
        erlang_c(2, 2.0)


def test_jiq_plot_draws_the_equilibrium_and_transients(jiq):
    ax = jiq.plot(times=[0.5, 2.0])
    assert len(ax.lines) == 3
    eq, *transients = ax.lines
    assert eq.get_ydata()[0] == pytest.approx(jiq.load) and eq.get_label().startswith("x*_w")
    assert [t.get_label().split(" at ")[1] for t in transients] == ["t = 0.5", "t = 2"]
    assert all(np.all(t.get_ydata() <= eq.get_ydata() + 1e-12) for t in transients)
    assert eq.get_ydata()[-1] <= jiq.load * 1e-3  # drawn until the profile has died out
    assert ax.get_xlabel() == "workload level w"
    assert ax.get_title(loc="left").startswith("Large-scale JIQ (n → ∞): equilibrium")
    assert jiq.plot(w_max=1.0).get_xlim() == (0.0, 1.0)


def test_redundancy_plot_draws_profile_and_response_tail(fixed_point):
    ax = fixed_point.plot()
    assert [line.get_label().split(":")[0] for line in ax.lines] == ["x_w", "P(R > t)"]
    assert ax.lines[0].get_ydata()[0] == pytest.approx(fixed_point.load)
    assert ax.get_title(loc="left").startswith("Redundancy (n → ∞): mean-field fixed point")
    assert "E[R] = " in ax.get_title(loc="left")


def test_stability_map_plot_still_draws(smap):
    ax = smap.plot()
    assert ax.get_xlabel() == "load" and ax.get_ylabel() == "p"
    assert ax.get_title() == "Stability verdicts over load and p, with the boundaries"


def test_every_plot_without_matplotlib_names_the_extra(monkeypatch, sim, seq, report, sample,
                                                       jiq, fixed_point, smap):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    for obj in (sim, seq, report, sample, jiq, fixed_point, smap):
        name = type(obj).__name__
        with pytest.raises(ImportError, match=rf"{name}\.plot\(\) needs matplotlib, which is "
                                              r"not installed: pip install "
                                              r"'queue-recursions\[plot\]'"):
            obj.plot()


def test_plot_modules_import_without_matplotlib():
    code = ("import sys; import recursions.common._figures, coupling._sample_plots; "
            "import loynes._sequence; "
            "import loynes._report, recursions, coupling, loynes; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# -- summaries ----------------------------------------------------------------------------


def _pm(e):
    return f"{e.value:.4g} ± {e.se:.4g}"


def test_simulation_summary_is_a_table_of_estimates(sim):
    rows = _rows(sim._repr_html_())
    assert rows["system"] == "JSW(servers=2)"
    for name in ("p_wait", "mean_wait", "mean_workload", "busy_fraction"):
        assert rows[name] == _pm(getattr(sim, name))
    assert "p_loss" not in rows  # None: left out
    assert rows["arrivals"] == "10,000 × 1 replication (warm-up 0)"
    assert len(rows) <= 12 and "array(" not in sim._repr_html_()  # no grid, no final state


def test_loynes_summary(seq):
    rows = _rows(seq._repr_html_())
    assert rows["stabilised"] == "yes" and rows["basis"] == str(seq.basis)
    assert rows["total workload at the last horizon"] == f"{seq.total_workload[-1]:.4g}"
    assert rows["horizons"].startswith("1 .. ")


def test_report_summary_keeps_str(report):
    rows = _rows(report._repr_html_())
    assert rows["verdict"].startswith("STABLE: ")
    assert rows["decided by"] == "theorem theorem-1 (exact)"
    assert rows["(3) necessary"] == "0.75: holds"
    assert str(report).startswith("system : JpSW(servers=2, p=1)")


def test_perfect_sample_summary(sample):
    rows = _rows(sample._repr_html_())
    assert rows["p_wait"] == _pm(sample.p_wait) and rows["mean_wait"] == _pm(sample.mean_wait)
    assert rows["draws"] == "200" and rows["method"] == sample.method
    by_hand = cp.PerfectSample(np.zeros((2, 2)), [1, 1], "monotone", "<sys>", "inp")
    rows = _rows(by_hand._repr_html_())
    assert rows["system"] == "<sys>" and "p_wait" not in rows  # escaped; no `found`
    assert "seconds per draw (mean)" not in rows  # NaN: not recorded


def test_theory_summaries(jiq, fixed_point):
    rows = _rows(jiq._repr_html_())
    assert rows["load ρ = x*_0"] == "0.5" and rows["E[W] per server = ∫ x*_w dw"] == "0.375"
    assert repr(jiq).startswith("JIQEquilibrium(rate_per_server=0.5")  # repr unchanged
    rows = _rows(fixed_point._repr_html_())
    assert rows["work balance λ E_x[η] (should equal the load)"] == _pm(fixed_point.work_balance)
    assert rows["load x_0 = P(W > 0)"] == f"{fixed_point.load:.4g}"


def test_stability_map_summary(smap):
    html = smap._repr_html_()
    rows = _rows(html)
    assert rows["verdicts"] == "2 stable, 1 unstable, 1 undecided"
    assert rows["p"] == "0, 1" and rows["boundaries"] == "(3)"
    assert str(smap).splitlines()[1].strip() == "0  SU"
    assert "<pre>" in html
