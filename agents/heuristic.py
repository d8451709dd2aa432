"""Role-aware rules of thumb: a fast, fixed baseline that beats random play.

The goals follow R2.4: the marker moves by the trick difference of each round,
so Hyde wants the difference large either way and Jekyll wants it level.

* Direction. Hyde plays for whichever side of the difference it leads on (it
  wants to win tricks when ahead and to lose them when behind); when level it
  goes the way its hand is strong. Jekyll wants to win when behind and to lose
  when ahead; when level it leads low to hand the lead over cheaply.
* Follow (T3, T5). Every legal card's outcome is known once the lead is on the
  table, Pride's steal included (T6a: the winner's count rises by 2, the
  loser's falls by 1). The card whose outcome best serves the role is played;
  among equals, a winner is the cheapest card that wins and a loser the card
  the plan can spare (high cards when losing tricks is the plan, low ones
  otherwise).
* Lead (T1, T4). To win, lead the strongest card by colour rank and value; to
  lose, the weakest. Potions are kept for following when losing is the plan.
* Declare (T2, T3b). To win with the potion, name a colour the opponent cannot
  follow (known void, T3) or that this hand holds most of; to lose, name the
  colour this hand holds least of, so the opponent must answer in it.
* Exchange and swap (R2.2, T6b). Give away what the plan needs least: Hyde keeps
  extremes (very high cards win, very low ones lose) and gives middle values;
  Jekyll gives its highest cards and potions, which make tricks swing. The
  potion rule is respected because only legal actions are considered.
"""

from __future__ import annotations

from jekyll_hyde_env.engine.cards import (
    COLOUR_MASKS,
    COLOUR_OF,
    DECLARE_BASE,
    FIRST_POTION,
    HYDE,
    NUM_COLOURS,
    PRIDE,
    STRENGTH2,
    Phase,
    mask_to_ids,
)
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.trick import leader_wins, potion_effect, rank_colour

_EXCHANGE, _LEAD, _DECLARE, _FOLLOW, _SWAP = (
    int(Phase.EXCHANGE),
    int(Phase.LEAD),
    int(Phase.DECLARE),
    int(Phase.FOLLOW),
    int(Phase.SWAP),
)


def lead_strength(card: int, ranks: tuple[int, ...]) -> float:
    """How likely a led card is to win the trick (T4, T5): colour rank, then value.

    Args:
        card: the card id (0-24).
        ranks: the colours ranked so far, weakest first (``PlayerView.ranks``); an
            unranked colour counts as the middle one.

    Returns:
        A score that grows with the card's chance of winning: ``7 * rank + value``
        for a colour card (1-21, rank 0-2 being the colour's place in ``ranks``), and
        9.5-12.5 for a potion (7 plus its number plus one half).
    """
    if card >= FIRST_POTION:
        return 7 + STRENGTH2[card] / 2  # beats every card below its number
    colour = COLOUR_OF[card]
    rank = ranks.index(colour) if colour in ranks else 1  # unranked: middle, roughly
    return 7 * rank + card % 7 + 1


def _hand_is_strong(view: PlayerView) -> bool:
    cards = mask_to_ids(view.hand)
    return sum(lead_strength(c, view.ranks) for c in cards) / max(len(cards), 1) >= 9


def wants_to_win(view: PlayerView) -> bool:
    """Whether the player's plan wants this trick (see the module docstring).

    Args:
        view: what the player to act knows; its ``player``, ``tricks`` and hand decide.

    Returns:
        True when the plan is to win the trick: for Hyde, when it leads on tricks, or
        when they are level and its hand is strong; for Jekyll, when it is behind.
        False otherwise.
    """
    mine, theirs = view.tricks
    if view.player == HYDE:
        if mine != theirs:
            return mine > theirs
        return _hand_is_strong(view)
    if mine != theirs:
        return mine < theirs
    return False


def _trick_outcome(view: PlayerView, card: int) -> tuple[int, int]:
    """(my tricks, opponent's tricks) after answering the current lead with ``card``."""
    ranks = list(view.ranks)
    rank_colour(ranks, card)  # T4: ranks are set before the trick is compared
    i_win = not leader_wins(view.lead_card, card, ranks)
    mine, theirs = view.tricks
    pride = potion_effect(view.lead_card, card) == 1 + PRIDE  # Effect.PRIDE
    if i_win:
        mine += 1
        if pride and theirs > 0:
            mine, theirs = mine + 1, theirs - 1
    else:
        theirs += 1
        if pride and mine > 0:
            mine, theirs = mine - 1, theirs + 1
    return mine, theirs


class HeuristicAgent:
    """The rules of thumb above; deterministic, so ``reset`` has nothing to seed."""

    name = "heuristic"

    def reset(self, seed: int | None = None) -> None:
        """No randomness to seed.

        Args:
            seed: ignored.
        """

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The action the rules of thumb pick for this phase (see the module docstring).

        Args:
            view: what the player knows: its hand, the tricks, the colour ranks,
                the card led and the opponent's known voids.
            legal_actions: the ids of the legal actions.

        Returns:
            The chosen action id; the only legal one when there is a single one.
        """
        phase = view.phase
        if len(legal_actions) == 1:
            return legal_actions[0]
        if phase == _FOLLOW:
            return self._follow(view, legal_actions)
        if phase == _LEAD:
            return self._lead(view, legal_actions)
        if phase == _DECLARE:
            return self._declare(view, legal_actions)
        return self._give(view, legal_actions)

    def _follow(self, view: PlayerView, legal: list[int]) -> int:
        hyde = view.player == HYDE
        plan_wins = wants_to_win(view)

        def score(card: int) -> tuple[float, float]:
            mine, theirs = _trick_outcome(view, card)
            gap = mine - theirs
            if hyde:
                value = gap if plan_wins else -gap
            else:
                value = -abs(gap)
            strength = lead_strength(card, view.ranks)
            won = mine > view.tricks[0]
            # Tie-break: the cheapest winner; a loser the plan can spare.
            spare = -strength if won or plan_wins else strength
            return value, spare

        return max(legal, key=score)

    def _lead(self, view: PlayerView, legal: list[int]) -> int:
        if wants_to_win(view):
            return max(legal, key=lambda c: lead_strength(c, view.ranks))
        colour_cards = [c for c in legal if c < FIRST_POTION] or legal
        return min(colour_cards, key=lambda c: lead_strength(c, view.ranks))

    def _declare(self, view: PlayerView, legal: list[int]) -> int:
        held = [(view.hand & COLOUR_MASKS[c]).bit_count() for c in range(NUM_COLOURS)]
        if wants_to_win(view):
            void = [c for c in range(NUM_COLOURS) if view.opp_void >> c & 1]
            colour = void[0] if void else max(range(NUM_COLOURS), key=lambda c: held[c])
        else:
            colour = min(range(NUM_COLOURS), key=lambda c: held[c])
        return DECLARE_BASE + colour if DECLARE_BASE + colour in legal else legal[0]

    def _give(self, view: PlayerView, legal: list[int]) -> int:
        if view.player == HYDE:
            # keep extremes: give the card closest to the middle value 4
            return min(legal, key=lambda c: (abs((c % 7 + 1) - 4) if c < FIRST_POTION else 9, c))
        return max(legal, key=lambda c: (c >= FIRST_POTION, c % 7 if c < FIRST_POTION else 0, c))
