"""The documentation site: what it lists, how it runs the notebooks, and where references point.

``make docs`` (and so ``make test``) builds the site; these checks keep its promises cheap to
verify: every public name has an API page, a failing notebook cell fails the build, the
notebooks run through the docs build only, and no reference points outside the repository.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import coupling
import loynes
import recursions

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.mark.parametrize("package", [recursions, loynes, coupling], ids=lambda p: p.__name__)
def test_every_public_name_is_in_the_api_reference(package):
    page = (DOCS / "api" / f"{package.__name__}.rst").read_text()
    listed = set(re.findall(r"^   ([A-Za-z_][A-Za-z0-9_]*)$", page, flags=re.M))
    listed |= set(re.findall(r"^\.\. py:data:: (\w+)$", page, flags=re.M))
    missing = sorted(set(package.__all__) - listed)
    assert not missing, f"add these to docs/api/{package.__name__}.rst: {missing}"


def test_make_test_runs_the_notebooks_once_through_the_docs_build():
    makefile = (ROOT / "Makefile").read_text()
    test_recipe = re.search(r"^test:.*?\n((?:\t.*\n)+)", makefile, flags=re.M).group(1)
    assert "nbmake" not in makefile
    assert "--doctest-modules \\\n\t\trecursions coupling loynes tests" in test_recipe
    # the docs build comes last but for the browser check of the site it built
    *_, build, site = test_recipe.splitlines()
    assert "$(MAKE)" in build and build.endswith(" docs")
    assert site == "\t$(PY) -m pytest tests/test_site.py"
    docs_recipe = re.search(r"^docs:.*?\n((?:\t.*\n)+)", makefile, flags=re.M).group(1)
    # warnings fail, every page is read (and every notebook run) again, the failing cell is shown
    assert all(f" {flag} " in docs_recipe for flag in ("-W", "-E", "-T"))


def test_make_test_starts_from_empty_caches_of_its_own():
    makefile = (ROOT / "Makefile").read_text()
    test_recipe = re.search(r"^test:.*?\n((?:\t.*\n)+)", makefile, flags=re.M).group(1)
    lines = test_recipe.splitlines()
    (clear,) = [i for i, line in enumerate(lines) if "rm -rf $(TEST_CACHE)" in line]
    (suite,) = [i for i, line in enumerate(lines) if " -m pytest " in line and "--doctest" in line]
    (docs,) = [i for i, line in enumerate(lines) if "docs" in line and "$(MAKE)" in line]
    (site,) = [i for i, line in enumerate(lines) if "tests/test_site.py" in line and i > docs]
    assert clear < suite < docs < site
    # the suite leaves the site check to after the docs build (it would see a stale site)
    assert "--ignore=tests/test_site.py" in lines[suite] + lines[suite + 1]
    assert "$(call cold,suite)" in lines[suite] and "$(call cold,docs)" in lines[docs]
    # the suite in pytest-xdist workers (as many as cores, at most 4), which share its caches
    assert " -n auto --maxprocesses 4 " in lines[suite]
    assert re.search(r'^test = \[.*"pytest-xdist', (ROOT / "pyproject.toml").read_text(), re.M)
    cold = re.search(r"^cold = (.*)$", makefile, flags=re.M).group(1)
    assert "QUEUE_RECURSIONS_CACHE=$(TEST_CACHE)/$(1)/" in cold
    assert "NUMBA_CACHE_DIR=$(TEST_CACHE)/$(1)/" in cold
    assert re.search(r"^TEST_CACHE := \$\(CURDIR\)/\.test-cache$", makefile, flags=re.M)
    assert ".test-cache/" in (ROOT / ".gitignore").read_text().splitlines()


def test_the_site_works_offline_and_the_install_brings_what_it_needs():
    conf = (DOCS / "conf.py").read_text()
    assert '"sphinx-mathjax-offline"' in conf  # MathJax copied into the site, not fetched
    assert "release = version = __version__" in conf  # the version is written once
    meta = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^docs = \[.*"sphinx-mathjax-offline', meta, flags=re.M)
    assert re.search(r'^test = \[.*"build', meta, flags=re.M)  # tests/test_wheel.py builds
    makefile = (ROOT / "Makefile").read_text()
    stamp = re.search(r"^\$\(STAMP\):.*?\n((?:\t.*\n)+)", makefile, flags=re.M).group(1)
    assert "'.[test,plot,docs,tables]'" in stamp
    # Chromium for tests/test_site.py: from apt, only when missing and apt can install it
    assert "command -v $$b" in stamp and "apt-get install -y -qq chromium" in stamp


def test_notebooks_link_and_execution_settings():
    assert (DOCS / "notebooks").resolve() == (ROOT / "notebooks").resolve()
    conf = (DOCS / "conf.py").read_text()
    assert 'nb_execution_mode = os.environ.get("QUEUE_RECURSIONS_DOCS_EXECUTE", "force")' in conf
    assert "nb_execution_raise_on_error = True" in conf
    listed = set(re.findall(r"^notebooks/(\S+)$", (DOCS / "examples.md").read_text(), re.M))
    assert listed == {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}


def test_a_failing_cell_fails_the_build(tmp_path):
    pytest.importorskip("myst_nb")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DOCS / "conf.py", src / "conf.py")  # the site's settings, one failing page
    (src / "index.md").write_text(
        "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n"
        "  language: python\n---\n\n# A page\n\n```{code-cell} ipython3\nx = 1\n```\n\n"
        "```{code-cell} ipython3\nx / 0  # the failing cell\n```\n"
    )
    cmd = [sys.executable, "-m", "sphinx", "-E", "-W", "-T", "-q", "-b", "html", src, tmp_path]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert res.returncode != 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", res.stdout + res.stderr)  # without the colours
    assert "ZeroDivisionError" in out
    # what CI shows names the notebook and the cell: its source and its execution count
    assert f"ExecutionError: {src / 'index.md'}" in out
    assert "An error occurred while executing the following cell" in out
    assert "x / 0  # the failing cell" in out and "Cell In[2]" in out


STALE = re.compile(r"MATH\.md|papers? 00[0-9]|shared[/]")


def test_references_point_into_these_docs():
    files = [p for ext in ("py", "ipynb", "md") for p in ROOT.rglob(f"*.{ext}")]
    skip = (ROOT / ".venv", DOCS / "_build", DOCS / "notebooks")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        if not any(p.is_relative_to(s) for s in skip) and p != Path(__file__)
        for n, line in enumerate(p.read_text(errors="ignore").splitlines(), 1)
        if STALE.search(line)
    ]
    assert not found, "point these to a section of docs/ instead: " + ", ".join(found)
