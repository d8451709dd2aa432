"""Uniformly random legal play, seeded."""

from __future__ import annotations

import numpy as np

from jekyll_hyde_env.engine.state import PlayerView


class RandomAgent:
    """Chooses uniformly among the legal actions with its own seeded generator.

    Args:
        seed: seeds the generator (None: a seed drawn from the operating system).
    """

    name = "random"
    uniform_random = True  # the batched environments play it in C instead

    def __init__(self, seed: int | None = None):
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator for the next game.

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """A uniformly random one of ``legal_actions``.

        Args:
            view: the player's view (not read: every legal action is as likely).
            legal_actions: the ids of the legal actions.

        Returns:
            The chosen action id.
        """
        return legal_actions[int(self._rng.integers(len(legal_actions)))]
