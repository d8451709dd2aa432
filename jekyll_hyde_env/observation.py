"""The observation: named pieces of one flat int8 vector, built from a player view.

``LAYOUT`` lists the pieces in order as (name, size, meaning). Card pieces have
25 entries indexed by card id; one-hot pieces have one entry per value. The
vector holds the player's whole information state and nothing hidden, because
it is built from ``engine.player_view`` alone. ``action_mask`` comes from the
engine's legal actions and is all zeros for a player who is not to act.
"""

from __future__ import annotations

import numpy as np

from jekyll_hyde_env.engine.cards import (
    HAND_SIZE,
    MAX_ROUNDS,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_COLOURS,
    NUM_PHASES,
    TRACK_END,
)
from jekyll_hyde_env.engine.rules import legal_action_mask
from jekyll_hyde_env.engine.state import GameState, PlayerView

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

_OBS_BYTES = (OBS_SIZE + NUM_ACTIONS + 7) // 8
_MASK_SHIFT = OBS_SIZE  # the action mask rides after the observation bits
_MASK_END = _MASK_SHIFT + NUM_ACTIONS


def _offset(name: str) -> int:
    return OFFSETS[name].start


_CARD_OFFSETS = tuple(
    _offset(name)
    for name in (
        "hand",
        "my_picks",
        "played_by_me",
        "played_by_opponent",
        "exchange_given",
        "exchange_received",
        "swap_given",
        "swap_received",
        "opponent_known",
        "trick_lead",
    )
)
(
    _HAND,
    _PICKS,
    _PLAYED,
    _OPP_PLAYED,
    _EXCH_GIVEN,
    _EXCH_RECEIVED,
    _SWAP_GIVEN,
    _SWAP_RECEIVED,
    _OPP_KNOWN,
    _LEAD,
) = _CARD_OFFSETS
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
_TAIL = _DECLARED  # first entry after the card planes
_RANK_TAIL_BITS: dict[tuple[int, ...], int] = {
    ranks: sum(1 << (_RANKS - _TAIL + 3 * colour + rank) for rank, colour in enumerate(ranks))
    for ranks in [()]
    + [(c,) for c in range(NUM_COLOURS)]
    + [(a, b, 3 - a - b) for a in range(NUM_COLOURS) for b in range(NUM_COLOURS) if a != b]
}


def _bits(view: PlayerView) -> int:
    """The observation as one integer: bit ``i`` is entry ``i`` of the vector.

    Building a Python integer and unpacking it once is several times faster
    than writing the pieces into an array one by one.
    """
    (
        player,
        round_number,
        marker,
        phase,
        to_act,
        leader,
        hand,
        _dealt,
        picks,
        picks_left,
        _opp_picks_made,
        _opp_hand_size,
        played,
        opp_played,
        exch_given,
        exch_received,
        swap_given,
        swap_received,
        opp_known,
        void,
        opp_void,
        _opp_dealt_potions_seen,
        _opp_gave_potion,
        lead_card,
        declared,
        ranks,
        tricks,
        trick_log,
        _winner,
        _variant,
    ) = view
    cards = (
        hand << _HAND
        | picks << _PICKS
        | played << _PLAYED
        | opp_played << _OPP_PLAYED
        | exch_given << _EXCH_GIVEN
        | exch_received << _EXCH_RECEIVED
        | swap_given << _SWAP_GIVEN
        | swap_received << _SWAP_RECEIVED
        | opp_known << _OPP_KNOWN
    )
    # The pieces after the card planes are gathered in a short integer first,
    # then shifted into place once: fewer operations on the long integer.
    tail = (
        opp_void << _OPP_VOID - _TAIL
        | void << _MY_VOID - _TAIL
        | _RANK_TAIL_BITS[ranks]
        | 1 << (_MY_TRICKS - _TAIL + tricks[0])
        | 1 << (_OPP_TRICKS - _TAIL + tricks[1])
        | 1 << (_MARKER - _TAIL + marker)
        | 1 << (_ROUND - _TAIL + round_number - 1)
        | 1 << (_ROLE - _TAIL + player)
        | 1 << (_PICKS_LEFT - _TAIL + picks_left)
    )
    if phase < NUM_PHASES:
        tail |= 1 << (_PHASE - _TAIL + phase) | 1 << (_TRICKS_PLAYED - _TAIL + len(trick_log))
    if lead_card >= 0:
        cards |= 1 << (_LEAD + lead_card)
        if leader == player:
            tail |= 1 << (_I_LED - _TAIL)
    if declared >= 0:
        tail |= 1 << (_DECLARED - _TAIL + declared)
    if to_act == player:
        tail |= 1 << (_MY_TURN - _TAIL)
    return cards | tail << _TAIL


# Byte values with their bit order reversed: numpy's fastest unpacking reads
# each byte most significant bit first, while bit i of the integer is entry i.
_REVERSE_BITS = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def _unpack(bits: int) -> np.ndarray:
    """All ``8 * _OBS_BYTES`` entries of ``bits`` as an int8 array (entry i = bit i)."""
    raw = bits.to_bytes(_OBS_BYTES, "little").translate(_REVERSE_BITS)
    return np.unpackbits(np.frombuffer(raw, np.uint8)).view(np.int8)


def encode(view: PlayerView) -> np.ndarray:
    """The flat int8 observation of a view, laid out as ``LAYOUT`` says.

    Args:
        view: what one player knows (``engine.player_view``).

    Returns:
        int8 array of ``OBS_SIZE`` (327) entries, each 0 or 1.
    """
    return _unpack(_bits(view))[:OBS_SIZE]


PACKED_BYTES = _OBS_BYTES
"""Bytes per observation in ``encode_packed``: its entries, then the action mask's."""


def encode_packed(view: PlayerView, legal_mask: int = 0) -> bytes:
    """``encode_with_mask(view, legal_mask)`` as packed bits, for tables of many views.

    Eight entries per byte, entry ``i`` in bit ``i % 8`` of byte ``i // 8``: the
    observation's ``OBS_SIZE`` entries, then the mask's ``NUM_ACTIONS``.
    ``unpack_rows`` turns stacked rows back into observations.

    Args:
        view: what one player knows (``engine.player_view``).
        legal_mask: the legal actions as an integer (bit ``a`` for action ``a``).

    Returns:
        ``PACKED_BYTES`` bytes.
    """
    return (_bits(view) | legal_mask << _MASK_SHIFT).to_bytes(_OBS_BYTES, "little")


def unpack_rows(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Observations and action masks of rows of ``encode_packed`` bytes.

    Args:
        packed: uint8 array of shape (n, ``PACKED_BYTES``).

    Returns:
        observations: int8 array (n, ``OBS_SIZE``), as ``encode`` gives each.
        masks: int8 array (n, ``NUM_ACTIONS``).
    """
    both = np.unpackbits(packed, axis=1, bitorder="little").view(np.int8)
    return both[:, :OBS_SIZE], both[:, _MASK_SHIFT:_MASK_END]


def encode_with_mask(view: PlayerView, legal_mask: int) -> tuple[np.ndarray, np.ndarray]:
    """``encode(view)`` and the int8 action mask of ``legal_mask``, unpacked together.

    Args:
        view: what one player knows (``engine.player_view``).
        legal_mask: the legal actions as an integer, bit ``a`` set when action ``a``
            (0-27) is legal (``engine.legal_action_mask``, or 0 for a player who
            is not to act).

    Returns:
        observation: int8 array of ``OBS_SIZE`` (327) entries, as ``encode(view)``.
        mask: int8 array of 28 entries, 1 for the legal actions.
    """
    both = _unpack(_bits(view) | legal_mask << _MASK_SHIFT)
    return both[:OBS_SIZE], both[_MASK_SHIFT:_MASK_END]


def action_mask(state: GameState, player: int) -> np.ndarray:
    """int8 mask over the 28 actions: the engine's legal actions for ``player``.

    All zeros when ``player`` is not the one to act, or the game is over.

    Args:
        state: the game.
        player: 0 Jekyll, 1 Hyde.

    Returns:
        int8 array of 28 entries, 1 where the action id is legal.
    """
    if state.to_act != player:
        return np.zeros(NUM_ACTIONS, dtype=np.int8)
    return _unpack(legal_action_mask(state))[:NUM_ACTIONS]


def decode(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation into its named pieces (views, not copies).

    Args:
        obs: an observation of ``OBS_SIZE`` (327) entries, or a batch of them with
            the entries on the last axis.

    Returns:
        Each piece name of ``LAYOUT`` mapped to its slice of the last axis of
        ``obs``, in ``LAYOUT``'s order.

    Raises:
        ValueError: the last axis does not have ``OBS_SIZE`` entries.
    """
    if obs.shape[-1] != OBS_SIZE:
        raise ValueError(f"observation has {obs.shape[-1]} entries, expected {OBS_SIZE}")
    return {name: obs[..., OFFSETS[name]] for name, _, _ in LAYOUT}
