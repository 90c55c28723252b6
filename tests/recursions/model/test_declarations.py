"""Every built-in system's declarations agree with what its kernel does.

The classes are found, not listed: every subclass of ``rc.System`` defined in ``recursions``
(the queue-length policies of ``recursions.model._queue_policies`` among them). Each must have small
instances in
``EXAMPLES`` below, and then the declarations are checked against behaviour, so a new
built-in without examples, without a naive twin (``tests/naive.py``) or with a wrong
declaration fails here:

* ``monotone``: ``cp.check_monotone`` finds no counterexample exactly when it is declared;
* the kernel equals its naive twin, returns ``rc.LOST`` exactly when ``has_loss`` (never
  otherwise), and equals JSW when ``fcfs``;
* ``engines``: ``"heap"`` exactly when ``heap_policy`` is set; every declared engine runs and
  ``engine="heap"`` is refused elsewhere;
* ``uniforms``: the kernel passes ``rc.Map``'s contract check with the declared uniforms,
  params and blocks (it reads no more), and fails it with one fewer (it reads them all);
* its family (``loynes._families.family_of``) is one that ``ly.check_stability`` knows, its
  drivers (``recursions.engines.drivers_of``) are compiled for the system's kernel, ``blocks``
  tile the vector, ``load`` is ``E[sigma] / (capacity E[tau])``.

``rc.Map`` is not enumerated: its declarations are its user's (the contract check and
tests/recursions/model/test_user_map.py cover it).
"""

from __future__ import annotations

import importlib
import itertools
import math
import pkgutil
import warnings

import numpy as np
import pytest

import coupling as cp
import recursions as rc
from loynes._checks import FAMILIES
from loynes._families import family_of
from recursions.common.codes import LOST
from recursions.engines import _driver_compiler, drivers_of
from recursions.model._queue_policies import QueuePolicy
from tests import naive

E = rc.dists.Exponential
R = rc.redundancy

EXAMPLES = {
    rc.JSW: [rc.JSW(1), rc.JSW(3)],
    rc.JpSW: [rc.JpSW(3, 0), rc.JpSW(3, 1), rc.JpSW(4, 3)],
    rc.Loss: [rc.Loss(1), rc.Loss(3)],
    rc.RandomRouting: [rc.RandomRouting(3)],
    rc.JIQ: [rc.JIQ(3), rc.JIQ(3, buffer=2)],
    # LeastOfD(S, S) is JSW and reads no uniform: its one declared uniform is drawn unread
    rc.LeastOfD: [rc.LeastOfD(4, 1), rc.LeastOfD(4, 2)],
    rc.Envelope: [rc.Envelope(rc.JpSW(3, 1)), rc.Envelope(rc.JIQ(3)), rc.Envelope(rc.Loss(3)),
                  rc.Envelope(rc.JSW(3)), rc.Envelope(rc.LeastOfD(4, 2)),
                  rc.Envelope(rc.SplitBound(3, 1))],
    rc.SplitBound: [rc.SplitBound(3, 0), rc.SplitBound(3, 1)],
    R.Redundancy: [R.Redundancy(3, [R.JobClass(2, 1, E(1.0))]),
                   R.Redundancy(4, [R.JobClass(3, 2, E(1.0)), R.JobClass(2, 2, E(2.0))],
                                frame=5.0)],
    rc.JSQ: [rc.JSQ(3), rc.JSQ(3, buffer=2)],
    rc.I1F: [rc.I1F(3, buffer=2)],
    rc.PowerOfD: [rc.PowerOfD(4, 2, buffer=3)],
}

def _subclasses(base):
    for info in pkgutil.walk_packages(rc.__path__, "recursions."):
        importlib.import_module(info.name)
    found, stack = set(), [base]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return {c for c in found if c.__module__.split(".")[0] == "recursions"}


def test_every_builtin_class_has_examples():
    systems = _subclasses(rc.System) - {rc.Map, QueuePolicy}  # QueuePolicy: a base class
    assert systems, "no system classes found"
    assert _subclasses(QueuePolicy) <= systems  # queue-length policies are systems
    missing = {c.__name__ for c in systems} - {c.__name__ for c in EXAMPLES}
    assert not missing, f"add small instances of {sorted(missing)} to EXAMPLES"
    for cls, instances in EXAMPLES.items():
        assert instances and all(type(x) is cls for x in instances), cls


def test_every_kernel_has_the_user_signature_and_is_in_maps():
    # a built-in map is one class naming one kernel of recursions.model.maps (and its naive twin)
    gen = np.random.default_rng(0)
    for system in ALL:
        if "dense" not in system.engines:
            continue
        kernel = system.kernel
        assert getattr(rc.maps, kernel.__name__) is kernel, kernel
        for _ in range(20):
            w, sigma, tau, u = _case(gen, system)
            a, b = w.copy(), w.copy()
            fa = kernel(a, sigma, tau, u, system.params)
            got, fb = drivers_of(system).step_once(system.params, b, sigma, tau, u)
            np.testing.assert_array_equal(a, got)
            assert fa == fb


ALL = [x for instances in EXAMPLES.values() for x in instances]
DENSE = [x for x in ALL if "dense" in x.engines]


def _input(system, load=0.5):
    if isinstance(system, R.Redundancy):
        return system.poisson(0.5)
    return rc.Poisson(load * system.servers, E(1.0))


def _state(gen, system):
    scale = float(gen.choice([1e-6, 1.0, 5.0]))
    w = gen.exponential(scale, system.servers)
    w[gen.random(system.servers) < 0.3] = 0.0
    if system.servers > 1 and gen.random() < 0.3:  # ties
        w[gen.integers(system.servers)] = w[gen.integers(system.servers)]
    for lo, hi in system.blocks:
        w[lo:hi] = np.sort(w[lo:hi])
    return w


def _case(gen, system):
    w = _state(gen, system)
    sigma = float(gen.choice([0.0, gen.exponential(1.0), gen.exponential(5.0)]))
    tau = float(gen.choice([0.0, gen.exponential(0.5), gen.exponential(5.0)]))
    if isinstance(system, R.Redundancy):
        u = system.random_innovations(gen, 1)[0]
    else:
        u = gen.random(max(system.uniforms, 1))
    return w, sigma, tau, u


# -- monotone --------------------------------------------------------------------------------
@pytest.mark.parametrize("system", DENSE, ids=repr)
def test_declared_monotone_iff_no_counterexample(system):
    rep = cp.check_monotone(system, trials=3000, rng=1)
    assert rep.monotone == system.monotone, str(rep)


# -- the kernel against its naive twin ----------------------------------------------------------
@pytest.mark.parametrize("system", DENSE, ids=repr)
def test_kernel_equals_naive_twin_and_declares_loss_and_fcfs(system):
    name, params = naive.describe(system)
    gen = np.random.default_rng(7)
    lost = 0
    for _ in range(300):
        w, sigma, tau, u = _case(gen, system)
        uu = u if system.uniforms else None
        got = system.step(w, sigma, tau, uu)
        _, found = drivers_of(system).step_once(system.params, w, sigma, tau, u)
        want, want_found = naive.apply(name, params, w.tolist(), sigma, tau, list(u))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert found == pytest.approx(want_found, rel=1e-12, abs=1e-12)
        assert found >= 0 or found == LOST
        lost += found == LOST
        if system.fcfs:
            jsw, jsw_found = naive.jsw(w.tolist(), sigma, tau)
            np.testing.assert_allclose(got, jsw, rtol=1e-12, atol=1e-12)
            assert found == pytest.approx(jsw_found, rel=1e-12, abs=1e-12)
    assert (lost > 0) == system.has_loss, f"{lost} of 300 customers lost"


# -- engines -------------------------------------------------------------------------------------
def _run(system, inp, **kw):
    with warnings.catch_warnings():  # short runs: the batch check may speak
        warnings.simplefilter("ignore", rc.SimulationWarning)
        return rc.simulate(system, inp, steps=400, rng=2, **kw)


@pytest.mark.parametrize("system", ALL, ids=repr)
def test_engines_and_heap_policy(system):
    engines = system.engines
    policy = getattr(system, "heap_policy", None)
    assert ("heap" in engines) == (policy is not None)
    assert set(engines) <= {"dense", "heap", "queues", "counts"}
    assert ("dense" in engines) != ("queues" in engines)  # a map or a queue-length system
    if "queues" in engines:  # what the queue-length engines read is declared
        code, buffer, d = system.queue_policy
        assert isinstance(code, rc.codes.QueueCode) and buffer >= 0 and 1 <= d <= system.servers
    elif not isinstance(system, rc.JIQ):  # JIQ without a buffer runs on both kinds
        assert system.queue_policy is None
    inp = _input(system)
    for engine in engines:
        assert _run(system, inp, engine=engine).engine == engine
    if "heap" not in engines:
        with pytest.raises(ValueError, match="heap"):
            _run(system, inp, engine="heap")


# -- uniforms, params, blocks: the contract check of rc.Map --------------------------------
def _as_map(system, uniforms):
    sizes = [hi - lo for lo, hi in system.blocks if hi > lo]
    params = system.params  # Redundancy's "no frame" is frame = inf
    return rc.Map(system.kernel, servers=system.servers, uniforms=uniforms,
                  params=params, blocks=sizes, loss=system.has_loss,
                  monotone=system.monotone, name=repr(system), check=False)


@pytest.mark.parametrize("system", DENSE, ids=repr)
def test_declared_uniforms_are_what_the_kernel_reads(system):
    assert _as_map(system, system.uniforms).check_contract(samples=500, rng=3) == 500
    if system.uniforms:
        with pytest.raises(rc.MapContractError, match="reads more than"):
            _as_map(system, system.uniforms - 1).check_contract(samples=500, rng=3)
    u = system.innovations(np.random.default_rng(4), 5)
    assert u.shape == (5, system.uniforms)


# -- the rest ------------------------------------------------------------------------------------
@pytest.mark.parametrize("system", ALL, ids=repr)
def test_other_declarations(system):
    assert family_of(system) in FAMILIES
    if "dense" in system.engines:
        assert drivers_of(system) is _driver_compiler.compiled_drivers(system.kernel)[0]
    else:  # a queue-length system (a buffered JIQ) has no workload map to iterate
        with pytest.raises(ValueError, match="not a map on workload vectors"):
            drivers_of(system)
    blocks = system.blocks
    assert blocks[0][0] == 0 and blocks[-1][1] == system.servers
    assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
    assert system.capacity == system.servers  # unit-speed servers
    inp = _input(system)
    rho = system.load(inp)
    if rho is not None:
        assert math.isclose(rho, inp.mean_service / (system.capacity * inp.mean_interarrival))
    if system.monotone and system.fcfs:  # a certificate needs exactly the FCFS map
        assert family_of(system) == "load"
