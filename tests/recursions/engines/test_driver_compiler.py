"""The driver compiler's templates: explicit placeholders, bound name for name."""

from __future__ import annotations

from pathlib import Path

import pytest

from recursions.engines import _driver_compiler as dc

ENGINES = Path(dc.__file__).parent


@pytest.mark.parametrize("template, names", [("_driver_template.py", dc.TEMPLATE_NAMES),
                                             ("_heap.py", dc.HEAP_NAMES)])
def test_each_template_marks_exactly_the_names_the_compiler_binds(template, names):
    src = (ENGINES / template).read_text()
    marked = [line for line in src.splitlines() if dc.PLACEHOLDER in line]
    assert len(marked) == len(names)
    out = dc._placeholders_out(src, names, template)
    assert dc.PLACEHOLDER not in out
    # every other line is kept as it is, in order
    assert out.splitlines() == [line for line in src.splitlines() if dc.PLACEHOLDER not in line]
    # the compiled copy defines none of the placeholders itself: they come from the binding
    for name in names:
        assert f"\n{name} = " not in out and f" as {name}\n" not in out


def test_a_template_whose_placeholders_differ_from_the_binding_is_refused():
    src = (ENGINES / "_driver_template.py").read_text()
    with pytest.raises(RuntimeError, match=r"not the names the compiler binds"):
        dc._placeholders_out(src, [*dc.TEMPLATE_NAMES, "EXTRA"], "the driver template")
    extra = src.replace("LEAN = False  # placeholder:",
                        "LEAN = False  # placeholder: x\nMORE = 1  # placeholder:")
    with pytest.raises(RuntimeError, match=r"'MORE'"):
        dc._placeholders_out(extra, dc.TEMPLATE_NAMES, "the driver template")
    bad = src.replace("LEAN = False  # placeholder:", "if LEAN:  # placeholder:")
    with pytest.raises(RuntimeError, match=r"names no global"):
        dc._placeholders_out(bad, dc.TEMPLATE_NAMES, "the driver template")
