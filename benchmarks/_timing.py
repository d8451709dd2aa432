"""Shared helpers for the benchmarks: timed loops and a one-core pin."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def pin_to_one_core() -> None:
    """Run on one core, so that figures are per core and comparable."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def rate(run: Callable[[float], int], seconds: float, repeats: int) -> float:
    """Best of ``repeats`` runs of ``run(seconds) -> count``, as count per second.

    The best run is the least disturbed by other work on a shared machine.
    """
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        count = run(seconds)
        best = max(best, count / (time.perf_counter() - start))
    return best
