"""The conventions of the README's table hold across the three packages.

``rng=`` is keyword-only with the default 1 and the annotation ``RngLike``; argument checks
word their errors alike; server counts are called ``servers``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import numpy as np
import pytest

import coupling
import loynes
import recursions
from recursions.common import RngLike, check_int, check_points, check_positive, check_real

# modules owned by the laws' refactoring (their rng is a Generator argument or not yet moved)
_ELSEWHERE = ("recursions.dists", "recursions.zerowait", "recursions.engines.zerowait")
# the plumbing that turns an ``rng=`` value into a seed sequence takes it as its first argument
_CONVERTS_RNG = ("as_seed_sequence",)


def _public_modules():
    """The three packages and every module of theirs whose dotted name has no private part."""
    for pkg in (recursions, coupling, loynes):
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if any(part.startswith("_") for part in info.name.split(".")) \
                    or info.name.startswith(_ELSEWHERE):
                continue  # private modules (and __main__, which runs the command line)
            yield importlib.import_module(info.name)


def _public_callables():
    # the public API: what each public module exports (its __all__, else its public names),
    # wherever the object is defined; each object once
    seen: set[int] = set()
    for mod in _public_modules():
        names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        for name in names:
            obj = getattr(mod, name)
            if id(obj) in seen or name in _CONVERTS_RNG \
                    or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            seen.add(id(obj))
            if inspect.isfunction(obj):
                yield f"{mod.__name__}.{name}", obj
            else:
                for attr, f in vars(obj).items():
                    if (attr == "__init__" or not attr.startswith("_")) \
                            and inspect.isfunction(f):
                        yield f"{mod.__name__}.{name}.{attr}", f


def _with_param(param):
    out = []
    for qual, f in _public_callables():
        try:
            sig = inspect.signature(f)
        except (TypeError, ValueError):  # pragma: no cover - builtins
            continue
        if param in sig.parameters:
            out.append((qual, sig.parameters[param]))
    return out


RNG_PARAMS = _with_param("rng")


def test_the_scan_finds_the_seeded_api():
    names = {q.rsplit(".", 1)[-1] for q, _ in RNG_PARAMS}
    assert {"simulate", "loynes", "check_stability", "perfect_sample", "coupling_time",
            "check_monotone", "sweep", "stability_map", "redundancy_fixed_point"} <= names


@pytest.mark.parametrize(("qual", "param"), RNG_PARAMS, ids=[q for q, _ in RNG_PARAMS])
def test_rng_is_keyword_only_with_one_default(qual, param):
    assert param.kind is inspect.Parameter.KEYWORD_ONLY, f"{qual}: rng must be keyword-only"
    assert param.default == 1, f"{qual}: rng defaults to {param.default!r}, not 1"
    assert param.annotation in ("RngLike", RngLike), f"{qual}: annotate rng with RngLike"


def test_no_server_count_is_called_c_or_s():
    bad = [f"{q}({p.name})" for q, p in _with_param("c") + _with_param("S")]
    assert not bad, f"call a server count 'servers': {bad}"


def test_rng_like_is_a_real_type():
    assert RngLike == int | np.random.Generator | np.random.SeedSequence | None


@pytest.mark.parametrize(
    ("call", "exc", "message"),
    [
        (lambda: check_int(2.5, "servers", 1), TypeError, "servers must be an integer, got float"),
        (lambda: check_int(True, "servers", 1), TypeError, "servers must be an integer, got bool"),
        (lambda: check_int(0, "servers", 1), ValueError, "servers must be an integer >= 1, got 0"),
        (lambda: check_int(5, "p", 0, 3), ValueError, r"p must be an integer in \[0, 3\], got 5"),
        (lambda: check_int(5, "k", hi=3), ValueError, "k must be an integer <= 3, got 5"),
        (lambda: check_positive(0.0, "rate"), ValueError,
         "rate must be a finite number > 0, got 0.0"),
        (lambda: check_positive(float("inf"), "rate"), ValueError, "finite number > 0"),
        (lambda: check_positive(float("nan"), "rate"), ValueError, "finite number > 0"),
        (lambda: check_positive("2", "rate"), TypeError, "rate must be a real number, got str"),
        (lambda: check_positive(True, "rate"), TypeError, "got bool"),
        (lambda: check_real(0.5, "alpha", 0.0, 0.5, open_lo=True, open_hi=True), ValueError,
         r"alpha must be a finite number in \(0, 0.5\)"),
        (lambda: check_real(-1.0, "tol", 0.0, finite=False), ValueError,
         "tol must be a number >= 0"),
        (lambda: check_points([1.0, -1.0], "w"), ValueError, "w must be >= 0"),
        (lambda: check_points("a", "w"), TypeError, "w must be a real number or an array"),
    ],
)
def test_one_wording_for_bad_arguments(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


def test_checks_accept_numpy_scalars():
    assert check_int(np.int64(3), "n", 0) == 3
    assert check_positive(np.float32(0.5), "x") == 0.5
    assert check_positive(np.array(2.0), "x") == 2.0
    assert check_real(float("inf"), "frame", 0.0, open_lo=True, finite=False) == float("inf")


@pytest.mark.parametrize(
    "call",
    [
        lambda: recursions.simulate(recursions.JSW(2), recursions.Poisson(
            1.0, recursions.dists.Exponential(1.0)), steps=0),
        lambda: loynes.check_stability(recursions.JSW(2), recursions.Poisson(
            1.0, recursions.dists.Exponential(1.0)), steps=0),
        lambda: coupling.check_monotone(recursions.JSW(2), trials=0),
        lambda: loynes.erlang_b(-1, 1.0),
    ],
    ids=["recursions", "loynes", "coupling", "closed-forms"],
)
def test_the_three_packages_word_a_bad_count_alike(call):
    with pytest.raises(ValueError, match=r"^\w+ must be an integer >= \d+, got -?\d+$"):
        call()


# -- no hidden seeds ---------------------------------------------------------------------------


def test_the_searches_behind_dominated_by_follow_rng(monkeypatch):
    import coupling._monotone as mono

    seen = []
    real = mono.check_monotone

    def spy(system, trials=10_000, *, rng=1):
        seen.append(rng)
        return real(system, trials, rng=rng)

    monkeypatch.setattr(mono, "check_monotone", spy)
    user = recursions.Map(recursions.model.maps.jsw, servers=2, monotone=True)
    inp = recursions.Poisson(1.0, recursions.dists.Exponential(1.0))
    for seed in (1, 1, 2):
        coupling.perfect_sample(user, inp, 1, rng=seed, dominated_by=recursions.JSW(2),
                                dominance_trials=50)
    assert all(isinstance(s, np.random.SeedSequence) for s in seen)
    states = [s.generate_state(2).tolist() for s in seen]
    assert states[0] == states[1] != states[2]  # one rng, one search; no fixed seed


def test_monte_carlo_inside_the_api_takes_rng_and_reports_its_error():
    cls = recursions.JobClass(3, 2, recursions.dists.Deterministic(1.0))
    fp = loynes.redundancy_fixed_point(cls, 0.3, rng=5, balance_samples=2000)
    assert isinstance(fp.work_balance, recursions.Estimate) and fp.work_balance.se > 0
    joint = recursions.JobClass(2, 1, joint=lambda g, n: g.exponential(1.0, (n, 2)), rng=5)
    assert joint.mean_size_se > 0


# -- module names ------------------------------------------------------------------------------


def test_no_module_name_is_shared_by_two_packages():
    seen: dict[str, str] = {}
    for pkg in (recursions, coupling, loynes):
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.startswith("_"):
                continue
            assert info.name not in seen, (f"{pkg.__name__}.{info.name} and "
                                           f"{seen[info.name]}.{info.name} share a name")
            seen[info.name] = pkg.__name__


def test_renamed_modules_keep_the_public_names():
    from loynes import _redundancy_theory as redundancy_theory
    from loynes import _sequence as sequence
    from loynes import _stability_maps as stability_maps

    assert loynes.loynes is sequence.loynes and loynes.LoynesResult is sequence.LoynesResult
    assert loynes.stability_map is stability_maps.stability_map
    assert loynes.redundancy_fixed_point is redundancy_theory.redundancy_fixed_point
    for old in ("maps", "backward", "redundancy"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"loynes.{old}")


def test_no_module_imports_another_modules_private_names():
    # ruff's PLC2701 keeps private names from crossing packages; within a package a private
    # helper used by a second module is shared, so it gets a public name (modules whose own
    # name is private, like recursions.engines._accumulator, may be imported whole)
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found = []
    for pkg in ("recursions", "coupling", "loynes"):
        for path in sorted((root / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.level or (
                        node.module or "").split(".")[0] in ("recursions", "coupling", "loynes")):
                    found += [f"{path.relative_to(root)}: {a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")
                              and not _is_private_module(path, node, a.name)]
    assert found == []


def _is_private_module(path, node, name):
    from pathlib import Path

    base = path.parent
    for _ in range(max(node.level - 1, 0)):
        base = base.parent
    if node.level == 0:
        base = Path(__file__).resolve().parents[1]
    parts = [] if not node.module else node.module.split(".")
    target = base.joinpath(*parts, name)
    return target.with_suffix(".py").exists() or target.is_dir()


# -- the public surface ------------------------------------------------------------------------


def test_the_public_module_surface_is_at_most_twice_the_packages_exports():
    # every module whose dotted name has no private part is public: what it exports is promised
    own = sum(len(pkg.__all__) for pkg in (recursions, coupling, loynes))
    modules = [m for m in _public_modules() if m not in (recursions, coupling, loynes)]
    surface = sum(len(getattr(m, "__all__", ())) for m in modules)
    assert surface <= 2 * own, (surface, own)


def test_the_top_of_recursions_keeps_to_about_fifteen_modules():
    found = [info.name for info in pkgutil.iter_modules(recursions.__path__)]
    assert len(found) <= 15, found


def test_a_subpackage_face_exports_what_the_package_does_not():
    # a name exported twice would be documented twice; the faces hold what the other
    # packages use of a subpackage beyond the package's own exports
    for name in ("model", "engines", "inference", "results", "common"):
        face = importlib.import_module(f"recursions.{name}")
        assert face.__all__, name
        assert not set(face.__all__) & set(recursions.__all__), name
        for export in face.__all__:
            assert getattr(face, export) is not None, (name, export)


def test_the_api_reference_lists_the_public_modules():
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs" / "api"
    for pkg in (recursions, coupling, loynes):
        page = (docs / f"{pkg.__name__}.rst").read_text()
        listed = set(re.findall(r"^   ([a-z_][a-z0-9_]*)$", page, flags=re.M))
        public = {info.name for info in pkgutil.iter_modules(pkg.__path__)
                  if not info.name.startswith("_")}
        assert public <= listed, (pkg.__name__, sorted(public - listed))
