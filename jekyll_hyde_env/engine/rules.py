"""The rules of Jekyll vs Hyde: starting a game, legal actions, applying them.

``apply_action`` changes the state it is given (``GameState.clone`` copies).
All three rounds' deals are drawn in ``new_game``, so applying an action needs
no randomness. The sequence of decisions is RULES.md's "Decision points":
``exchange`` (Jekyll's ``r`` picks, then Hyde's), then tricks of ``lead``,
``declare`` (after a potion lead) and ``follow``, with a ``swap`` after every
Greed effect (T6b) while the hands are not empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import index

import numpy as np

from jekyll_hyde_env.engine.cards import (
    AGENTS,
    ALL_CARDS,
    COLOUR_MASKS,
    COLOUR_OF,
    DECLARE_BASE,
    DECLARE_MASK,
    FIRST_POTION,
    GREED_SWAP_SIZE,
    HYDE,
    JEKYLL,
    NUM_ACTIONS,
    NUM_CARDS,
    PHASE_NAMES,
    POTION_RULE_THRESHOLD,
    POTIONS,
    Effect,
    Phase,
    action_name,
    mask_to_ids,
)
from jekyll_hyde_env.engine.state import GameState, RoundResult, Trick
from jekyll_hyde_env.engine.trick import leader_wins, potion_effect, rank_colour
from jekyll_hyde_env.engine.variant import FULL, Variant

EXCHANGE = int(Phase.EXCHANGE)
LEAD = int(Phase.LEAD)
DECLARE = int(Phase.DECLARE)
FOLLOW = int(Phase.FOLLOW)
SWAP = int(Phase.SWAP)
GAME_OVER = int(Phase.GAME_OVER)
_PRIDE = int(Effect.PRIDE)
_WRATH = int(Effect.WRATH)
_GREED = int(Effect.GREED)

_PHASE_RULE = {
    EXCHANGE: "R2.2: a card of the hand not chosen yet; the potion rule may force a potion",
    LEAD: "T1: any card of the hand",
    DECLARE: "T2: declare a colour, action 25 + colour id",
    FOLLOW: "T3a/T3b: follow the led or declared colour when possible",
    SWAP: "T6b: a card of the hand not chosen yet",
}


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state."""


# --- starting a game -------------------------------------------------------


def deal_from_rng(rng: np.random.Generator, variant: Variant = FULL) -> tuple[int, int]:
    """R2.1 (V2): shuffle the cards in play; a hand to Jekyll, a hand to Hyde, the rest
    set aside.

    Args:
        rng: draws the shuffle (one permutation of the variant's deck).
        variant: the version of the game; the full game shuffles all 25 cards and
            deals 10 each.

    Returns:
        The (Jekyll, Hyde) hands as card masks.
    """
    if variant.deck == ALL_CARDS:
        order = rng.permutation(NUM_CARDS).tolist()
    else:
        deck = mask_to_ids(variant.deck)
        order = [deck[i] for i in rng.permutation(len(deck)).tolist()]
    size = variant.hand_size
    jekyll = hyde = 0
    for card in order[:size]:
        jekyll |= 1 << card
    for card in order[size : 2 * size]:
        hyde |= 1 << card
    return jekyll, hyde


def validate_deal(
    deal: Mapping[str, Sequence[int]], round_number: int = 1, variant: Variant = FULL
) -> tuple[int, int]:
    """Check one round's deal, ``{"jekyll": [10 ids], "hyde": [10 ids]}``.

    Args:
        deal: the two hands by agent name, each a list of card ids.
        round_number: the round dealt, named in errors.
        variant: the version of the game: its hand size and the cards in play (V1, V2).

    Returns:
        The (Jekyll, Hyde) hands as card masks.

    Raises:
        ValueError: naming the problem (unknown key, wrong count, unknown,
            repeated or shared card id, a card not in the variant).
    """
    where = f"deal of round {round_number}"
    if not isinstance(deal, Mapping):
        raise ValueError(f"{where} must be a mapping with keys 'jekyll' and 'hyde', got {deal!r}")
    keys = set(deal)
    if keys != set(AGENTS):
        unknown = sorted(map(str, keys - set(AGENTS)))
        missing = sorted(set(AGENTS) - keys)
        raise ValueError(
            f"{where} must have exactly the keys 'jekyll' and 'hyde'"
            + (f"; unknown keys: {unknown}" if unknown else "")
            + (f"; missing keys: {missing}" if missing else "")
        )
    masks = []
    for agent in AGENTS:
        cards = list(deal[agent])
        if len(cards) != variant.hand_size:
            raise ValueError(
                f"{where}: {agent} must get {variant.hand_size} cards, got {len(cards)}"
            )
        mask = 0
        for card in cards:
            if isinstance(card, bool) or not isinstance(card, (int, np.integer)):
                raise ValueError(f"{where}: {agent}'s card {card!r} is not an integer card id")
            if not 0 <= card < NUM_CARDS:
                raise ValueError(
                    f"{where}: {agent}'s card id {card} is unknown; card ids are 0-{NUM_CARDS - 1}"
                )
            if not variant.deck >> int(card) & 1:
                raise ValueError(
                    f"{where}: {agent}'s card id {card} is not in play in variant "
                    f"{variant.name}; its cards are {mask_to_ids(variant.deck)}"
                )
            if mask >> int(card) & 1:
                raise ValueError(f"{where}: {agent}'s card id {card} is repeated")
            mask |= 1 << int(card)
        masks.append(mask)
    shared = masks[0] & masks[1]
    if shared:
        raise ValueError(f"{where}: card ids {mask_to_ids(shared)} are in both hands")
    return masks[0], masks[1]


def new_game(
    rng: np.random.Generator | None = None,
    deals: Sequence[Mapping[str, Sequence[int]]] | None = None,
    variant: Variant = FULL,
) -> GameState:
    """Start a game at round 1's exchange.

    Args:
        rng: draws the deals of the rounds that ``deals`` does not fix.
        deals: optional fixed deals of rounds 1..k (k <= 3), each
            ``{"jekyll": [10 card ids], "hyde": [10 card ids]}``.
        variant: the version of the game (``engine.variant``); the full game by default.

    Returns:
        The game's state, every round dealt.

    Raises:
        ValueError: a malformed deal, more deals than rounds, or rounds left to
            deal without an ``rng``.
    """
    fixed = list(deals or [])
    if len(fixed) > variant.rounds:
        raise ValueError(f"at most {variant.rounds} deals can be fixed, got {len(fixed)}")
    masks = [validate_deal(d, i + 1, variant) for i, d in enumerate(fixed)]
    if len(masks) < variant.rounds:
        if rng is None:
            raise ValueError("new_game needs an rng to deal the rounds that 'deals' does not fix")
        while len(masks) < variant.rounds:
            masks.append(deal_from_rng(rng, variant))
    return start_from_masks(masks, variant=variant)


def start_from_masks(
    deals: Sequence[tuple[int, int]],
    round_number: int = 1,
    marker: int = 0,
    variant: Variant = FULL,
) -> GameState:
    """Start a game from already valid (Jekyll, Hyde) hand masks, one pair per round.

    ``round_number`` and ``marker`` open a later round directly, as if the game
    had reached it with the marker on that space (search uses this to value the
    start of a round); the defaults are the game's start (R1, R3).

    Args:
        deals: each round's (Jekyll, Hyde) hands as card masks.
        round_number: the round to open (1 to the variant's rounds).
        marker: the marker's space (0 to the track's end minus one).
        variant: the version of the game.

    Returns:
        The state at the exchange of round ``round_number``.

    Raises:
        ValueError: a round or a marker out of the variant's range.
    """
    if not 1 <= round_number <= variant.rounds:
        raise ValueError(f"round_number must be in 1..{variant.rounds}, got {round_number}")
    end = variant.track_end
    if not 0 <= marker < end:
        raise ValueError(
            f"marker must be in 0..{end - 1} (space {end} ends the game), got {marker}"
        )
    state = GameState(deals=list(deals), round=round_number, marker=marker, variant=variant)
    _start_round(state)
    return state


def _start_round(state: GameState) -> None:
    """R2.1/R2.2: deal the round's hands and open the exchange (colour ranks cleared).

    A round whose exchange gives no card (V4) opens at its first trick.
    """
    jekyll, hyde = state.deals[state.round - 1]
    variant = state.variant
    state.hands = [jekyll, hyde]
    state.set_aside = variant.deck ^ jekyll ^ hyde
    state.potion_rule = [
        (jekyll & POTIONS).bit_count() >= POTION_RULE_THRESHOLD,
        (hyde & POTIONS).bit_count() >= POTION_RULE_THRESHOLD,
    ]
    state.picks = [0, 0]
    given = variant.exchange[state.round - 1]
    state.picks_left = [given, given]
    state.phase = EXCHANGE
    state.to_act = JEKYLL
    state.leader = JEKYLL
    state.lead_card = -1
    state.declared = -1
    state.ranks = []
    state.tricks = [0, 0]
    state.played = [0, 0]
    state.exch_given = [0, 0]
    state.swap_given = [0, 0]
    state.void = [0, 0]
    state.trick_log = []
    if given == 0:
        _hand_over_picks(state)


# --- queries -----------------------------------------------------------------


def current_player(state: GameState) -> int:
    """The player to act (0 Jekyll, 1 Hyde), or -1 once the game is over.

    Args:
        state: the game.

    Returns:
        The player id to act: 0 Jekyll or 1 Hyde (in ``exchange`` and ``swap`` Jekyll
        picks first, then Hyde), or -1 once the game is over.
    """
    return state.to_act


def is_terminal(state: GameState) -> bool:
    """True once a player has won (R2.4).

    Args:
        state: the game.

    Returns:
        True in phase ``game_over``: the marker reached the track's end (Hyde wins) or
        the last round ended short of it (Jekyll wins); False before.
    """
    return state.phase == GAME_OVER


def returns(state: GameState) -> tuple[int, int]:
    """R4: (Jekyll's, Hyde's) reward: +1 / -1 at the end, (0, 0) before.

    Args:
        state: the game.

    Returns:
        (1, -1) when Jekyll has won, (-1, 1) when Hyde has won, and (0, 0) while the
        game goes on; a game is never drawn.
    """
    if state.winner < 0:
        return (0, 0)
    return (1, -1) if state.winner == JEKYLL else (-1, 1)


def legal_action_mask(state: GameState) -> int:
    """Bit ``a`` is set when action ``a`` is legal for the player to act.

    T1 lead any card; T2 declare any colour; T3a/T3b follow (see
    ``_follow_mask``); exchange and swap pick a card not chosen yet, and under
    the potion rule (R2.2) the last exchange pick must be a potion when none was
    chosen before. Zero once the game is over.

    Args:
        state: the game.

    Returns:
        A 28-bit action mask (bits 0-24 cards, 25-27 the colours to declare) of the
        actions legal for ``current_player(state)``; 0 once the game is over.
    """
    phase = state.phase
    player = state.to_act
    if phase == FOLLOW:
        return _follow_mask(state.hands[player], state.lead_card, state.declared)
    if phase == LEAD:
        return state.hands[player]
    if phase == DECLARE:
        return DECLARE_MASK
    if phase == GAME_OVER:
        return 0
    picks = state.picks[player]
    mask = state.hands[player] & ~picks
    if (
        phase == EXCHANGE
        and state.potion_rule[player]
        and state.picks_left[player] == 1
        and not picks & POTIONS
    ):
        mask &= POTIONS
    return mask


def _follow_mask(hand: int, lead_card: int, declared: int) -> int:
    """T3a/T3b: the cards a follower may play.

    T3a, a colour card of colour C led: a card of colour C or any potion when
    the hand holds colour C, otherwise any card. T3b, a potion led with colour
    C declared: a card of colour C (no potion) when the hand holds one,
    otherwise any card.
    """
    if lead_card >= FIRST_POTION:
        same = hand & COLOUR_MASKS[declared]
        return same if same else hand
    colour = COLOUR_MASKS[COLOUR_OF[lead_card]]
    if hand & colour:
        return hand & (colour | POTIONS)
    return hand


def legal_actions(state: GameState) -> list[int]:
    """The legal action ids for the player to act, ascending.

    Args:
        state: the game.

    Returns:
        The ids set in ``legal_action_mask(state)``, ascending (0-24 cards, 25-27 the
        colours to declare); empty once the game is over.
    """
    return mask_to_ids(legal_action_mask(state))


# --- applying an action ----------------------------------------------------


def apply_action(state: GameState, action: int) -> None:
    """Apply ``action`` for the player to act, changing ``state`` in place.

    A follow card finishes the trick: its winner (T5), the potion effect (T6) and
    the next leader (T7); after the round's last trick the marker moves (R2.4) and
    the game ends or the next round opens at its exchange.

    Args:
        state: the game, changed in place (``GameState.clone`` keeps a copy); the
            action is appended to its ``history``.
        action: an action id, 0-27 (a Python or numpy integer): a card id to pick in
            ``exchange`` (R2.2) or ``swap`` (T6b), to lead (T1) or to follow (T3), or
            25 + colour id to declare a colour after a potion lead (T2).

    Raises:
        IllegalActionError: the action is not legal here; the message names the
            phase, the action, the legal actions and the rule, or says that the
            game is over.
        TypeError: the action is not an integer.
    """
    action = index(action)
    if not 0 <= action < NUM_ACTIONS or not legal_action_mask(state) >> action & 1:
        raise _illegal(state, action)
    state.history.append(action)
    phase = state.phase
    player = state.to_act
    if phase == LEAD:
        bit = 1 << action
        state.hands[player] ^= bit
        state.played[player] |= bit
        state.lead_card = action
        state.leader = player
        if action >= FIRST_POTION:
            state.phase = DECLARE
        else:
            rank_colour(state.ranks, action)
            state.phase = FOLLOW
            state.to_act = 1 - player
    elif phase == FOLLOW:
        bit = 1 << action
        state.hands[player] ^= bit
        state.played[player] |= bit
        _note_void(state, player, action)
        rank_colour(state.ranks, action)
        _finish_trick(state, action)
    elif phase == DECLARE:
        state.declared = action - DECLARE_BASE
        state.phase = FOLLOW
        state.to_act = 1 - player
    else:
        state.picks[player] |= 1 << action
        state.picks_left[player] -= 1
        if state.picks_left[player] == 0:
            if player == JEKYLL:
                state.to_act = HYDE
            else:
                _hand_over_picks(state)


def _illegal(state: GameState, action: int) -> IllegalActionError:
    if state.phase == GAME_OVER:
        return IllegalActionError(f"action {action} was given but the game is over")
    legal = legal_actions(state)
    what = action_name(action) if 0 <= action < NUM_ACTIONS else "out of range 0-27"
    return IllegalActionError(
        f"illegal action {action} ({what}) for {AGENTS[state.to_act]} in phase "
        f"'{PHASE_NAMES[state.phase]}'; legal actions are {legal} "
        f"({_PHASE_RULE[state.phase]})"
    )


def _note_void(state: GameState, player: int, card: int) -> None:
    """T3: a follower who does not follow shows a lack of the colour asked.

    After a potion lead (T3b) any card not of the declared colour shows the
    lack; after a colour lead (T3a) a potion is always allowed, so only a card
    of another colour shows it.
    """
    lead = state.lead_card
    if lead >= FIRST_POTION:
        asked = state.declared
        if card >= FIRST_POTION or COLOUR_OF[card] != asked:
            state.void[player] |= 1 << asked
    elif card < FIRST_POTION:
        asked = COLOUR_OF[lead]
        if COLOUR_OF[card] != asked:
            state.void[player] |= 1 << asked


def _finish_trick(state: GameState, follow_card: int) -> None:
    """T5 winner, T6 effect, T7 next leader; ends the round after the tenth trick."""
    leader = state.leader
    lead_card = state.lead_card
    winner = leader if leader_wins(lead_card, follow_card, state.ranks) else 1 - leader
    loser = 1 - winner
    tricks = state.tricks
    tricks[winner] += 1
    effect = potion_effect(lead_card, follow_card)
    steal = False
    if effect == _PRIDE:
        if tricks[loser] > 0:  # T6a
            tricks[loser] -= 1
            tricks[winner] += 1
            steal = True
    elif effect == _WRATH:  # T6c
        state.ranks.clear()
    state.trick_log.append(
        Trick(leader, lead_card, state.declared, follow_card, winner, int(effect), steal)
    )
    state.lead_card = -1
    state.declared = -1
    state.leader = winner
    hand_size = state.hands[0].bit_count()
    if hand_size == 0:
        _end_round(state)
    elif effect == _GREED:  # T6b
        picks = min(GREED_SWAP_SIZE, hand_size)
        state.phase = SWAP
        state.picks_left = [picks, picks]
        state.to_act = JEKYLL
    else:
        state.phase = LEAD
        state.to_act = winner


def _hand_over_picks(state: GameState) -> None:
    """Exchange (R2.2) or Greed swap (T6b): the chosen cards change hands together."""
    jekyll_pick, hyde_pick = state.picks
    state.hands[JEKYLL] = state.hands[JEKYLL] ^ jekyll_pick | hyde_pick
    state.hands[HYDE] = state.hands[HYDE] ^ hyde_pick | jekyll_pick
    state.picks = [0, 0]
    if state.phase == EXCHANGE:
        state.exch_given = [jekyll_pick, hyde_pick]
        state.leader = JEKYLL if state.marker < state.variant.hyde_leads_from else HYDE  # R3
    else:
        state.swap_given[JEKYLL] |= jekyll_pick
        state.swap_given[HYDE] |= hyde_pick
    state.phase = LEAD
    state.to_act = state.leader


def _end_round(state: GameState) -> None:
    """R2.4: move the marker by the trick difference; end the game or deal again."""
    jekyll, hyde = state.tricks
    end = state.variant.track_end
    state.marker = min(end, state.marker + abs(jekyll - hyde))
    state.round_log.append(RoundResult(jekyll, hyde, state.marker, tuple(state.trick_log)))
    if state.marker >= end:
        _game_over(state, HYDE)
    elif state.round == state.variant.rounds:
        _game_over(state, JEKYLL)
    else:
        state.round += 1
        _start_round(state)


def _game_over(state: GameState, winner: int) -> None:
    state.winner = winner
    state.phase = GAME_OVER
    state.to_act = -1
