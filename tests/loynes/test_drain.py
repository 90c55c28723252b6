"""The drain test (loynes._drain): faces, refusals, its verdicts against known truths.

The truths are independent of the test: condition (3) for JSW (FCFS G/G/S), Theorem 1 and
the growth seen between (11) and (3) for J_{p+1}SW, the per-server loads of a size-interval
map (each server is an M/G/1 queue fed by a thinned Poisson stream), and the exponential
closed form of redundancy's critical rate.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import loynes as ly
import recursions as rc
from loynes import _drain as dr
from loynes._calibration import hand_map

E = rc.dists.Exponential


def test_faces_cover_every_pattern_of_empty_servers_per_block():
    m = hand_map("interval", 2, 1.0)  # blocks [1, 1]
    faces = dr._faces(m, np.random.default_rng(0))
    assert sorted(faces) == [(0, 0), (0, 1), (1, 0)]  # never all empty
    faces = dr._faces(rc.JSW(5), np.random.default_rng(0))
    assert faces == [(0,), (1,), (2,), (3,), (4,)]


def test_faces_of_many_blocks_are_never_enumerated():
    # 2**16 patterns for 16 blocks of one server: the required ones (all busy, each block
    # empty alone, each busy alone) and no product built
    m = rc.Map(rc.maps.jsw, servers=16, blocks=[1] * 16)
    faces = dr._faces(m, np.random.default_rng(0))
    assert len(faces) == 1 + 16 + 16 == len(set(faces))
    assert (0,) * 16 in faces and (1,) + (0,) * 15 in faces and (0,) + (1,) * 15 in faces
    m = rc.Map(rc.maps.jsw, servers=6, blocks=[2, 2, 2])  # 27 patterns: a subset of 24
    faces = dr._faces(m, np.random.default_rng(0))
    assert len(faces) == dr.MAX_FACES == len(set(faces)) and (2, 2, 2) not in faces


def test_faces_of_a_large_system_keep_the_extremes():
    faces = dr._faces(rc.JSW(200), np.random.default_rng(0))
    assert len(faces) <= dr.MAX_FACES
    assert {(0,), (1,), (199,), (100,)} <= set(faces)
    assert (200,) not in faces


def test_starts_put_the_busy_servers_at_the_level_within_each_block():
    m = hand_map("interval", 2, 1.0)
    w = dr._start(m, (1, 0), "flat", 50.0, np.random.default_rng(0))
    assert w.tolist() == [0.0, 50.0]
    w = dr._start(rc.JSW(4), (1,), "spread", 30.0, np.random.default_rng(0))
    assert w.tolist() == [0.0, 10.0, 20.0, 30.0]


@pytest.mark.parametrize(("system", "inp", "why"), [
    (rc.JSW(2), rc.Periodic([1.0, 2.0], [1.0, 1.0]), "not i.i.d."),
    (rc.JSW(2), rc.Poisson(1.0, rc.dists.Lomax(1.8, mean=1.0)), "infinite variance"),
    (rc.JSQ(3), rc.Poisson(1.0, E(1.0)), "queue lengths"),
    (rc.JSW(2), rc.Renewal(rc.dists.Deterministic(1.0), E(1.0)), "interarrival law is bounded"),
    (rc.Redundancy(4, [rc.JobClass(d=2, k=1, size=rc.dists.Lomax(1.5, mean=1.0))]),
     rc.Redundancy(4, [rc.JobClass(d=2, k=1, size=E(1.0))]).poisson(1.0),
     "infinite variance"),  # the system's own laws count
    (rc.Map(rc.maps.jsw, servers=20, blocks=[1] * 20), rc.Poisson(1.0, E(1.0)), "blocks"),
])
def test_refused_where_the_criterion_says_nothing(system, inp, why):
    res = ly.drain_test(system, inp)
    assert res.drains is None and why in res.refused and res.directions == []
    assert why in str(res)


def test_stable_fcfs_drains_from_every_face():
    # (3) holds: FCFS M/M/3 at load 0.8 is stable (Kiefer-Wolfowitz)
    res = ly.drain_test(rc.JSW(3), rc.Poisson(2.4, E(1.0)), steps=2**12, rng=1)
    assert res.drains is True
    assert all(d.verdict == "drains" for d in res.directions)
    assert len({d.empty for d in res.directions}) == 3
    assert res.level == pytest.approx(res.alpha / len(res.directions))
    assert "drains from all" in str(res)


def test_overloaded_fcfs_does_not_drain():
    res = ly.drain_test(rc.JSW(3), rc.Poisson(3.3, E(1.0)), steps=2**12, rng=1)
    assert res.drains is False
    # the fluid grows at (3.3 - 3) = 0.3 per unit time once every server is busy
    worst = res.worst
    assert worst is not None and worst.drain < 0


def test_jpsw_between_11_and_3_drains_only_from_busy_faces():
    # load 0.98 on 4 servers, above (11) = 0.948 (growth seen; the conjectured truth is
    # unstable): the all-busy faces drain at about 4 - 3.92, the face with an idle server
    # (the loss system's overflow exceeds 3 servers' capacity) does not
    res = ly.drain_test(rc.JpSW(4, 1), rc.Poisson(3.92, E(1.0)), rng=2)
    assert res.drains is False
    by_face = {d.empty: d for d in res.directions if d.shape == "flat"}
    assert by_face[(1,)].verdict == "does not drain"
    assert by_face[(0,)].drain > 0  # without the faces the test would have been fooled


def test_size_interval_map_with_one_overloaded_class_does_not_drain():
    # jobs above 1 go to server 2: its load is 1.4 e^-1 (1 + 1) = 1.03 > 1 (total 0.7)
    m = hand_map("interval", 2, 1.0)
    res = ly.drain_test(m, rc.Poisson(1.4, E(1.0)), steps=2**13, rng=3)
    assert res.drains is False
    flat = {d.empty: d for d in res.directions if d.shape == "flat"}
    assert flat[(1, 0)].verdict == "does not drain"


def test_redundancy_above_its_critical_rate_does_not_drain():
    system = rc.Redundancy(4, [rc.JobClass(d=2, k=1, size=E(1.0))])  # critical rate 1
    res = ly.drain_test(system, system.poisson(4 * 1.05), steps=2**12, rng=4)
    assert res.drains is False
    res = ly.drain_test(system, system.poisson(4 * 0.7), steps=2**12, rng=4)
    assert res.drains is True


def test_check_stability_says_stable_for_a_draining_map_on_the_drain_basis():
    m = hand_map("threshold", 4, 2.0)
    rep = ly.check_stability(m, rc.Poisson(2.8, E(1.0)), rng=5)  # load 0.7, (3) holds
    assert (rep.verdict, rep.decided_by.name, rep.decided_by.kind) == ("stable", "drain",
                                                                       "test")
    assert rep.decided_by.error == rep.alpha
    assert "drain" in rep.evidence["drain test"]


def test_a_map_beyond_3_is_never_stable_and_says_what_would_decide():
    m = hand_map("threshold", 4, 2.0)  # capacity not declared: (3) cannot decide
    for seed in range(3):
        rep = ly.check_stability(m, rc.Poisson(4.04, E(1.0)), rng=seed)
        assert rep.verdict != "stable"
        if rep.verdict == "undecided":
            assert "capacity" in rep.suggested and "drain" in rep.suggested


def test_periodic_input_is_refused_by_the_drain_test_with_the_reason():
    m = hand_map("jpsw", 2, 1.0)
    rep = ly.check_stability(m, rc.Periodic([0.5, 1.0, 0.2], [1.0, 1.0, 1.0]), rng=1)
    assert rep.verdict == "undecided"
    assert "not i.i.d." in rep.suggested["drain"]


def test_undecided_growth_advice_names_the_resolution_of_the_budget():
    from loynes._checks import Check, growth_budget

    chk = Check(rc.JSW(2), rc.Poisson(1.0, E(1.0)), 2**16, 2**16, 8, 1e-3, iter([]))
    chk.evidence.update({"growth per customer": -0.01, "growth per customer se": 0.004})
    advice = growth_budget(chk)["growth"]
    # (t quantile at 1e-3 with 7 df, 4.785, + 1.64) x 0.004 = 0.0257
    assert "no growth seen" in advice and "0.026 per customer" in advice


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError, match="margin"):
        ly.drain_test(rc.JSW(2), rc.Poisson(1.0, E(1.0)), margin=0.0)
    with pytest.raises(ValueError, match="replications"):
        ly.drain_test(rc.JSW(2), rc.Poisson(1.0, E(1.0)), replications=2)
    assert math.isnan(ly.drain_test(rc.JSQ(2), rc.Poisson(1.0, E(1.0))).level)
