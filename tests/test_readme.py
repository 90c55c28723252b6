"""The README's property-test example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_opens_with_the_two_commands():
    lines = README.read_text().splitlines()
    assert lines[0] == "```"
    assert lines[1].startswith("make demo") and lines[2].startswith("make test")


def test_readme_property_test_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    example = next(b for b in blocks if "assert_monotone" in b)
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    namespace["test_envelope_is_monotone"]()  # hypothesis runs its examples
