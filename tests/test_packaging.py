"""The Makefile's cleaning targets and the packaging metadata."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _tree(tmp_path: Path) -> dict[str, Path]:
    """A copy of the Makefile beside fake numba caches, in the tree and in a fake .venv."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    files = {
        "nbi": tmp_path / "recursions" / "__pycache__" / "maps._kw-12.py311.1.nbi",
        "nbc": tmp_path / "recursions" / "__pycache__" / "maps._kw-12.py311.nbc",
        "nested": tmp_path / "loynes" / "sub" / "__pycache__" / "x.py311.nbc",
        "pyc": tmp_path / "recursions" / "__pycache__" / "maps.cpython-311.pyc",
        "source": tmp_path / "recursions" / "maps.py",
        "venv_nbi": tmp_path / ".venv" / "lib" / "numba" / "__pycache__" / "y.py311.nbi",
        "venv_python": tmp_path / ".venv" / "bin" / "python",
        "demo": tmp_path / "demo_output" / "report.txt",
        "pytest_cache": tmp_path / ".pytest_cache" / "README.md",
        "hypothesis": tmp_path / ".hypothesis" / "examples" / "x",
        "drivers": tmp_path / "drivers-cache" / "drivers_0123.py",  # the compiled drivers
    }
    for f in files.values():
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("x")
    return files


def _make(tmp_path: Path, target: str) -> subprocess.CompletedProcess:
    make = shutil.which("make")
    if make is None:  # pragma: no cover - make is on every machine the project uses
        pytest.skip("make is not installed")
    env = dict(os.environ, QUEUE_RECURSIONS_CACHE=str(tmp_path / "drivers-cache"))
    return subprocess.run([make, "--no-print-directory", target], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_make_clean_cache_removes_numba_caches_but_not_the_venv(tmp_path):
    files = _tree(tmp_path)
    res = _make(tmp_path, "clean-cache")
    assert res.returncode == 0, res.stderr
    for key in ("nbi", "nbc", "nested", "drivers"):
        assert not files[key].exists(), key
    for key in ("pyc", "source", "venv_nbi", "venv_python", "demo", "pytest_cache",
                "hypothesis"):
        assert files[key].exists(), key
    assert "maps._kw-12.py311.nbc" in res.stdout  # it says what it removed


def test_make_clean_removes_venv_outputs_and_caches(tmp_path):
    files = _tree(tmp_path)
    res = _make(tmp_path, "clean")
    assert res.returncode == 0, res.stderr
    for name in (".venv", "demo_output", ".pytest_cache", ".hypothesis"):
        assert not (tmp_path / name).exists(), name
    for key in ("nbi", "nbc", "nested"):
        assert not files[key].exists(), key
    assert files["source"].exists() and (tmp_path / "Makefile").exists()
    assert _make(tmp_path, "clean").returncode == 0  # and again, with nothing left to clean


def test_pyproject_license_is_an_spdx_string():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "BSD-3-Clause"
    # setuptools reads a license expression from 77 on
    assert meta["build-system"]["requires"] == ["setuptools>=77"]
    assert not any(c.startswith("License ::") for c in meta["project"].get("classifiers", []))
