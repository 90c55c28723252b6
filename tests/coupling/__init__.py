"""Tests of ``coupling``: monotonicity, coupling times, exact sampling."""
