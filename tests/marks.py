"""Marks shared by the test modules."""

from __future__ import annotations

import pytest

UNTRUSTED = pytest.mark.filterwarnings(
    "ignore:(?!.*batch means of the ).*confidence intervals? cannot be trusted"
    ":recursions.SimulationWarning")
"""A fixed-budget run too short to confirm its intervals warns ("... cannot be trusted ...");
the tests marked with this use its estimates (or only its path), not its intervals. The batch
check's own message (which names "batch means of the ...") is not ignored."""
