"""The user guide's examples (docs/user_guide.md): every python block runs as a script.

As for the README (``tests/test_readme.py``): each ```python block is written to a file of its
own and run with ``python FILE`` in a fresh folder, in the order a reader pastes them, from
drivers and numba caches made empty for these blocks. So every block carries its own imports,
a block that starts worker processes has the ``if __name__ == "__main__":`` guard, and the
property test calls itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_readme import cold_env, python_blocks, run_block

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide.md"
BLOCKS = python_blocks(GUIDE)

__all__ = ["cold_env"]  # the fixture, shared with the README's blocks


def block(needle):
    (found,) = [b for b in BLOCKS if needle in b]
    return found


def test_the_guide_has_the_examples():
    assert len(BLOCKS) >= 7
    for needle in ("assert_monotone", "stability_map", "perfect_sample", "rc.JIQ(10**5)",
                   "blocks=[", "rc.Map(threshold"):
        block(needle)  # exactly one block each


def test_blocks_that_need_care():
    prop = block("assert_monotone")
    # the first call loads the compiled kernel, which can exceed hypothesis' 200 ms deadline
    assert "@settings(deadline=None)" in prop and "\n    test_envelope_is_monotone()" in prop
    assert re.search(r'^if __name__ == "__main__":.*\n    .*stability_map', block("stability_map"),
                     flags=re.M | re.S)
    assert "checkpoint=" in block("stability_map")
    assert "warmup=" in block("rc.JIQ(10**5)")
    assert "includes the transient" in GUIDE.read_text()
    assert "capacity=" in block("blocks=[")  # servers of other speeds declare their capacity


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_guide_block_runs_as_a_script(index, tmp_path, cold_env):
    out = run_block(BLOCKS[index], tmp_path, f"guide_block_{index}", cold_env)
    if "perfect_sample" in BLOCKS[index]:
        # the input is stable for the system: exact draws give Erlang C's P(wait)
        method, p_wait, erlang_c = out.split()[-3:]
        assert method.startswith("dominated") and abs(float(p_wait) - float(erlang_c)) < 0.05
    if "blocks=[" in BLOCKS[index]:
        # load 2/3 on four servers of which two are twice as fast: a short mean wait
        assert 0 < float(out.split()[0]) < 1.0
