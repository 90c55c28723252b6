"""Each statistic is declared once: the result, its display and the docs follow the registry."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import recursions as rc
from recursions.results import REGISTRY

ROOT = Path(__file__).resolve().parents[3]
# what a result reports besides the registry's ratios of batch sums: an array over Coxian
# phases, and the distance to a reference profile
NOT_RATIOS = ("phase_busy", "sup_error")


def test_the_result_has_a_documented_field_for_each_statistic_and_no_other():
    fields = {f.name for f in dataclasses.fields(rc.SimulationResult)}
    estimates = {f.name for f in dataclasses.fields(rc.SimulationResult)
                 if "Estimate" in str(f.type)}
    assert set(REGISTRY) <= fields
    assert estimates == set(REGISTRY) | set(NOT_RATIOS)
    doc = rc.SimulationResult.__doc__ or ""
    missing = [n for n in REGISTRY if not re.search(rf"^    {n} : ", doc, flags=re.M)]
    assert not missing, f"document these in SimulationResult's Attributes: {missing}"


def test_the_html_summary_shows_every_statistic():
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=2_000, rng=1)
    html = res._repr_html_()
    reported = [n for n in REGISTRY if getattr(res, n) is not None]
    shown = sorted((html.index(f">{n}<"), n) for n in reported if f">{n}<" in html)
    # every statistic the run reported, what customers find first
    assert [n for _, n in shown] == sorted(reported, key=lambda n: not REGISTRY[n].customers)


def test_the_conventions_page_lists_the_registry():
    page = (ROOT / "docs" / "conventions.md").read_text()
    section = page.split("(conventions-statistics)=", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \| (yes|no) \| (yes|no) \| (yes|no) \|$", section,
                      flags=re.M)

    def yes(flag):
        return "yes" if flag else "no"

    assert rows == [(n, s.meaning, yes(s.customers), yes(s.workloads), yes(s.queues))
                    for n, s in REGISTRY.items()]
