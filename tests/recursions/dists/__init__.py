"""Tests of ``recursions.dists``: the laws and what they are asked."""
