"""Dispatch from :func:`recursions.simulate` to the queue-length engines, if present."""

from __future__ import annotations

from typing import Any


def handles(system: Any) -> bool:
    """Whether ``system`` is a queue-length system (JSQ, I1F, PowerOfD, JIQ with a buffer)."""
    if getattr(system, "buffer", None) is not None:
        return True
    from . import zerowait

    names = ("JSQ", "I1F", "PowerOfD")
    return isinstance(system, tuple(getattr(zerowait, n) for n in names if hasattr(zerowait, n)))


def run(system: Any, input: Any, steps: Any, **kwargs: Any) -> Any:
    """Run :func:`recursions.zerowait.simulate_queues`."""
    from .zerowait import simulate_queues

    engine = kwargs.pop("engine", "auto")
    if engine in ("dense", "heap"):
        raise ValueError(f"queue-length systems run on engine 'queues' or 'counts', not {engine!r}")
    return simulate_queues(system, input, steps, engine=engine, **kwargs)
