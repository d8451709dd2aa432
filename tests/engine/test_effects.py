"""T6: potion effects, applied once the trick's winner is known."""

from __future__ import annotations

import pytest

from jekyll_hyde_env.engine import Effect, IllegalActionError, Phase, legal_actions
from jekyll_hyde_env.engine.cards import GREED, HYDE, JEKYLL, PRIDE, WRATH

from .helpers import card, hand, play, trick_state


def test_t6a_pride_winner_takes_a_trick_from_the_loser():
    # Hyde has 2 tricks; Jekyll's 4+ beats Hyde's Pride 3: Jekyll +2, Hyde -1.
    state = trick_state(["4+", "W1", "W2"], ["P3", "G1", "G2"], tricks=(1, 2))
    play(state, "4+", "pride", "P3")
    last = state.trick_log[-1]
    assert last.winner == JEKYLL and last.effect == Effect.PRIDE and last.pride_steal
    assert state.tricks == [3, 1]


def test_t6a_pride_with_no_trick_to_take_does_nothing_more():
    state = trick_state(["P6", "W1"], ["2+", "G1"], tricks=(0, 3))
    play(state, "P6", "2+")  # Pride 6 beats potion 2+; Hyde has tricks, Jekyll wins
    assert state.tricks == [2, 2]
    state = trick_state(["P6", "W1"], ["2+", "G1"], tricks=(3, 0))
    play(state, "P6", "2+")
    assert state.tricks == [4, 0] and not state.trick_log[-1].pride_steal


def test_t6a_pride_steal_when_the_potion_loses():
    # The potion player loses; the Pride card's owner wins and steals.
    state = trick_state(["3+", "W1"], ["P5", "G1"], tricks=(2, 0))
    play(state, "3+", "pride", "P5")
    assert state.trick_log[-1].winner == HYDE
    assert state.tricks == [1, 2]


def test_t6b_greed_both_players_choose_two_cards_then_swap():
    state = trick_state(["4+", "W1", "W2", "P1"], ["G3", "G5", "P6", "P7"])
    play(state, "4+", "greed", "G3")
    assert state.phase == Phase.SWAP and state.to_act == JEKYLL
    assert state.picks_left == [2, 2]
    play(state, "W1", "W2")
    assert state.to_act == HYDE
    assert state.hands[JEKYLL] == hand("W1", "W2", "P1")  # nothing moves before both chose
    with pytest.raises(IllegalActionError, match="swap"):
        play(state, "W1")  # a card Hyde does not hold
    play(state, "P6", "P7")
    assert state.hands[JEKYLL] == hand("P1", "P6", "P7")
    assert state.hands[HYDE] == hand("G5", "W1", "W2")
    assert state.phase == Phase.LEAD and state.to_act == JEKYLL  # winner leads (T7)
    assert state.swap_given == [hand("W1", "W2"), hand("P6", "P7")]


def test_t6b_a_card_cannot_be_chosen_twice():
    state = trick_state(["4+", "W1", "W2"], ["G3", "G5", "P6"])
    play(state, "4+", "greed", "G3", "W1")
    assert card("W1") not in legal_actions(state)


def test_t6b_greed_with_one_card_left_swaps_one():
    state = trick_state(["4+", "W1"], ["G3", "P6"])
    play(state, "4+", "greed", "G3")
    assert state.phase == Phase.SWAP and state.picks_left == [1, 1]
    play(state, "W1", "P6")
    assert state.hands == [hand("P6"), hand("W1")]


def test_t6b_greed_on_the_last_trick_swaps_nothing():
    state = trick_state(["4+"], ["G3"])
    play(state, "4+", "greed", "G3")
    assert state.round == 2 and state.phase == Phase.EXCHANGE  # straight to the next round
    assert state.round_log[0].tricks[-1].effect == Effect.GREED


def test_t6c_wrath_clears_ranks_and_next_colour_is_weakest():
    state = trick_state(["2+", "G1", "P1"], ["W4", "G2", "P2"], ranks=(PRIDE, GREED, WRATH))
    play(state, "2+", "wrath", "W4")
    assert state.trick_log[-1].effect == Effect.WRATH
    assert state.ranks == []  # the Wrath card of this trick does not stay ranked
    play(state, "G2")  # Hyde won and leads; Greed becomes the weakest
    assert state.ranks == [GREED]


def test_t6_two_potions_have_no_effect():
    state = trick_state(
        ["2+", "P1", "W1"], ["5+", "P2", "W2"], ranks=(PRIDE, WRATH, GREED), tricks=(1, 1)
    )
    play(state, "2+", "greed", "5+")
    assert state.trick_log[-1].effect == Effect.NONE
    assert state.ranks == [PRIDE, WRATH, GREED] and state.tricks == [1, 2]
    assert state.phase == Phase.LEAD


def test_t6_no_potion_no_effect():
    state = trick_state(["G1", "P1"], ["G2", "P2"])
    play(state, "G1", "G2")
    assert state.trick_log[-1].effect == Effect.NONE and state.phase == Phase.LEAD


def test_t6_effect_follows_the_card_not_the_declared_colour():
    # Hyde lacks Wrath (declared) and answers a Greed card: the effect is Greed.
    state = trick_state(["3+", "P1", "P2"], ["G2", "P3", "P4"])
    play(state, "3+", "wrath", "G2")
    assert state.trick_log[-1].effect == Effect.GREED and state.phase == Phase.SWAP
