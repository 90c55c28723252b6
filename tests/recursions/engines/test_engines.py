"""The engine protocol under ``rc.simulate``: the registry, the choice, the plan, the front.

The numbers themselves are guarded elsewhere (the naive twins, ``test_in_kernel_draws.py``,
``test_zerowait.py``, the calibration); here the seams: every declared engine is registered,
``"auto"`` chooses as documented, refusals name their reason, a new engine is one class plus
one ``register`` line, and ``simulate`` stays a short front.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import recursions as rc
from recursions.engines._registry import ENGINES, choose, planned, register
from recursions.engines._run_plan import RunPlan, Simulable, make_plan
from recursions.engines._workload_engines import HEAP_MIN_SERVERS

E = rc.dists.Exponential
MM = rc.Poisson(2.0, E(1.0))
ROOT = Path(__file__).resolve().parents[3]
NEW = ["engines/_run_plan", "engines/_registry", "engines/_chunk_loop", "engines/_workload_engines",
       "results/_workload_result", "inference/_run_modes", "inference/_stages",
       "inference/_precision"]
kd = importlib.import_module("recursions.engines._in_kernel_draws")
sim = importlib.import_module("recursions._simulate")  # the module (rc.simulate is the function)


def test_the_five_engines_are_registered_with_the_protocol():
    assert {"dense", "heap", "queues", "counts", "phases"} <= set(ENGINES)
    for name, engine in ENGINES.items():
        assert engine.name == name
        assert engine.family in ("workload", "queue-length")
        assert isinstance(engine.keywords, frozenset)
        for method in ("refuses", "preferred", "run"):
            assert callable(getattr(engine, method))
    assert "record" in ENGINES["dense"].keywords and "record" not in ENGINES["heap"].keywords
    assert ENGINES["queues"].keywords == {"progress", "chunk"}  # the chunk loop's own
    # every engine goes on (RunHandle) but the phases engine, whose stages are retraced
    assert [n for n, e in ENGINES.items() if not e.continues] == ["phases"]


@pytest.mark.parametrize("system", [rc.JSW(3), rc.JpSW(3, 1), rc.Loss(2), rc.JIQ(3),
                                    rc.JIQ(3, buffer=2), rc.JSQ(3), rc.I1F(3, buffer=2),
                                    rc.PowerOfD(4, 2, buffer=3), rc.Envelope(rc.JIQ(3)),
                                    rc.redundancy.Redundancy(3, [rc.JobClass(2, 1, E(1.0))])],
                         ids=repr)
def test_every_system_declares_registered_engines_of_one_family(system):
    assert isinstance(system, Simulable)
    families = {ENGINES[name].family for name in system.engines}
    assert len(families) == 1


_REPORTING = [rc.JSW(3), rc.Loss(2), rc.JIQ(3), rc.JIQ(3, buffer=2), rc.JSQ(3),
              rc.PowerOfD(4, 2, buffer=3), rc.Envelope(rc.JIQ(3)),
              rc.redundancy.Redundancy(3, [rc.JobClass(2, 1, E(1.0))]),
              rc.Envelope(rc.redundancy.Redundancy(3, [rc.JobClass(2, 1, E(1.0))]))]


@pytest.mark.parametrize(("system", "engine"),
                         [(s, e) for s in _REPORTING for e in s.engines], ids=repr)
def test_a_system_reports_what_it_declares_it_estimates(system, engine):
    # System.estimates is what statistics= and warmup="auto" are checked against
    input = system.poisson(2.0) if system.finds_response else MM
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        res = rc.simulate(system, input, 2000, engine=engine, rng=3)
    assert set(res.statistics) == set(system.estimates)


def _plan(system, input=MM, **kw):
    kw.setdefault("steps", None if "time" in kw else 1000)
    return make_plan(system, input, **kw)


def test_auto_chooses_as_documented():
    big = rc.JSW(HEAP_MIN_SERVERS)
    assert choose(big, _plan(big)).name == "heap"
    assert choose(big, _plan(big, record=True)).name == "dense"  # the heap keeps no path
    small = rc.JSW(HEAP_MIN_SERVERS - 1)
    assert choose(small, _plan(small)).name == "dense"
    assert choose(small, _plan(small, time=10.0)).name == "heap"
    assert choose(rc.JpSW(40, 1), _plan(rc.JpSW(40, 1))).name == "dense"  # no heap policy
    jsq = rc.JSQ(3, buffer=2)
    assert choose(jsq, _plan(jsq)).name == "counts"  # exponential service has phases
    lognormal = rc.Poisson(2.0, rc.dists.LogNormal(1.0, 1.0))
    assert choose(jsq, _plan(jsq, lognormal)).name == "queues"


@pytest.mark.parametrize(("system", "kw", "match"), [
    (rc.JSW(3), {"engine": "fast"},
     r"engine must be 'auto', 'dense', 'heap' or 'phases', got 'fast'"),
    (rc.JSQ(3), {"engine": "fast"}, r"engine must be 'auto', 'queues' or 'counts'"),
    (rc.JSQ(3), {"engine": "dense"}, r"JSQ is a queue-length system: it runs on engine "
                                     r"'queues' or 'counts', not 'dense'"),
    (rc.JSW(3), {"engine": "counts"}, r"JSW is a workload system"),
    (rc.JpSW(3, 1), {"engine": "heap"}, r"heap engine runs .* not JpSW"),
    (rc.JSW(3), {"engine": "dense", "time": 5.0}, r"time= runs need the heap engine"),
    (rc.JSW(3), {"time": 5.0, "record": True}, r"time= runs need the heap engine"),
    (rc.JSW(3), {"engine": "heap", "record": True}, r"record=True needs the dense engine"),
    (rc.JSQ(3), {"grid": [0.0, 1.0]}, r"do not take grid="),
])
def test_refusals_name_their_reason(system, kw, match):
    with pytest.raises(ValueError, match=match):
        choose(system, _plan(system, **kw))


def test_the_plan_is_validated_once_and_frozen():
    plan = _plan(rc.JSW(2), grid=[0.0, 2.0], profile_every=3, chunk=100, rng=7)
    assert isinstance(plan, RunPlan)
    assert plan.grid.dtype == np.float64 and (plan.batches, plan.merge) == (256, 8)  # 1000 steps
    assert plan.given == ("grid", "profile_every", "chunk")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.steps = 5  # type: ignore[misc]
    with pytest.raises(TypeError, match="recursions system"):
        make_plan("JSW", MM, 10)
    with pytest.raises(ValueError, match="Poisson"):  # a queue-length system's own check_input
        make_plan(rc.JSQ(2), rc.Renewal(rc.dists.Deterministic(1.0), E(1.0)), 10)


def test_the_modes_are_validated_once_into_the_plan(monkeypatch):
    # precision=, warmup="auto" and start= are checked with the rest of the plan, before any
    # arrival is simulated; the stages vary the frozen plan and never validate again
    MM2 = rc.Poisson(1.6, E(1.0))
    plan = make_plan(rc.JSW(2), MM2, precision=0.05, warmup="auto", statistics=["p_wait"])
    assert plan.modes is not None and plan.modes.auto
    assert plan.modes.precision == {"": rc.relative(0.05)}
    assert (plan.steps, plan.batches, plan.warmup, plan.statistics) == (2**14, 256, 0, None)
    assert make_plan(rc.JSW(2), MM2, 10).modes is None
    for kw, match in (({"precision": 0.1, "confidence": 1.5}, "confidence"),
                      ({"steps": 100, "warmup": "later"}, "warmup"),
                      ({"precision": 0.1, "time": 5.0}, "not time="),
                      ({"precision": 0.1, "batches": 8}, "64 batches"),
                      ({"warmup": "auto"}, "steps is required"),
                      ({"steps": 100, "start": "exact"}, "start must be"),
                      ({"steps": 100, "start": "stationary", "warmup": -5}, "warmup"),
                      ({"precision": {}}, "at least one"),
                      ({"precision": {"mean_wait": -0.1}}, "finite half-width > 0"),
                      ({"precision": 0.1, "statistics": ["nope"]}, "not estimated"),
                      ({"steps": 100, "max_steps": 10}, "bound the stages of precision"),
                      ({"steps": 100, "max_seconds": 1.0}, "bound the stages of precision")):
        with pytest.raises(ValueError, match=match):
            make_plan(rc.JSW(2), MM2, **kw)
    with pytest.raises(ValueError, match="plain run"):
        planned(rc.JSW(2), MM2, 1000, warmup="auto")
    # with warmup="auto" a fixed budget keeps MSER's series too: a loss system's is
    # mean_workload, so a grid has a profile to fill even when only p_loss is reported
    loss = rc.simulate(rc.Loss(2), MM2, 2000, warmup="auto", statistics=["p_loss"],
                       grid=[0.0, 1.0], rng=1)
    assert loss.p_loss is not None and loss.mean_workload is None
    with pytest.raises(ValueError, match="keeps only what customers find"):
        rc.simulate(rc.JSW(2), MM2, 2000, warmup="auto", statistics=["p_wait"],
                    grid=[0.0, 1.0], rng=1)
    made = []
    monkeypatch.setattr(sim, "make_plan", lambda *a, **k: made.append(1) or make_plan(*a, **k))
    monkeypatch.setattr(importlib.import_module("recursions.engines._run_plan"), "make_plan", None)
    monkeypatch.setattr(sim.engines, "planned", None)
    res = rc.simulate(rc.JSW(2), MM2, precision=0.02, statistics=["mean_wait"], rng=1)
    assert res.precision.stages >= 2 and made == [1]


def test_the_plan_carries_the_draw_settings_of_the_simulate_module(monkeypatch):
    plan = make_plan(rc.JSW(2), MM, 10, laws=kd.drawn_laws)
    assert plan.laws is not None and plan.laws[0] == int(rc.codes.LawCode.EXPONENTIAL)
    monkeypatch.setattr(kd, "KERNEL_DRAWS", False)
    assert make_plan(rc.JSW(2), MM, 10, laws=kd.drawn_laws).laws is None


@dataclasses.dataclass(frozen=True)
class _Doubled(rc.JSW):
    """A JSW that runs on a toy engine of its own."""

    @property
    def engines(self):
        return ("doubled", "dense")


class _DoubledEngine:
    """A new engine is one class and one register line: it runs the dense engine twice."""

    name = "doubled"
    family = "workload"
    keywords = frozenset({"grid"})

    def refuses(self, system, plan):
        return "doubled runs no time horizon" if plan.time is not None else None

    def preferred(self, system, plan):
        return True

    def run(self, system, plan):
        first = ENGINES["dense"].run(system, plan)
        return dataclasses.replace(first, engine=self.name)


def test_a_new_engine_registers_and_is_chosen(monkeypatch):
    monkeypatch.setitem(ENGINES, "doubled", _DoubledEngine())
    assert register(ENGINES["doubled"]) is ENGINES["doubled"]
    inp = rc.Poisson(1.0, E(1.0))
    res = rc.simulate(_Doubled(2), inp, 2000, rng=3)
    ref = rc.simulate(rc.JSW(2), inp, 2000, rng=3)
    assert res.engine == "doubled" and res.p_wait == ref.p_wait
    # an option the engine does not take, and auto falls back on the next declared engine
    assert rc.simulate(_Doubled(2), inp, 2000, rng=3, profile_every=1).engine == "dense"
    with pytest.raises(ValueError, match="the doubled engine does not take profile_every="):
        rc.simulate(_Doubled(2), inp, 2000, rng=3, profile_every=1, engine="doubled")
    with pytest.raises(ValueError, match="doubled runs no time horizon"):
        rc.simulate(_Doubled(2), inp, time=5.0, rng=3, engine="doubled")


def test_block_and_kernel_draws_agree_on_a_timed_heap_run(monkeypatch):
    kw = {"time": 40.0, "warmup": 500, "rng": 2, "replications": 2, "chunk": 300}
    inp = rc.Poisson(36.0, E(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        a = rc.simulate(rc.JIQ(40), inp, **kw)
        monkeypatch.setattr(kd, "KERNEL_DRAWS", False)
        b = rc.simulate(rc.JIQ(40), inp, **kw)
    np.testing.assert_array_equal(a.final_state, b.final_state)
    assert a.p_wait == b.p_wait and a.mean_workload == b.mean_workload and a.steps == b.steps


def _body_lines(fn) -> int:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    first = node.body[1] if isinstance(node.body[0], ast.Expr) else node.body[0]
    return node.end_lineno - first.lineno + 1


def test_simulate_is_a_short_front():
    assert _body_lines(rc.simulate) <= 50
    assert "getattr(system" not in inspect.getsource(rc.simulate)


def test_no_function_of_the_library_is_long():
    # the new modules' rule, for every module of the three packages (compiled kernels aside)
    for path in sorted(p for pkg in ("recursions", "coupling", "loynes")
                       for p in (ROOT / pkg).rglob("*.py")):
        name = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and not node.name.endswith("_kernel") \
                    and not _compiled(node):
                assert node.end_lineno - node.lineno < 200, (name, node.name)
                assert _lines_without_docstring(node) <= 80, (name, node.name)


def _compiled(node: ast.FunctionDef) -> bool:
    names = {ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
    return bool(names & {"jit", "njit", "numba.njit", "numba.jit"})


def _lines_without_docstring(node: ast.FunctionDef) -> int:
    body = node.body
    doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    first = body[1] if doc and len(body) > 1 else body[0]
    return node.end_lineno - first.lineno + 1


def test_no_private_name_crosses_the_new_modules():
    for name in NEW:
        tree = ast.parse((ROOT / "recursions" / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module \
                    and node.module.startswith("recursions"):
                private = [a.name for a in node.names if a.name.startswith("_")
                           and not node.module.rsplit(".", 1)[-1].startswith("_")
                           and not a.name.startswith("__")
                           and not (ROOT.joinpath(*node.module.split("."), a.name)
                                    .with_suffix(".py").exists())]  # a private module, whole
                assert not private, (name, node.module, private)


@pytest.mark.parametrize("first",
                         [f"recursions.{m.replace('/', '.')}" for m in NEW]
                         + ["recursions.engines.zerowait"])
def test_each_new_module_imports_first_without_a_circle(first):
    code = (f"import importlib; importlib.import_module({first!r}); "
            "import recursions._simulate as s, recursions.engines._registry as e; "
            "assert {'dense', 'heap', 'queues', 'counts'} <= set(e.ENGINES)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("system", [rc.JSQ(3), rc.JIQ(3, buffer=2)], ids=repr)
def test_a_queue_length_system_has_no_start_state_to_draw(system):
    with pytest.raises(ValueError, match=r"not a map .*start state.*leave start= out"):
        rc.simulate(system, MM, 1000, start="stationary")
