"""The built site (docs/_build/html), as a reader sees it: offline, in a real browser.

``make test`` runs this file after ``make docs``. Without a browser: every page loads its
scripts and styles from the site itself (no http(s) address in a script or link tag), and no
internal link, anchor or image is broken (a crawl of every page's hrefs and srcs). In headless
Chromium (``--dump-dom`` after the page's scripts ran, and ``--screenshot``): the landing page,
a theory page whose formulas MathJax typeset (``mjx-container`` elements, no raw ``\\(`` left),
a notebook page with its figures, an API page and the benchmarks page. The screenshots are
written to ``docs/_build/screenshots/`` for a person to look at. Skips, saying why, when the
site was not built or Chromium is not installed (``make test`` installs it with apt).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"
SHOTS = ROOT / "docs" / "_build" / "screenshots"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")

PAGES = {  # screenshot name: page, and what it must show
    "landing": "index.html",
    "theory": "theory/stability.html",
    "notebook": "notebooks/01_kiefer_wolfowitz.html",
    "api": "api/generated/recursions.simulate.html",
    "benchmarks": "benchmarks.html",
}


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").exists():
        pytest.skip(f"the site was not built ({SITE}/index.html is missing): run make docs")
    return SITE


@pytest.fixture(scope="module")
def chromium():
    found = next((b for b in map(shutil.which, BROWSERS) if b), None)
    if found is None:
        pytest.skip(f"no Chromium ({', '.join(BROWSERS)}) on PATH: apt-get install chromium "
                    "(make test's install step does it where apt is available)")
    return found


class Page(HTMLParser):
    """The ids of a page and the references of its tags: (tag, attribute, value)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if name in ("href", "src") and value is not None:
                self.refs.append((tag, name, value))


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(errors="replace"))
    return page


@pytest.fixture(scope="module")
def pages(site):
    return {p: parse(p) for p in site.rglob("*.html")}


def test_the_site_needs_nothing_from_outside(site, pages):
    outside = [f"{p.relative_to(site)}: <{tag} {attr}={value}>" for p, page in pages.items()
               for tag, attr, value in page.refs
               if tag in ("script", "link", "img", "iframe") and urlsplit(value).scheme
               and urlsplit(value).scheme != "data"]
    assert not outside, outside[:20]
    stability = (site / "theory" / "stability.html").read_text()
    (mathjax,) = re.findall(r'<script[^>]*src="([^"]*tex-chtml\.js)"', stability)
    assert (site / "theory" / mathjax).resolve().is_file()  # MathJax is part of the site


def test_no_broken_internal_link_or_image(site, pages):
    broken = []
    for path, page in pages.items():
        for tag, attr, value in page.refs:
            url = urlsplit(value)
            if url.scheme or value.startswith("//") or (not url.path and not url.fragment):
                continue  # an outside address, mailto:, data:, or an empty link
            target = (path.parent / unquote(url.path)).resolve() if url.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: <{tag} {attr}={value}>"
            if not target.is_file():
                broken.append(where)
            elif tag == "img" and target.stat().st_size == 0:
                broken.append(where + " (empty image)")
            elif url.fragment and target.suffix == ".html" and target in pages:
                if unquote(url.fragment) not in pages[target].ids:
                    broken.append(where + " (no such anchor)")
    assert not broken, f"{len(broken)} broken: {broken[:30]}"


def browse(chromium: str, page: Path, *flags: str) -> str:
    """Run headless Chromium on ``page`` (scripts run for up to 20 s of virtual time)."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--disable-dev-shm-usage", f"--user-data-dir={profile}",
               "--virtual-time-budget=20000", *flags, page.as_uri()]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                             env={**os.environ, "HOME": profile})
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


@pytest.fixture(scope="module")
def doms(site, chromium):
    """Each page's DOM after its scripts ran, and its screenshot in SHOTS."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, rel in PAGES.items():
        assert (site / rel).is_file(), f"{rel} was not built"
        shot = SHOTS / f"{name}.png"
        shot.unlink(missing_ok=True)
        browse(chromium, site / rel, f"--screenshot={shot}", "--window-size=1280,1800")
        assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot of {rel}"
        out[name] = browse(chromium, site / rel, "--dump-dom")
    return out


def test_each_page_renders_with_its_content(doms):
    assert "queue-recursions" in doms["landing"] and "Which function answers" in doms["landing"]
    assert "simulate" in doms["api"] and "Parameters" in doms["api"]
    assert "Benchmarks" in doms["benchmarks"] and "<table" in doms["benchmarks"]


def test_formulas_are_typeset_not_raw_tex(doms):
    theory = doms["theory"]
    assert theory.count("<mjx-container") >= 20  # MathJax ran and typeset the formulas
    text = re.sub(r"<(script|style)\b.*?</\1>", "", theory, flags=re.S)
    assert "\\(" not in text and "\\[" not in text  # no formula left untypeset
    assert "<mjx-merror" not in theory  # and none failed to typeset


def test_the_notebook_page_shows_its_figures(site, doms):
    figures = re.findall(r'<img[^>]*src="([^"]+\.png)"', doms["notebook"])
    assert figures, "the notebook page has no figure"
    page = site / PAGES["notebook"]
    for src in figures:
        png = (page.parent / unquote(src)).resolve()
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", src
