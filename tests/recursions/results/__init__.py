"""Tests of ``recursions.results``: the statistics, results as tables and figures."""
