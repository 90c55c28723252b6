"""Tests of ``recursions.model``: the maps, the inputs, the systems and your own maps."""
