"""Reading one game of ``BatchedGames`` back: its actions, its engine state, its C tuple.

``GameReadback`` is a part of ``BatchedGames`` (its base class): the methods that turn
one game of the batch into something to inspect or to compare with the Python engine,
which the differential tests and the arena's checks use; the stepping and observing
stay in ``jekyll_hyde_env.vector``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from jekyll_hyde_env.engine.rules import apply_action, start_from_masks
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.engine.variant import Variant

if TYPE_CHECKING:
    from jekyll_hyde_env.vector_inputs import CoreGames


class GameReadback:
    """One game of the batch read back (``BatchedGames`` sets the attributes below)."""

    deals: np.ndarray
    variant: Variant
    _games: CoreGames

    def _check_reset(self) -> None:
        raise NotImplementedError  # BatchedGames'

    def history(self, game: int) -> list[int]:
        """Game ``game``'s actions so far, from its deal on (the illegal one excepted).

        Args:
            game: the game's index in the batch.

        Returns:
            The action ids, in the order they were played.

        Raises:
            RuntimeError: before the first ``reset``.
        """
        self._check_reset()
        actions = self._games.history(game)
        if actions is None:  # pragma: no cover - a game has at most 132 decisions
            raise RuntimeError(f"game {game} holds more actions than the core records")
        return list(actions)

    def engine_state(self, game: int) -> GameState:
        """Game ``game`` as a Python engine ``GameState``, replayed from its deals and
        actions (with its trick and round logs, which the C state does not keep).

        Args:
            game: the game's index in the batch.

        Returns:
            A new ``GameState``; changing it does not change the C game.

        Raises:
            RuntimeError: before the first ``reset``.
        """
        variant = self.variant
        deals = [(int(j), int(h)) for j, h in self.deals[game][: variant.rounds]]
        state = start_from_masks(deals, variant=variant)
        for action in self.history(game):
            apply_action(state, action)
        return state

    def state(self, game: int) -> tuple[int, ...]:
        """Game ``game``'s full state as the core's tuple (``core/jh_pystate.h``).

        Args:
            game: the game's index in the batch.

        Returns:
            The C state's fields as integers, in the order ``core/jh_pystate.h``
                gives them.

        Raises:
            RuntimeError: before the first ``reset``.
        """
        self._check_reset()
        return self._games.state(game)
