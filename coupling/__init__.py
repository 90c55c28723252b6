"""Monotonicity and dominance checks, coupling, and exact stationary sampling (in progress)."""

__all__: list[str] = []
