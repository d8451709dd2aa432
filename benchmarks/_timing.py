"""Shared helpers for the benchmarks: timed loops and a one-core pin."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np


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


def play_aec_randomly(env, seconds: float) -> tuple[int, int]:
    """Uniformly random legal play through a PettingZoo AEC env for ``seconds``.

    Observes the acting agent every step (``last()``), as a learner would, and
    draws actions from pre-drawn uniforms so that sampling costs the same for
    every environment. Returns (games, decisions).
    """
    uniforms = np.random.default_rng(0).random(1 << 16).tolist()
    games = decisions = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        env.reset(seed=games)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(uniforms[decisions & 0xFFFF] * len(legal))]))
            decisions += 1
        games += 1
    return games, decisions
