"""Tests of the scripts in ``benchmarks/`` and ``studies/`` and the tables they write."""
