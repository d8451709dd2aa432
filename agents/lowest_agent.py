"""Always the lowest legal action: a deterministic baseline that any responder should exploit.

Card ids run through the colours in order and, within a colour, by value
(RULES.md, "Components and encodings"), so this plays the lowest legal card of
the first colour it holds, gives away the lowest cards it may, and declares
the first colour. Best responders are checked against it (and against
``random``): a responder that does not beat it by far measures nothing.
"""

from __future__ import annotations

from jekyll_hyde_env.engine.state import PlayerView


class LowestAgent:
    """Plays ``min(legal_actions)``; deterministic, so ``reset`` has nothing to seed."""

    name = "lowest"

    def reset(self, seed: int | None = None) -> None:
        """No randomness to seed.

        Args:
            seed: ignored.
        """

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The lowest legal action id.

        Args:
            view: the player's view (not read).
            legal_actions: the ids of the legal actions.

        Returns:
            ``min(legal_actions)``.
        """
        return min(legal_actions)
