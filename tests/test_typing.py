"""The typed API: py.typed ships, and every public function and method is fully annotated.

mypy (``make lint``, ``make test``) checks the bodies; modules with numba kernels may leave
kernels and private helpers unannotated (pyproject.toml), so this test checks the public layer
of every module alike.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import coupling
import loynes
import recursions

PACKAGES = (recursions, coupling, loynes)


def _public_callables():
    seen = set()
    for pkg in PACKAGES:
        for name in pkg.__all__:
            obj = getattr(pkg, name)
            if inspect.isfunction(obj):
                yield f"{pkg.__name__}.{name}", obj
            elif inspect.isclass(obj) and obj.__module__.split(".")[0] == pkg.__name__:
                if obj in seen:
                    continue
                seen.add(obj)
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr not in ("__init__", "__call__"):
                        continue
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    if isinstance(member, property):
                        member = member.fget
                    if inspect.isfunction(member) and member.__qualname__.startswith(
                        obj.__qualname__
                    ):
                        yield f"{pkg.__name__}.{name}.{attr}", member


def _missing(fn) -> list[str]:
    ann = fn.__annotations__
    sig = inspect.signature(fn)
    missing = [
        p
        for i, p in enumerate(sig.parameters)
        if p not in ann and not (i == 0 and p in ("self", "cls"))
    ]
    if "return" not in ann and fn.__name__ != "__init__":
        missing.append("return")
    return missing


def test_py_typed_markers_ship():
    for pkg in PACKAGES:
        assert (Path(pkg.__file__).parent / "py.typed").is_file(), pkg.__name__


def test_public_layer_is_fully_annotated():
    unannotated = {name: m for name, fn in _public_callables() if (m := _missing(fn))}
    assert not unannotated, unannotated


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.__name__)
def test_public_names_exist(pkg):
    assert all(hasattr(pkg, n) for n in pkg.__all__)
