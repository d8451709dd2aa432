"""The observation: named pieces of one flat int8 vector, built from a player view.

``LAYOUT`` lists the pieces in order as (name, size, meaning). Card pieces have
25 entries indexed by card id; one-hot pieces have one entry per value. The
vector holds the player's whole information state and nothing hidden, because
it is built from ``engine.player_view`` alone. ``action_mask`` comes from the
engine's legal actions and is all zeros for a player who is not to act.
"""

from __future__ import annotations

import numpy as np

from .engine.cards import (
    HAND_SIZE,
    MAX_ROUNDS,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_COLOURS,
    NUM_PHASES,
    TRACK_END,
)
from .engine.rules import legal_action_mask
from .engine.state import GameState, PlayerView

_MAX_PICKS = MAX_ROUNDS  # at most 3 exchange picks (round 3), Greed swaps need 2

LAYOUT: tuple[tuple[str, int, str], ...] = (
    ("hand", NUM_CARDS, "cards in my hand"),
    ("my_picks", NUM_CARDS, "cards I chose so far in this exchange or swap"),
    ("played_by_me", NUM_CARDS, "cards I played this round"),
    ("played_by_opponent", NUM_CARDS, "cards the opponent played this round"),
    ("exchange_given", NUM_CARDS, "cards I gave in this round's exchange"),
    ("exchange_received", NUM_CARDS, "cards I received in this round's exchange"),
    ("swap_given", NUM_CARDS, "cards I gave in this round's Greed swaps"),
    ("swap_received", NUM_CARDS, "cards I received in this round's Greed swaps"),
    ("opponent_known", NUM_CARDS, "cards I gave that the opponent still holds"),
    ("trick_lead", NUM_CARDS, "the card led in the current trick"),
    ("declared_colour", NUM_COLOURS, "colour declared after a potion lead (T2)"),
    ("opponent_void", NUM_COLOURS, "colours the opponent failed to follow this round (T3)"),
    ("my_void", NUM_COLOURS, "colours I failed to follow this round (public)"),
    ("colour_ranks", NUM_COLOURS * 3, "rank of each colour: index 3*colour + rank, rank 0 weakest"),
    ("my_tricks", HAND_SIZE + 1, "tricks I hold this round, one-hot 0-10"),
    ("opponent_tricks", HAND_SIZE + 1, "tricks the opponent holds this round, one-hot 0-10"),
    ("marker", TRACK_END + 1, "marker space, one-hot 0-10"),
    ("round", MAX_ROUNDS, "round number, one-hot 1-3"),
    ("my_role", 2, "my role: jekyll, hyde"),
    ("phase", NUM_PHASES, "phase: exchange, lead, declare, follow, swap"),
    ("my_turn", 1, "1 when I am to act"),
    ("i_led", 1, "1 when I led the current trick"),
    ("picks_left", _MAX_PICKS + 1, "cards I still have to choose, one-hot 0-3"),
    ("tricks_played", HAND_SIZE, "tricks finished this round, one-hot 0-9"),
)

OFFSETS: dict[str, slice] = {}
_start = 0
for _name, _size, _ in LAYOUT:
    OFFSETS[_name] = slice(_start, _start + _size)
    _start += _size
OBS_SIZE = _start

_CARD_PLANES = 10  # the first ten pieces are card masks
_CARD_END = _CARD_PLANES * NUM_CARDS
_SHIFTS = np.arange(NUM_CARDS, dtype=np.int64)
_MASK_SHIFTS = np.arange(NUM_ACTIONS, dtype=np.int64)


def _offset(name: str) -> int:
    return OFFSETS[name].start


_DECLARED = _offset("declared_colour")
_OPP_VOID = _offset("opponent_void")
_MY_VOID = _offset("my_void")
_RANKS = _offset("colour_ranks")
_MY_TRICKS = _offset("my_tricks")
_OPP_TRICKS = _offset("opponent_tricks")
_MARKER = _offset("marker")
_ROUND = _offset("round")
_ROLE = _offset("my_role")
_PHASE = _offset("phase")
_MY_TURN = _offset("my_turn")
_I_LED = _offset("i_led")
_PICKS_LEFT = _offset("picks_left")
_TRICKS_PLAYED = _offset("tricks_played")


def encode(view: PlayerView) -> np.ndarray:
    """The flat int8 observation of a view, laid out as ``LAYOUT`` says."""
    lead = 1 << view.lead_card if view.lead_card >= 0 else 0
    masks = np.array(
        [
            view.hand,
            view.picks,
            view.played,
            view.opp_played,
            view.exch_given,
            view.exch_received,
            view.swap_given,
            view.swap_received,
            view.opp_known,
            lead,
        ],
        dtype=np.int64,
    )
    obs = np.zeros(OBS_SIZE, dtype=np.int8)
    obs[:_CARD_END] = ((masks[:, None] >> _SHIFTS) & 1).ravel()
    ones = [
        _MY_TRICKS + view.tricks[0],
        _OPP_TRICKS + view.tricks[1],
        _MARKER + view.marker,
        _ROUND + view.round - 1,
        _ROLE + view.player,
    ]
    if view.phase < NUM_PHASES:
        ones.append(_PHASE + view.phase)
        ones.append(_TRICKS_PLAYED + len(view.trick_log))
    if view.declared >= 0:
        ones.append(_DECLARED + view.declared)
    for colour in range(NUM_COLOURS):
        if view.opp_void >> colour & 1:
            ones.append(_OPP_VOID + colour)
        if view.void >> colour & 1:
            ones.append(_MY_VOID + colour)
    for rank, colour in enumerate(view.ranks):
        ones.append(_RANKS + 3 * colour + rank)
    if view.to_act == view.player:
        ones.append(_MY_TURN)
    if view.lead_card >= 0 and view.leader == view.player:
        ones.append(_I_LED)
    ones.append(_PICKS_LEFT + view.picks_left)
    obs[ones] = 1
    return obs


def action_mask(state: GameState, player: int) -> np.ndarray:
    """int8 mask over the 28 actions: the engine's legal actions for ``player``.

    All zeros when ``player`` is not the one to act, or the game is over.
    """
    if state.to_act != player:
        return np.zeros(NUM_ACTIONS, dtype=np.int8)
    return ((legal_action_mask(state) >> _MASK_SHIFTS) & 1).astype(np.int8)


def decode(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation into its named pieces (views, not copies)."""
    if obs.shape[-1] != OBS_SIZE:
        raise ValueError(f"observation has {obs.shape[-1]} entries, expected {OBS_SIZE}")
    return {name: obs[..., OFFSETS[name]] for name, _, _ in LAYOUT}
