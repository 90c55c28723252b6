"""Tests of ``recursions.inference``: estimates, intervals, precision, warnings."""
