"""Uniformly random legal play, seeded."""

from __future__ import annotations

import numpy as np

from jekyll_hyde_env.engine.state import PlayerView


class RandomAgent:
    """Chooses uniformly among the legal actions with its own seeded generator."""

    name = "random"
    uniform_random = True  # the batched environments play it in C instead

    def __init__(self, seed: int | None = None):
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        return legal_actions[int(self._rng.integers(len(legal_actions)))]
