"""Installed as a user installs it: the wheel of ``python -m build``, in a fresh environment.

``python -m build`` makes an sdist and a wheel from it; the wheel is installed (not editable)
with its ``plot`` extra into a new virtual environment, whose runtime dependencies come from a
local wheelhouse (``$QUEUE_RECURSIONS_WHEELHOUSE``, default ``wheelhouse/`` in the running
environment's prefix), filled from PyPI by ``pip download`` only when it lacks one, so a
rerun needs no network. Then, from a folder outside the repository, with no cache variable
set (the library's default places: ``~/.cache/queue-recursions`` for the drivers; numba's own
choice for its files), it runs ``python -m loynes --version``, the demo and the README's
example, while the installed package cannot be written: its folders are made read-only, and
as root (whom permissions do not stop) each run happens in a mount namespace of its own in
which site-packages is mounted read-only. A listing of site-packages (names, sizes,
modification times) taken before the runs must be unchanged after them: the compiled drivers
and numba's cache files go to the user's cache folder, not next to the installed sources.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import recursions as rc

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = Path(os.environ.get("QUEUE_RECURSIONS_WHEELHOUSE", Path(sys.prefix) / "wheelhouse"))
README_BLOCK = re.search(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(),
                         flags=re.S | re.M).group(1)

pytestmark = pytest.mark.slow


def _run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    pytest.importorskip("build", reason="python -m build needs the 'build' package (test extra)")
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the build backend (setuptools >= 77, in the test extra) is the one of this
    # environment, so building needs no network
    res = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT],
               cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def test_build_makes_a_wheel_and_an_sdist_of_this_version(dist):
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    assert wheel.name == f"queue_recursions-{rc.__version__}-py3-none-any.whl"
    assert sdist.name == f"queue_recursions-{rc.__version__}.tar.gz"
    with tarfile.open(sdist) as tar:
        names = {Path(n).relative_to(f"queue_recursions-{rc.__version__}").as_posix()
                 for n in tar.getnames() if "/" in n}
    assert {"README.md", "pyproject.toml", "recursions/py.typed", "loynes/_cli.py",
            "coupling/_perfect.py", "recursions/dists/__init__.py"} <= names


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``folder`` with its size and modification time."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            st = os.lstat(Path(dirpath) / name)
            snap[str((Path(dirpath) / name).relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return snap


def _install(python: Path, wheel: Path) -> None:
    """Install ``wheel[plot]`` from the wheelhouse, filling it from PyPI if it lacks a wheel."""
    install = [python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links",
               WHEELHOUSE, f"{wheel}[plot]"]
    res = _run(install, timeout=600)
    if res.returncode != 0:
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        got = _run([sys.executable, "-m", "pip", "download", "--quiet", "-d", WHEELHOUSE,
                    f"{wheel}[plot]"], timeout=1200)
        for own in WHEELHOUSE.glob("queue_recursions-*"):  # only the dependencies are kept
            own.unlink()
        if got.returncode != 0:
            pytest.skip(f"the runtime dependencies are not all in {WHEELHOUSE} and pip could "
                        f"not download them (no network?):\n{got.stderr[-2000:]}")
        res = _run(install, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr


MOUNT = 'mount --bind "$SITE" "$SITE" && mount -o remount,bind,ro "$SITE" "$SITE"'


def _read_only_wrapper(site: Path) -> list[str]:
    """A command prefix under which ``site`` cannot be written, by anyone; [] when unneeded.

    Permissions do not stop root, so as root the runs happen in a mount namespace of their
    own (``unshare -m``) in which site-packages is bind-mounted read-only.
    """
    if os.geteuid() != 0:
        return []
    unshare = shutil.which("unshare")
    probe = None if unshare is None else _run(
        [unshare, "-m", "sh", "-c", MOUNT + ' || exit 3; touch "$SITE/.probe"'],
        env={**os.environ, "SITE": str(site)}, timeout=60)
    if probe is None or probe.returncode != 1 or (site / ".probe").exists():
        why = "no unshare" if probe is None else (probe.stderr.strip() or f"rc {probe.returncode}")
        pytest.skip("running as root, whom permissions do not stop, and site-packages cannot "
                    f"be mounted read-only here (unshare -m / mount --bind: {why})")
    return [unshare, "-m", "sh", "-c", MOUNT + ' && exec "$@"', "sh"]


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory):
    """A fresh venv with the wheel installed and its site-packages read-only to the runs."""
    (wheel,) = dist.glob("*.whl")
    top = tmp_path_factory.mktemp("installed")
    venv = top / "venv"
    res = _run([sys.executable, "-m", "venv", venv], timeout=300)
    assert res.returncode == 0, res.stderr
    python = venv / "bin" / "python"
    _install(python, wheel)
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     timeout=60).stdout.strip())
    for name in ("recursions", "coupling", "loynes"):  # what a user without rights sees
        for dirpath, _, filenames in os.walk(site / name):
            for p in [Path(dirpath), *(Path(dirpath) / f for f in filenames)]:
                p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    wrapper = _read_only_wrapper(site)
    home = top / "home"
    home.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items()
           if k not in ("QUEUE_RECURSIONS_CACHE", "NUMBA_CACHE_DIR", "PYTHONPATH",
                        "XDG_CACHE_HOME", "MPLCONFIGDIR", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(HOME=str(home), SITE=str(site),
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")

    def run(*args, script=None, timeout=600):
        if script is not None:
            (home / "readme_block.py").write_text(script)
            args = ("readme_block.py",)
        return _run([*wrapper, python, *args], cwd=home, env=env, timeout=timeout)

    yield {"run": run, "site": site, "home": home}
    for dirpath, _, _ in os.walk(site):  # so that pytest can remove its temporary folders
        Path(dirpath).chmod(0o755)


def test_the_installed_wheel_runs_and_writes_nothing_into_site_packages(installed):
    run, site, home = installed["run"], installed["site"], installed["home"]
    before = _snapshot(site)
    probe = run("-c", f"open({str(site / 'recursions' / 'probe.txt')!r}, 'w')")
    assert probe.returncode != 0 and re.search(r"Read-only file system|Permission denied",
                                               probe.stderr), "site-packages can be written"

    where = run("-c", "import recursions, importlib.metadata as m; "
                      "print(recursions.__file__); print(m.version('queue-recursions'))")
    assert where.returncode == 0, where.stderr
    path, version = where.stdout.split()
    assert Path(path).is_relative_to(site) and version == rc.__version__  # not the repository

    res = run("-m", "loynes", "--version")
    assert res.returncode == 0 and res.stdout.split()[-1] == rc.__version__

    demo = run("-m", "loynes", "demo", "--out", home / "demo")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert {"report.txt", "loynes_sequence.png", "stability_region.png"} <= {
        p.name for p in (home / "demo").iterdir()}

    block = run(script=README_BLOCK)
    assert block.returncode == 0, block.stdout + block.stderr
    again = run(script=README_BLOCK)  # from the caches the first run filled
    assert again.returncode == 0 and again.stdout == block.stdout, again.stderr

    assert _snapshot(site) == before, "a run wrote into the installed package's folders"
    cache = home / ".cache"
    drivers = list((cache / "queue-recursions").glob("*.py"))
    assert drivers, f"no compiled drivers in the default folder: {sorted(cache.rglob('*'))}"
    assert list(cache.rglob("*.nbi")), "numba cached nothing in the user's cache folder"
