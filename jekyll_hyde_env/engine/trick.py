"""Colour ranks, the trick winner and potion effects (T4, T5, T6).

Small pure functions over card ids; ``rules`` calls them once per card played
or per trick.
"""

from __future__ import annotations

from jekyll_hyde_env.engine.cards import (
    COLOUR_OF,
    EFFECT_OF_COLOUR,
    FIRST_POTION,
    STRENGTH2,
    Effect,
)


def rank_colour(ranks: list[int], card: int) -> None:
    """T4: rank the colour of a colour card played, if it is not ranked yet.

    ``ranks`` lists colour ids weakest first. The first colour ranked is the
    weakest and the second the middle one; at that moment the third becomes
    the strongest, so ``ranks`` only ever holds 0, 1 or 3 colours. Potions rank
    nothing.

    Args:
        ranks: the colour ids ranked so far, weakest first (``GameState.ranks``);
            changed in place.
        card: the card id played, 0-24.
    """
    if card < FIRST_POTION:
        colour = COLOUR_OF[card]
        if colour not in ranks:
            ranks.append(colour)
            if len(ranks) == 2:
                ranks.append(3 - ranks[0] - ranks[1])


def leader_wins(lead_card: int, follow_card: int, ranks: list[int]) -> bool:
    """T5: True when the lead card beats the follow card.

    T5a: without potions, the higher value wins within a colour and the higher
    ranked colour wins across colours (both colours are ranked by then, T4).
    T5b/T5c: with a potion, strength alone decides, a potion counting its
    number plus one half (``STRENGTH2`` doubles strengths to stay integral), so
    ties cannot happen.

    Args:
        lead_card: the leader's card id, 0-24.
        follow_card: the follower's card id, 0-24.
        ranks: the colour ids ranked, weakest first, once both cards have ranked
            theirs (``rank_colour``); read only for two colour cards of different
            colours.

    Returns:
        True when the leader wins the trick, False when the follower does.
    """
    if lead_card >= FIRST_POTION or follow_card >= FIRST_POTION:
        return STRENGTH2[lead_card] > STRENGTH2[follow_card]
    lead_colour = COLOUR_OF[lead_card]
    follow_colour = COLOUR_OF[follow_card]
    if lead_colour == follow_colour:
        return lead_card > follow_card
    return ranks.index(lead_colour) > ranks.index(follow_colour)


def potion_effect(lead_card: int, follow_card: int) -> Effect:
    """T6: the effect set by the colour of the non-potion card.

    Exactly one potion: Pride, Wrath or Greed after the other card's colour.
    No potion or two potions: no effect.

    Args:
        lead_card: the leader's card id, 0-24.
        follow_card: the follower's card id, 0-24.

    Returns:
        ``Effect.PRIDE`` (T6a), ``Effect.WRATH`` (T6c) or ``Effect.GREED`` (T6b)
        when exactly one card is a potion, after the other card's colour;
        ``Effect.NONE`` otherwise.
    """
    lead_potion = lead_card >= FIRST_POTION
    if lead_potion == (follow_card >= FIRST_POTION):
        return Effect.NONE
    other = follow_card if lead_potion else lead_card
    return EFFECT_OF_COLOUR[COLOUR_OF[other]]
