"""The README: it opens with the two commands, and every python block runs as a script.

Each ```python block is written to a file of its own and run with ``python FILE`` in a fresh
folder, as a new user who pastes it would: so every block carries its own imports, a block
that starts worker processes has the ``if __name__ == "__main__":`` guard, and the property
test calls itself. The blocks start cold, as on a new machine: their drivers and numba caches
are folders made empty for them (shared by the blocks, in the order a reader pastes them), not
those the rest of the suite has filled.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def test_readme_opens_with_the_two_commands():
    lines = README.read_text().splitlines()
    assert lines[0] == "```"
    assert lines[1].startswith("make demo") and lines[2].startswith("make test")


def test_readme_stands_on_its_own():
    text = README.read_text()
    assert "../shared" not in text  # the repository stands on its own


def test_readme_has_the_python_blocks():
    assert len(BLOCKS) >= 5
    assert sum("assert_monotone" in b for b in BLOCKS) == 1
    assert sum("stability_map" in b for b in BLOCKS) == 1


def block(needle):
    (found,) = [b for b in BLOCKS if needle in b]
    return found


@pytest.fixture(scope="module")
def cold_env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("readme-cache")
    return {**os.environ, "QUEUE_RECURSIONS_CACHE": str(cache / "drivers"),
            "NUMBA_CACHE_DIR": str(cache / "numba")}


def run_block(code, tmp_path, name="block", env=None):
    script = tmp_path / f"readme_{name}.py"
    script.write_text(code)
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env=env)
    assert res.returncode == 0, f"{name}:\n{code}\nstderr:\n{res.stderr}"
    return res.stdout


def test_readme_blocks_that_need_care():
    prop = block("assert_monotone")
    # the first call loads the compiled kernel, which can exceed hypothesis' 200 ms deadline
    assert "@settings(deadline=None)" in prop and "\n    test_envelope_is_monotone()" in prop
    assert re.search(r'^if __name__ == "__main__":.*\n    .*stability_map', block("stability_map"),
                     flags=re.M | re.S)
    assert "warmup=" in block("rc.JIQ(10**5)")
    assert "includes the transient" in README.read_text()


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_as_a_script(index, tmp_path, cold_env):
    out = run_block(BLOCKS[index], tmp_path, f"block_{index}", cold_env)
    if "perfect_sample" in BLOCKS[index]:
        # the input is stable for the system: exact draws give Erlang C's P(wait)
        method, p_wait, erlang_c = out.split()[-3:]
        assert method.startswith("dominated") and abs(float(p_wait) - float(erlang_c)) < 0.05
