"""The README: it opens with the two commands, and its python block runs as a script.

Each ```python block is written to a file of its own and run with ``python FILE`` in a fresh
folder, as a new user who pastes it would: so every block carries its own imports. The blocks
start cold, as on a new machine: their drivers and numba caches are folders made empty for
them (shared by the blocks, in the order a reader pastes them), not those the rest of the
suite has filled. The longer examples (a property test, your own map, large systems, sweeps)
are in the user guide, whose blocks ``tests/test_user_guide.py`` runs the same way.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(path):
    """The ```python blocks of a Markdown file, in order."""
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.S | re.M)


BLOCKS = python_blocks(README)


def test_readme_opens_with_the_two_commands():
    lines = README.read_text().splitlines()
    assert lines[0] == "```"
    assert lines[1].startswith("make demo") and lines[2].startswith("make test")


def test_readme_stands_on_its_own():
    text = README.read_text()
    assert "../shared" not in text  # the repository stands on its own


def test_readme_is_short_and_has_one_example():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    (example,) = BLOCKS
    assert 8 <= len(example.strip().splitlines()) <= 14
    assert "perfect_sample" in example and "check_stability" in example
    # the table shows how to write a size-based or multi-speed policy
    assert "rc.Map(" in text and "blocks=[" in text


def test_readme_links_point_to_files_that_exist():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    assert targets
    missing = [t for t in targets if not (README.parent / t).exists()]
    assert not missing, missing


@pytest.fixture(scope="module")
def cold_env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("blocks-cache")
    return {**os.environ, "QUEUE_RECURSIONS_CACHE": str(cache / "drivers"),
            "NUMBA_CACHE_DIR": str(cache / "numba")}


def run_block(code, tmp_path, name="block", env=None):
    """Run ``code`` as ``python FILE`` in ``tmp_path``; its stdout (it must exit 0)."""
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env=env)
    assert res.returncode == 0, f"{name}:\n{code}\nstderr:\n{res.stderr}"
    return res.stdout


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_as_a_script(index, tmp_path, cold_env):
    out = run_block(BLOCKS[index], tmp_path, f"readme_block_{index}", cold_env)
    if "perfect_sample" in BLOCKS[index]:
        # the input is stable for the system: exact draws give Erlang C's P(wait)
        method, p_wait, erlang_c = out.split()[-3:]
        assert method.startswith("dominated") and abs(float(p_wait) - float(erlang_c)) < 0.05
