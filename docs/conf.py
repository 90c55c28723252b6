"""Sphinx configuration: the theory, the user guide, the executed notebooks and the API.

``make docs`` runs ``sphinx-build -W --keep-going -b html docs docs/_build/html``; neither the
build nor the site needs the network: MathJax is copied into the site (``_static/mathjax``,
from the ``sphinx-mathjax-offline`` package), so the formulas render offline. The notebooks
(``docs/notebooks`` is a link to the repository's ``notebooks/``)
are executed on every build (``nb_execution_mode = "force"``), and a failing cell fails the
build. Set ``QUEUE_RECURSIONS_DOCS_EXECUTE=off`` to build without running them, for a quick
look at the text.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "queue-recursions"
author = "the queue-recursions authors"
copyright = "the queue-recursions authors"
from recursions import __version__  # noqa: E402 (the version is written once, there)

release = version = __version__

extensions = [
    "myst_nb",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 into _static/mathjax: the site needs no network
]

exclude_patterns = ["_build", "notebooks/.ipynb_checkpoints", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]
html_theme = "furo"
html_title = f"queue-recursions {release}"
# offline: the pages load MathJax from the site's own _static/mathjax (tests/test_site.py opens
# them in a headless browser and checks that the formulas were typeset)

# MyST: the theory pages use $...$, $$...$$ with \tag, and (label)= targets
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# notebooks: executed once per build, every cell; an error in any cell fails the build
nb_execution_mode = os.environ.get("QUEUE_RECURSIONS_DOCS_EXECUTE", "force")
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 1800
nb_merge_streams = True

# API: one page per public name, from the docstrings (numpydoc sections)
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters sections already give the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
