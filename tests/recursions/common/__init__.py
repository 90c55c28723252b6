"""Tests of ``recursions.common``: the caches and the argument checks."""
