"""``import recursions, coupling, loynes`` stays light: heavy optional modules load on use."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("sympy", "scipy.stats", "matplotlib", "pandas", "xarray", "dask", "distributed")


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter; return what it printed."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_loads_no_heavy_module():
    # sympy (ly.symbolic), scipy.stats (a few closed forms and tests), matplotlib (plots) and
    # pandas/xarray (tables) are imported inside the functions that use them
    out = _fresh("import recursions, coupling, loynes; import sys; "
                 f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert out.strip() == "[]"


def test_cli_help_loads_no_heavy_module():
    out = _fresh("import sys\nfrom loynes._cli import main\ntry:\n    main(['--help'])\n"
                 "except SystemExit:\n    pass\n"
                 f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert out.strip().splitlines()[-1] == "[]"


def test_import_compiles_and_loads_no_kernel():
    # numba's decoration is cheap; a kernel is compiled or read from the cache on first call
    out = _fresh("import sys, json, recursions, coupling, loynes\n"
                 "from numba.core.registry import CPUDispatcher\n"
                 "seen, loaded = 0, []\n"
                 "for name, mod in list(sys.modules.items()):\n"
                 "    if name.split('.')[0] in ('recursions', 'coupling', 'loynes'):\n"
                 "        for key, obj in vars(mod).items():\n"
                 "            if isinstance(obj, CPUDispatcher):\n"
                 "                seen += 1\n"
                 "                if obj.signatures:\n"
                 "                    loaded.append(name + '.' + key)\n"
                 "print(json.dumps([seen, loaded]))")
    seen, loaded = json.loads(out)
    assert seen > 10 and loaded == []


def test_symbolic_is_still_an_attribute_and_a_submodule():
    out = _fresh("import sys, loynes as ly\n"
                 "before = 'sympy' in sys.modules\n"
                 "cond = ly.symbolic.condition_3(2)\n"
                 "from loynes import symbolic\n"
                 "from loynes.symbolic import condition_11\n"
                 "print(before, symbolic is ly.symbolic, str(cond), 'symbolic' in dir(ly),\n"
                 "      condition_11 is symbolic.condition_11)")
    assert out.split() == ["False", "True", "E_sigma*lambda", "<", "2", "True", "True"]


def test_unknown_attribute_still_raises():
    import loynes

    with pytest.raises(AttributeError, match="module 'loynes' has no attribute 'nonexistent'"):
        loynes.nonexistent  # noqa: B018
