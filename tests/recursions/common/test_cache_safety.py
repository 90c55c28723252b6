"""The on-disk caches cannot be poisoned or stuck (recursions.common._caches,
recursions.engines._driver_compiler).

Each run that reads a cache is a subprocess with its own ``QUEUE_RECURSIONS_CACHE`` and
``NUMBA_CACHE_DIR`` (this process's numba state would hide what a later process does):
planted code in a driver file is not run, folders that others own or can write are refused,
damaged files are rebuilt with a warning, and the caches can be listed and cleared.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numba
import pytest

import recursions as rc
from recursions.common import _caches as _cache

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import json, sys
import recursions as rc
res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=3000, rng=3)
out = {"p_wait": res.p_wait.value, "state": res.final_state.tolist()}
if len(sys.argv) > 1:  # also a map of one's own, from userstep.py
    import userstep
    m = rc.Map(userstep.step, servers=2, name="mine")
    out["map"] = rc.simulate(m, rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=3000,
                             rng=3).p_wait.value
    # one step of the map's own drivers compiles (or loads) the step itself: a short run
    # calls the bounds-checked copy its contract check compiled, which numba does not cache
    out["step"] = m.step([0.0, 1.0], sigma=2.0, tau=0.5).tolist()
print(json.dumps(out))
"""

STEP_MODULE = """
import numba
from recursions.vectors import add_at_rank, drain


@numba.njit(cache=True)
def step(w, sigma, tau, u, params):
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found
"""

is_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="chown to another user needs root")


class Caches:
    """A drivers folder and a numba folder of their own, and the runs that use them."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.drivers = tmp / "drivers"
        self.numba = tmp / "numba"
        (tmp / "script.py").write_text(SCRIPT)
        (tmp / "userstep.py").write_text(STEP_MODULE)

    def env(self) -> dict[str, str]:
        return dict(os.environ, QUEUE_RECURSIONS_CACHE=str(self.drivers),
                    NUMBA_CACHE_DIR=str(self.numba),
                    PYTHONPATH=os.pathsep.join([str(self.tmp), str(ROOT)]))

    def run(self, *args: str) -> tuple[dict, str]:
        out = subprocess.run([sys.executable, str(self.tmp / "script.py"), *args],
                             env=self.env(), cwd=self.tmp, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "loynes", "cache", *args],
                              env=self.env(), cwd=self.tmp, capture_output=True, text=True,
                              timeout=300)

    def driver_files(self) -> list[Path]:
        return sorted(self.drivers.glob("drivers_*.py"))

    def numba_index(self) -> list[Path]:
        return sorted(self.numba.rglob("*.nbi"))


@pytest.fixture
def caches(tmp_path):
    return Caches(tmp_path)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A clean run: its numbers, and the modes of what it wrote."""
    c = Caches(tmp_path_factory.mktemp("clean"))
    numbers, err = c.run()
    assert "CacheWarning" not in err
    modes = {p.relative_to(c.drivers).as_posix(): p.stat().st_mode & 0o777
             for p in [c.drivers, *c.drivers.rglob("*")]}
    return numbers, modes


def test_a_clean_run_creates_a_private_folder(reference):
    _, modes = reference
    assert modes.pop(".") == 0o700
    assert modes.pop("__pycache__") == 0o700
    assert modes and set(modes.values()) == {0o600}  # the driver files


PLANT = 'open({marker!r}, "w").write("planted code ran")\n'


def test_planted_code_in_a_driver_file_is_not_run(caches, reference):
    caches.run()
    marker = caches.tmp / "MARKER"
    files = caches.driver_files()
    assert files
    for f in files:  # a line that runs on import, after the __future__ import
        text = f.read_text().replace("from __future__ import annotations\n",
                                     "from __future__ import annotations\n"
                                     + PLANT.format(marker=str(marker)), 1)
        assert PLANT.format(marker=str(marker)) in text
        f.write_text(text)
    numbers, err = caches.run()
    assert not marker.exists()
    assert numbers == reference[0]
    for f in files:
        assert f"CacheWarning: the cached drivers file {f} is not what this version " \
               "generates" in err
        assert "planted code ran" not in f.read_text()  # rewritten
    _, err = caches.run()
    assert "CacheWarning" not in err and not marker.exists()


@pytest.mark.parametrize("damage", ["truncated", "garbled", "emptied"])
def test_damaged_driver_files_are_rebuilt(caches, reference, damage):
    caches.run()
    files = caches.driver_files()
    good = {f: f.read_bytes() for f in files}
    for f, text in good.items():
        f.write_bytes({"truncated": text[: len(text) // 3],
                       "garbled": text[:500] + b"\xff\x00 def run_draws(:\n" + text[700:],
                       "emptied": b""}[damage])
    numbers, err = caches.run()
    assert numbers == reference[0]
    for f, text in good.items():
        assert f"the cached drivers file {f} is not what this version generates" in err
        assert f.read_bytes() == text


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_folder_others_can_write_is_refused(caches, reference, mode):
    caches.drivers.mkdir()
    caches.drivers.chmod(mode)
    numbers, err = caches.run()
    assert numbers == reference[0]  # compiled in memory: the same numbers
    assert f"CacheWarning: the drivers cache folder {caches.drivers} is not used: it is " \
           "writable by" in err
    assert "the drivers are compiled in memory" in err
    assert not caches.driver_files()  # nothing written (or read) there


def test_a_file_others_can_write_is_rewritten(caches, reference):
    caches.run()
    files = caches.driver_files()
    for f in files:
        f.chmod(0o666)
    numbers, err = caches.run()
    assert numbers == reference[0]
    for f in files:
        assert f"the cached drivers file {f} is writable by group and others" in err
        assert f.stat().st_mode & 0o777 == 0o600


@is_root
def test_a_folder_of_another_user_is_refused(caches, reference):
    caches.drivers.mkdir(mode=0o700)
    os.chown(caches.drivers, 12345, 12345)
    numbers, err = caches.run()
    assert numbers == reference[0]
    assert f"the drivers cache folder {caches.drivers} is not used: it is owned by uid " \
           "12345" in err
    assert not caches.driver_files()
    # the command line does not remove another user's folder
    out = caches.cli("--clear")
    assert out.returncode == 1 and caches.drivers.is_dir()
    assert f"{caches.drivers} is owned by uid 12345" in out.stderr


def test_ownership_is_checked_without_root(tmp_path, monkeypatch):
    # as another user would see a folder of ours: not owned by them, so refused
    monkeypatch.setenv("QUEUE_RECURSIONS_CACHE", str(tmp_path / "d"))
    monkeypatch.setattr(_cache, "_WARNED", set())
    assert _cache.drivers_folder() == (tmp_path / "d").resolve()
    monkeypatch.setattr(_cache, "_uid", lambda: os.getuid() + 1)
    with pytest.warns(rc.CacheWarning, match=r"is not used: it is owned by uid \d+, not by "
                                              r"you"):
        assert _cache.drivers_folder() is None


def test_a_folder_above_that_others_can_write_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # not sticky: others can rename our folder away and put theirs
    monkeypatch.setenv("QUEUE_RECURSIONS_CACHE", str(shared / "mine"))
    monkeypatch.setattr(_cache, "_WARNED", set())
    with pytest.warns(rc.CacheWarning, match=f"the folder above it, {shared}, is writable"):
        assert _cache.drivers_folder() is None
    shared.chmod(0o1777)  # sticky, as /tmp: fine
    assert _cache.drivers_folder() == (shared / "mine").resolve()


class Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_numba_folder_others_can_write_is_not_unpickled(caches, reference):
    caches.run()
    index = caches.numba_index()
    assert index
    marker = caches.tmp / "UNPICKLED"
    for f in index:  # what an attacker would plant: runs code when numba unpickles it
        f.write_bytes(pickle.dumps(numba.__version__) + pickle.dumps(Evil(str(marker))))
    caches.numba.chmod(0o777)
    numbers, err = caches.run()
    assert not marker.exists()
    assert numbers == reference[0]
    assert f"CacheWarning: NUMBA_CACHE_DIR {caches.numba} is not used: it is writable by " \
           "group and others" in err
    assert "numba caches in the private folder" in err
    assert not list(caches.numba.rglob("*.nbc.tmp*"))


def test_a_garbled_numba_index_is_rebuilt_and_is_not_a_map_contract_error(caches, reference):
    first, _ = caches.run("map")
    index = caches.numba_index()
    assert any("userstep.step" in f.name for f in index)
    for f in index:
        f.write_bytes(b"garbage, not a pickle")
    numbers, err = caches.run("map")
    assert numbers == first and first["p_wait"] == reference[0]["p_wait"]
    assert "MapContractError" not in err
    for f in index:
        assert f"numba's cache file {f} failed to load" in err
    _, err = caches.run("map")  # rebuilt: loads cleanly
    assert "CacheWarning" not in err


def test_a_cache_that_fails_twice_names_the_folder(tmp_path, monkeypatch):
    (tmp_path / "twice_mod.py").write_text("import numba\n\n\n@numba.njit(cache=True)\n"
                                           "def f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_cache, "_WARNED", set())
    import twice_mod

    def broken(self):
        raise pickle.UnpicklingError("invalid load key")

    monkeypatch.setattr(numba.core.caching.IndexDataCacheFile, "_load_index", broken)
    with pytest.warns(rc.CacheWarning, match="failed to load"), \
            pytest.raises(rc.CacheError, match=r"still fails after it was removed.*delete the "
                                               r"folder .*loynes cache --clear"):
        twice_mod.f(1)


def test_a_failure_inside_numba_cache_is_not_the_maps_fault(tmp_path):
    garbled = tmp_path / "x.nbi"
    garbled.write_bytes(b"garbage")
    cache_file = numba.core.caching.IndexDataCacheFile(str(tmp_path), "x", None)

    def step(w, sigma, tau, u, params):  # as a step whose cache index is damaged
        cache_file._index_path = str(garbled)
        cache_file._load_index()
        return 0.0

    m = rc.Map(step, servers=2)
    with pytest.raises(rc.CacheError, match="an on-disk cache failed to load"):
        m.check_contract(samples=1)

    def bad(w, sigma, tau, u, params):  # a step's own error stays the map's fault
        raise ValueError("mine")

    with pytest.raises(rc.MapContractError, match="raised ValueError: mine"):
        rc.Map(bad, servers=2).check_contract(samples=1)


def test_clear_cache_and_the_command_line(caches):
    caches.run()
    listed = caches.cli()
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.strip().splitlines()
    assert any(line.endswith(f"  {caches.drivers}") and "KB" in line for line in lines)
    assert any(f"  {caches.numba}/" in line for line in lines)
    cleared = caches.cli("--clear")
    assert cleared.returncode == 0, cleared.stderr
    assert "removed " in cleared.stdout and str(caches.drivers) in cleared.stdout
    assert not caches.drivers.exists() and not caches.numba_index()
    again = caches.cli()
    assert again.stdout.startswith("no cache files (the drivers folder would be")
    assert caches.cli("--clear").stdout.strip() == "no cache files to remove"


def test_clear_cache_in_process(tmp_path, monkeypatch):
    monkeypatch.setenv("QUEUE_RECURSIONS_CACHE", str(tmp_path / "d"))
    folder = _cache.drivers_folder()
    assert folder is not None
    (folder / "drivers_x.py").write_text("x = 1\n")
    assert rc.cache_folders()[folder] == 6
    assert folder in rc.clear_cache()
    assert not folder.exists() and folder not in rc.cache_folders()
