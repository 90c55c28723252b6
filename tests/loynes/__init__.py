"""Tests of ``loynes``: Loynes sequences, stability checks, sweeps and the command line."""
