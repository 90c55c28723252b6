"""The branch-free join-and-drain pass of the drawing drivers against the insertion loop.

``recursions.engines._driver_template.insert_drain`` writes ``(R(w with w[r] + sigma) - tau)^+``
into a second buffer as selects over ``w[i]`` and ``w[i+1]``; the drivers of the kernels in
``recursions.model.maps.RANKED`` use it at 2 to 32 servers. It must give the numbers of the naive
twin's join (``sorted``) and drain exactly, ties and idle servers included.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recursions as rc
from recursions.engines import _driver_compiler as drivers
from recursions.engines import _driver_template as _engine
from recursions.engines import drivers_of
from recursions.model import maps as maps
from tests import naive


def _case(values, r, sigma, tau):
    w = np.sort(np.asarray(values, dtype=np.float64))
    r = min(r, w.size - 1)
    out = np.empty_like(w)
    _engine.insert_drain(w, out, r, w[r] + sigma, tau)
    v, _ = naive._join(w, r, sigma)
    return out, np.asarray(naive._drain(v, tau))


# values on a coarse grid, so that ties, zeros and sigma = 0 are common
coarse = st.integers(0, 6).map(lambda k: k / 2.0)


@settings(max_examples=400, deadline=None)
@given(st.lists(coarse, min_size=1, max_size=40), st.integers(0, 39), coarse, coarse)
def test_insert_drain_is_the_join_then_the_drain(values, r, sigma, tau):
    got, want = _case(values, r, sigma, tau)
    np.testing.assert_array_equal(got, want)


def test_insert_drain_at_every_rank_of_random_vectors():
    gen = np.random.default_rng(5)
    for s in (1, 2, 3, 7, 16, 33):
        for _ in range(50):
            values = gen.exponential(1.0, s) * (gen.random(s) < 0.7)
            for r in range(s):
                got, want = _case(values, r, gen.exponential(), gen.exponential(0.3))
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("servers", "expected"), [(1, False), (2, True), (32, True),
                                                   (33, False)])
def test_the_pass_is_used_from_2_to_32_servers_of_ranked_kernels(servers, expected):
    assert drivers.uses_one_pass(maps.jsw, servers) is expected
    assert drivers.uses_one_pass(maps.split, servers) is False  # its join is blockwise
    assert drivers.uses_one_pass(maps.envelope, servers) is False


def test_every_ranked_kernel_is_its_rank_join_then_the_drain():
    # kernel(w, ...) == add_at_rank(w, 0, S, rank(w, u, params), sigma) + drain, rank -1 lost
    from recursions.vectors import add_at_rank, drain

    gen = np.random.default_rng(8)
    params = {maps.jpsw: np.array([2.0]), maps.least_of_d: np.array([2.0])}
    for kernel, rank in maps.RANKED.items():
        par = params.get(kernel, np.zeros(1))
        for _ in range(200):
            w = np.sort(gen.exponential(1.0, 5) * (gen.random(5) < 0.6))
            u = gen.random(1)
            sigma, tau = gen.exponential(), gen.exponential(0.4)
            a, b = w.copy(), w.copy()
            found = kernel(a, sigma, tau, u, par)
            r = rank(b, u, par)
            if r < 0:
                assert found == rc.LOST
            else:
                assert found == add_at_rank(b, 0, b.size, r, sigma)
            drain(b, tau)
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("system", [rc.JSW(10), rc.JpSW(5, 2), rc.JIQ(8), rc.Loss(4),
                                    rc.RandomRouting(6), rc.LeastOfD(6, 2), rc.JSW(32)],
                         ids=repr)
def test_backward_runs_in_one_pass_store_and_meet_the_kernels_states(system):
    # run_checked (backward sequences) joins ranked kernels in one pass at 2 to 32 servers:
    # the states it stores at the checkpoints and at the end are the kernel's, step by step
    S = system.servers
    assert drivers.uses_one_pass(system.kernel, S)  # inside the one-pass range
    mod, params = drivers_of(system), system.params
    assert mod.RANKED  # run_checked takes the one pass
    gen = np.random.default_rng(S)
    n, every = 1000, 7
    sig = gen.exponential(1.0, n)
    tau = gen.exponential(1.0 / (0.9 * S), n)
    U = system.innovations(gen, n)
    ck = np.full((n // every + 1, S), np.nan)
    w = np.zeros(S)
    assert mod.run_checked(params, w, sig, tau, U, every, ck, -1, True) == -1
    v = np.zeros(S)
    for k in range(n):
        if (n - k) % every == 0:
            np.testing.assert_array_equal(ck[(n - k) // every], v)
        v, _ = mod.step_once(params, v, sig[k], tau[k], U[k])
    np.testing.assert_array_equal(w, v)
    # from the same start it meets the stored run at the first checkpoint it may compare,
    # and stops there with that state
    for jref in (n, n // 2):
        w = np.zeros(S)
        met = jref - jref % every
        assert mod.run_checked(params, w, sig, tau, U, every, ck, jref, False) == met
        np.testing.assert_array_equal(w, ck[met // every])
    # from the state stored at a checkpoint, the rest of the window from there meets the
    # stored run at the next checkpoint it may compare (one later)
    j = every * (n // (2 * every))
    w = ck[j // every].copy()
    rest = slice(n - j, n)
    got = mod.run_checked(params, w, sig[rest], tau[rest], U[rest], every, ck, j - every, False)
    assert got == j - every
    np.testing.assert_array_equal(w, ck[got // every])
