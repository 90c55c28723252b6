"""Tests of ``recursions.engines``: the engines, their drivers and kernels."""
