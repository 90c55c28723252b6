# Two commands work on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test docs lint bench studies clean-cache clean

# The install: the venv with every extra (the docs' MathJax and the wheel's build tools among
# them), and Chromium for the browser check of the site (tests/test_site.py), from apt when it
# is missing and apt can install it (CI runs as root); without it that check skips, saying so.
CHROMIUM := chromium chromium-browser google-chrome

$(STAMP): pyproject.toml
	@echo "installing queue-recursions and its extras into $(VENV) (once, a few minutes) ..."
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,plot,docs,tables]'
	@for b in $(CHROMIUM); do command -v $$b >/dev/null && exit 0; done; \
	if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
		|| echo "Chromium could not be installed: tests/test_site.py will skip, saying so"; \
	else echo "Chromium is not installed (apt-get as root can): tests/test_site.py will skip"; fi
	touch $(STAMP)

# The demo says what it does as it goes: whether the kernels are compiled (first run) or
# loaded from the cache, then the report and each figure, with the seconds each took.
demo: $(STAMP)
	@echo "running the demo: report and figures into demo_output/"
	$(PY) -m loynes demo --out demo_output

# make test starts cold, as a new machine does: the drivers and numba caches live in fresh
# folders of its own (.test-cache/, ignored by git; never ~/.cache), emptied first, and the
# docs build executes the notebooks from empty caches of its own too, so a kernel that only
# compiles in a worker process or a notebook is compiled there. The built site is then opened
# in headless Chromium (tests/test_site.py: formulas typeset, figures and links present;
# screenshots in docs/_build/screenshots/), so that check runs after the docs build. The
# suite runs in up to 4 pytest-xdist workers, one a core (they share the cold caches, as the
# workers of a user's sweep do), and prints its 30 slowest tests (the whole of make test
# should stay near 15 minutes).
TEST_CACHE := $(CURDIR)/.test-cache
cold = QUEUE_RECURSIONS_CACHE=$(TEST_CACHE)/$(1)/drivers NUMBA_CACHE_DIR=$(TEST_CACHE)/$(1)/numba

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	rm -rf $(TEST_CACHE) && mkdir -m 700 $(TEST_CACHE)
	$(call cold,suite) $(PY) -m pytest -n auto --maxprocesses 4 --doctest-modules \
		recursions coupling loynes tests --ignore=tests/test_site.py --durations=30
	$(call cold,docs) $(MAKE) --no-print-directory docs
	$(PY) -m pytest tests/test_site.py

# The site, in docs/_build/html: theory, user guide, API from the docstrings, and the notebooks,
# each executed once here (a failing cell fails the build, -T prints it; make test runs them only
# this way).
docs: $(STAMP)
	rm -rf docs/_build docs/api/generated
	$(PY) -m sphinx -E -W --keep-going -T -q -b html docs docs/_build/html

# ruff check (pyflakes, pycodestyle, pydocstyle, isort, ...) and mypy; the code is not in
# ruff-format's layout (hand-aligned continuation lines), so no format check.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# Every study in studies/ at full size: CSVs and figures into studies/results/ (hours; the
# docs' studies page, docs/studies.md, says how long each took). make test runs each with --quick.
studies: $(STAMP)
	for f in studies/[a-z]*.py; do $(PY) $$f || exit 1; done

bench: $(STAMP)
	for f in benchmarks/*.py; do $(PY) $$f || exit 1; done

# numba's cache files (*.nbi, *.nbc, in __pycache__ folders), not those of the installed
# packages in $(VENV). -delete would imply -depth, which GNU find refuses with -prune: use rm.
# Then `python -m loynes cache --clear` (rc.clear_cache): the drivers folder and the library's
# numba files in $NUMBA_CACHE_DIR; without the venv, the drivers folder alone.
DRIVERS_CACHE ?= $(or $(QUEUE_RECURSIONS_CACHE),$(HOME)/.cache/queue-recursions)

clean-cache:
	find . -path ./$(VENV) -prune -o -type f \( -name '*.nbi' -o -name '*.nbc' \) \
		-print -exec rm -f {} +
	if [ -x $(PY) ]; then $(PY) -m loynes cache --clear; else rm -rf "$(DRIVERS_CACHE)"; fi

clean: clean-cache
	rm -rf $(VENV) demo_output .pytest_cache .hypothesis docs/_build docs/api/generated \
		$(TEST_CACHE)
