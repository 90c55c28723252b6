"""Compact HTML summaries of results, for Jupyter's ``_repr_html_``.

A result shows a small two-column table (what, value) instead of its long dataclass repr; an
:class:`~recursions.Estimate` is shown as ``value ± se``. The result types of ``coupling`` and
``loynes`` use :func:`html_table` too.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from recursions.inference._estimate import Estimate

__all__ = ["cell", "html_table"]


def cell(value: Any) -> str:
    """``value`` as short text: ``value ± se`` for an estimate, 4 significant digits for floats.

    Examples
    --------
    >>> cell(Estimate(0.33333, 0.0123)), cell(2.0), cell(None), cell(7)
    ('0.3333 ± 0.0123', '2', '—', '7')
    """
    if value is None:
        return "—"
    if isinstance(value, Estimate):
        if np.ndim(value.value) == 0:
            return format(value, ".4g")
        return format(value, ".3g")
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    return str(value)


def html_table(title: str, rows: Iterable[tuple[str, Any]]) -> str:
    """A two-column HTML table headed by ``title``; ``None`` rows are left out.

    Parameters
    ----------
    title : str
        What the table summarises (shown as its caption).
    rows : iterable of (str, object)
        Row name and value; a value is shown with :func:`cell`, and a row whose value is
        ``None`` is left out.

    Returns
    -------
    str
        ``<table>...</table>``, every text escaped.

    Examples
    --------
    >>> print(html_table("R", [("p_wait", Estimate(0.5, 0.01)), ("p_loss", None)]))
    <table><caption style="text-align:left"><b>R</b></caption>
    <tr><th style="text-align:left">p_wait</th><td style="text-align:left">0.5 ± 0.01</td></tr>
    </table>
    """
    out = [f'<table><caption style="text-align:left"><b>{html.escape(title)}</b></caption>']
    for name, value in rows:
        if value is None:
            continue
        out.append(f'<tr><th style="text-align:left">{html.escape(name)}</th>'
                   f'<td style="text-align:left">{html.escape(cell(value))}</td></tr>')
    out.append("</table>")
    return "\n".join(out)
