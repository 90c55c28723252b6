"""Printing estimates: scalars as before, arrays elementwise."""

from __future__ import annotations

import math
import re

import numpy as np

import recursions as rc
from recursions.inference._estimate import Estimate


def test_scalar_format_unchanged():
    e = Estimate(0.5, 0.01)
    assert str(e) == "0.5 ± 0.01"
    assert f"{e}" == "0.5 ± 0.01"
    assert f"{e:.3f}" == "0.500 ± 0.010"
    assert str(Estimate(np.float64(0.123456), np.float64(0.000123456))) == "0.1235 ± 0.0001235"
    assert str(Estimate(0.25, math.nan)) == "0.25 ± nan"


def test_array_format_elementwise():
    e = Estimate(np.array([0.8123, 0.3201]), np.array([0.0112, 0.0098]))
    assert str(e) == "[0.8123 ± 0.0112, 0.3201 ± 0.0098]"
    assert f"{e:.2f}" == "[0.81 ± 0.01, 0.32 ± 0.01]"
    assert str(Estimate(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.1, 0.2], [0.3, 0.4]]))) \
        == "[[1 ± 0.1, 2 ± 0.2], [3 ± 0.3, 4 ± 0.4]]"
    assert str(Estimate(np.array(0.5), np.array(0.01))) == "0.5 ± 0.01"  # 0-d: like a scalar
    assert str(Estimate(np.array([1.0, 2.0]), 0.5)) == "[1 ± 0.5, 2 ± 0.5]"
    assert str(Estimate(np.array([]), np.array([]))) == "[]"


def test_profile_of_a_simulation_prints():
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=20_000,
                      rng=1, grid=[0.0, 1.0])
    x = res.profile([0.0, 1.0])
    text = str(x)
    num = r"\d\.\d+(e-\d+)?"
    assert re.fullmatch(rf"\[{num} ± {num}, {num} ± {num}\]", text), text
    assert text == f"[{x.value[0]:.4g} ± {x.se[0]:.4g}, {x.value[1]:.4g} ± {x.se[1]:.4g}]"
    one = res.profile(0.0)
    assert str(one) == f"{float(one.value):.4g} ± {float(one.se):.4g}"
