"""Hidden information: what a player sees, and worlds consistent with it.

``player_view`` gives exactly what RULES.md "What each player knows" allows.
``info_key`` turns a view into a hashable key: two states with the same key are
indistinguishable to that player. ``sample_world`` re-deals only what the player
cannot see and returns a full ``GameState`` whose view for that player equals
the given view; information-set search determinises with it.
"""

from __future__ import annotations

from collections.abc import Hashable
from math import comb
from typing import NamedTuple

import numpy as np

from jekyll_hyde_env.engine.cards import (
    COLOUR_MASKS,
    GREED_SWAP_SIZE,
    POTION_RULE_THRESHOLD,
    POTIONS,
    Phase,
    mask_to_ids,
)
from jekyll_hyde_env.engine.rules import deal_from_rng
from jekyll_hyde_env.engine.state import GameState, PlayerView

_EXCHANGE = int(Phase.EXCHANGE)
_SWAP = int(Phase.SWAP)
# Builds a PlayerView from a tuple of its fields without NamedTuple's Python-level
# __new__; player_view runs at every observation.
_new_view = tuple.__new__
_VOID_MASKS = tuple(sum(COLOUR_MASKS[c] for c in range(3) if bits >> c & 1) for bits in range(8))


def player_view(state: GameState, player: int) -> PlayerView:
    """What ``player`` (0 Jekyll, 1 Hyde) knows of ``state``.

    Hidden: the opponent's hand (except cards the player gave it and it still
    holds), the set-aside cards, the opponent's pending exchange or swap picks
    (only how many it has made is visible, as the turn order shows it), and the
    deals of later rounds.

    Args:
        state: the full game state.
        player: whose view, 0 Jekyll or 1 Hyde.

    Returns:
        The player's ``PlayerView``, its masks and pairs seen from the player's side.
    """
    opp = 1 - player
    dealt = state.deals[state.round - 1][player]
    opp_exch = state.exch_given[opp]
    opp_swap = state.swap_given[opp]
    opp_played = state.played[opp]
    in_exchange = state.phase == _EXCHANGE
    tricks = state.tricks
    return _new_view(
        PlayerView,
        (
            player,
            state.round,
            state.marker,
            state.phase,
            state.to_act,
            state.leader,
            state.hands[player],
            dealt,
            state.picks[player],
            state.picks_left[player],
            state.picks[opp].bit_count(),
            state.hands[opp].bit_count(),
            state.played[player],
            opp_played,
            state.exch_given[player],
            opp_exch,
            state.swap_given[player],
            opp_swap,
            state.hands[opp] & (state.exch_given[player] | state.swap_given[player]),
            state.void[player],
            state.void[opp],
            ((opp_played | opp_exch | opp_swap) & POTIONS & ~dealt).bit_count(),
            None if in_exchange else bool(opp_exch & POTIONS),
            state.lead_card,
            state.declared,
            tuple(state.ranks),
            (tricks[player], tricks[opp]),
            tuple(state.trick_log),
            state.winner,
            state.variant,
        ),
    )


def info_key(view: PlayerView) -> Hashable:
    """A hashable key of the information state; equal views give equal keys.

    Args:
        view: what one player knows (``player_view``).

    Returns:
        The view's fields as a plain tuple, the variant included.
    """
    return tuple(view)


_GAVE_POTION = {None: "-", False: "0", True: "1"}


def info_string(view: PlayerView) -> str:
    """The information state of ``view`` as a short string, the same on every machine.

    Two views give the same string exactly when they are equal, the variant aside (a
    table of strategies is kept per variant). Exact solvers and tabular policies key
    their tables by it.

    Args:
        view: what one player knows (``player_view``).

    Returns:
        The view's numbers joined by ``,`` and ``/``, e.g. ``"0,1,0,1,0,0,5,..."``.
    """
    numbers = view[:22]
    head = ",".join(map(str, numbers))
    tricks = "/".join(",".join(str(int(x)) for x in trick) for trick in view.trick_log)
    ranks = ",".join(map(str, view.ranks))
    return (
        f"{head},{_GAVE_POTION[view.opp_gave_potion]},{view.lead_card},{view.declared},"
        f"{view.tricks[0]},{view.tricks[1]},{view.winner}|{ranks}|{tricks}"
    )


class HiddenCards(NamedTuple):
    """What a view leaves open about the opponent's hand, and its constraints.

    ``unknown``: the cards the player cannot place (the opponent's unknown cards
    and the set-aside ones); ``allowed``: those the opponent may hold, without
    the colours it failed to follow (T3); ``opp_unknown_size``: how many of the
    opponent's cards are unknown; ``max_potions``: how many potions it may hold
    among them (R2.2: one that gave no potion in the exchange was dealt at most
    one).
    """

    unknown: int
    allowed: int
    opp_unknown_size: int
    max_potions: int


def hidden_cards(view: PlayerView) -> HiddenCards:
    """The part of the deal ``view`` does not show, for ``sample_world`` and search.

    Args:
        view: what one player knows (``player_view``).

    Returns:
        ``HiddenCards``: the card mask the player cannot place, the part of it the
        opponent may hold (T3), how many of the opponent's cards are unknown, and how
        many potions may be among them (4, no limit, unless the opponent's exchange
        held no potion, R2.2).
    """
    unknown = view.variant.deck ^ view.hand ^ view.played ^ view.opp_played ^ view.opp_known
    max_potions = 4
    if view.opp_gave_potion is False:
        max_potions = max(0, POTION_RULE_THRESHOLD - 1 - view.opp_dealt_potions_seen)
    return HiddenCards(
        unknown,
        unknown & ~_VOID_MASKS[view.opp_void],
        view.opp_hand_size - view.opp_known.bit_count(),
        max_potions,
    )


def _sample_subset(pool: int, size: int, rng: np.random.Generator) -> int:
    """A uniformly random ``size``-card subset of the card mask ``pool``."""
    if size == 0:
        return 0
    ids = mask_to_ids(pool)
    mask = 0
    for i in rng.permutation(len(ids))[:size].tolist():
        mask |= 1 << ids[i]
    return mask


def _sample_opponent_cards(
    allowed: int, size: int, max_potions: int, rng: np.random.Generator
) -> int:
    """``size`` cards from ``allowed``, uniform among subsets with <= ``max_potions`` potions."""
    potions = allowed & POTIONS
    others = allowed & ~POTIONS
    n_potions = potions.bit_count()
    n_others = others.bit_count()
    if max_potions >= min(n_potions, size):
        return _sample_subset(allowed, size, rng)
    counts = range(max(0, size - n_others), max_potions + 1)
    weights = np.array([comb(n_potions, k) * comb(n_others, size - k) for k in counts], float)
    k = counts[int(rng.choice(len(weights), p=weights / weights.sum()))]
    return _sample_subset(potions, k, rng) | _sample_subset(others, size - k, rng)


def _sample_picks(hand: int, made: int, needs_potion: bool, rng: np.random.Generator) -> int:
    """``made`` hidden picks from ``hand``; a full exchange under R2.2 holds a potion."""
    while True:
        picks = _sample_subset(hand, made, rng)
        if not needs_potion or picks & POTIONS:
            return picks


def sample_world(view: PlayerView, rng: np.random.Generator) -> GameState:
    """A full state consistent with ``view``, drawn uniformly over what is hidden.

    Re-dealt: the opponent's unknown cards and the set-aside cards (the cards
    neither in the player's hand, nor played this round, nor known to be in the
    opponent's hand), the opponent's pending picks and later rounds' deals.
    Respected: cards the player gave and the opponent still holds stay with the
    opponent; colours the opponent failed to follow (T3) are not re-dealt to it;
    an opponent that gave no potion in the exchange was dealt at most one
    (R2.2). The sampled world carries no history and no past rounds' deals, so
    it cannot be replayed as a game record.

    Args:
        view: what one player knows (``player_view``).
        rng: draws the hidden cards, the opponent's pending picks and the later
            rounds' deals.

    Returns:
        A ``GameState`` whose ``player_view`` for ``view.player`` equals ``view``,
        with an empty ``history``.
    """
    player = view.player
    opp = 1 - player
    hidden = hidden_cards(view)
    opp_hand = view.opp_known | _sample_opponent_cards(
        hidden.allowed, hidden.opp_unknown_size, hidden.max_potions, rng
    )
    set_aside = hidden.unknown & ~opp_hand

    ever_held_by_opp = opp_hand | view.opp_played | view.exch_received | view.swap_received
    opp_dealt = ever_held_by_opp & ~view.dealt
    opp_potion_rule = (opp_dealt & POTIONS).bit_count() >= POTION_RULE_THRESHOLD

    opp_picks = 0
    opp_picks_left = 0
    if view.phase == _EXCHANGE or view.phase == _SWAP:
        if view.phase == _EXCHANGE:
            required = view.variant.exchange[view.round - 1]
        else:
            required = min(GREED_SWAP_SIZE, view.opp_hand_size)
        made = view.opp_picks_made
        needs_potion = view.phase == _EXCHANGE and opp_potion_rule and made == required
        opp_picks = _sample_picks(opp_hand, made, needs_potion, rng)
        opp_picks_left = required - made

    variant = view.variant
    deals: list[tuple[int, int]] = [(0, 0)] * variant.rounds
    current = [0, 0]
    current[player] = view.dealt
    current[opp] = opp_dealt
    deals[view.round - 1] = (current[0], current[1])
    for r in range(view.round, variant.rounds):
        deals[r] = deal_from_rng(rng, variant)

    def pair(mine, theirs):
        out = [0, 0]
        out[player] = mine
        out[opp] = theirs
        return out

    return GameState(
        deals=deals,
        round=view.round,
        marker=view.marker,
        phase=view.phase,
        to_act=view.to_act,
        leader=view.leader,
        hands=pair(view.hand, opp_hand),
        set_aside=set_aside,
        potion_rule=pair(
            (view.dealt & POTIONS).bit_count() >= POTION_RULE_THRESHOLD, opp_potion_rule
        ),
        picks=pair(view.picks, opp_picks),
        picks_left=pair(view.picks_left, opp_picks_left),
        lead_card=view.lead_card,
        declared=view.declared,
        ranks=list(view.ranks),
        tricks=pair(*view.tricks),
        played=pair(view.played, view.opp_played),
        exch_given=pair(view.exch_given, view.exch_received),
        swap_given=pair(view.swap_given, view.swap_received),
        void=pair(view.void, view.opp_void),
        trick_log=list(view.trick_log),
        history=[],
        winner=view.winner,
        variant=variant,
    )
