"""T1-T5 and T7: leading, declaring, following, colour ranks and the trick winner."""

from __future__ import annotations

import pytest

from jekyll_hyde_env.engine import IllegalActionError, Phase, legal_actions, rules
from jekyll_hyde_env.engine.cards import GREED, HYDE, JEKYLL, PRIDE, WRATH, mask_to_ids

from .helpers import action, card, hand, play, trick_state


def test_t1_leader_may_lead_any_card():
    state = trick_state(["P1", "W7", "G3", "4+"], ["P2", "P3", "W1", "G2"])
    assert legal_actions(state) == mask_to_ids(hand("P1", "W7", "G3", "4+"))
    play(state, "P1")
    assert state.phase == Phase.FOLLOW and state.to_act == HYDE


def test_t2_potion_lead_asks_the_leader_to_declare_any_colour():
    state = trick_state(["4+", "P1"], ["W2", "W3"])
    play(state, "4+")
    assert state.phase == Phase.DECLARE and state.to_act == JEKYLL
    assert legal_actions(state) == [action("pride"), action("wrath"), action("greed")]
    play(state, "greed")  # a colour the leader does not hold
    assert state.declared == GREED and state.phase == Phase.FOLLOW and state.to_act == HYDE


def test_t3a_follower_with_the_colour_plays_it_or_a_potion():
    state = trick_state(["W4", "P1", "G1"], ["W2", "P5", "3+"])
    play(state, "W4")
    assert legal_actions(state) == mask_to_ids(hand("W2", "3+"))
    with pytest.raises(IllegalActionError, match="follow"):
        play(state, "P5")


def test_t3a_follower_without_the_colour_plays_anything():
    state = trick_state(["W4", "P1", "G1"], ["P2", "G5", "3+"])
    play(state, "W4")
    assert legal_actions(state) == mask_to_ids(hand("P2", "G5", "3+"))


def test_t3b_follower_with_declared_colour_must_play_it_and_no_potion():
    state = trick_state(["5+", "P1"], ["G2", "2+"])
    play(state, "5+", "greed")
    assert legal_actions(state) == [card("G2")]
    with pytest.raises(IllegalActionError, match=rf"legal actions are \[{card('G2')}\]"):
        play(state, "2+")


def test_t3b_follower_without_declared_colour_plays_anything_potion_included():
    state = trick_state(["5+", "P1"], ["W2", "2+"])
    play(state, "5+", "greed")
    assert legal_actions(state) == mask_to_ids(hand("W2", "2+"))


def test_t4_first_colour_is_weakest_second_middle_third_strongest_at_once():
    state = trick_state(["W1", "P1"], ["G7", "P2"])
    play(state, "W1")
    assert state.ranks == [WRATH]  # ranked as soon as it is played
    play(state, "G7")
    assert state.ranks == [WRATH, GREED, PRIDE]


def test_t4_potions_and_declared_colours_rank_nothing():
    state = trick_state(["4+", "P1"], ["2+", "P2"])
    play(state, "4+", "wrath", "2+")
    assert state.ranks == []


def test_t4_colour_card_played_against_a_potion_ranks_its_colour():
    state = trick_state(["4+", "P1"], ["G1", "P2"])
    play(state, "4+", "greed", "G1")
    assert state.ranks == [GREED]


def test_t4_ranks_are_set_before_the_trick_is_compared():
    # Nothing ranked: the leader's Pride becomes weakest, the follower's Wrath middle.
    state = trick_state(["P7", "G1"], ["W1", "G2"])
    play(state, "P7", "W1")
    assert state.trick_log[-1].winner == HYDE


def test_t5a_same_colour_higher_value_wins():
    state = trick_state(["W3", "G1"], ["W6", "G2"])
    play(state, "W3", "W6")
    assert state.trick_log[-1].winner == HYDE
    assert state.tricks == [0, 1]


def test_t5a_different_colours_higher_ranked_colour_wins_whatever_values():
    state = trick_state(["P7", "W1"], ["G1", "W2"], ranks=(PRIDE, WRATH, GREED))
    play(state, "P7", "G1")
    assert state.trick_log[-1].winner == HYDE
    state = trick_state(["G1", "W1"], ["P7", "W2"], ranks=(PRIDE, WRATH, GREED))
    play(state, "G1", "P7")
    assert state.trick_log[-1].winner == JEKYLL


@pytest.mark.parametrize(
    ("potion", "colour_card", "potion_wins"),
    [("3+", "W3", True), ("3+", "W4", False), ("2+", "P2", True), ("5+", "G6", False)],
)
def test_t5b_potion_counts_its_number_plus_one_half(potion, colour_card, potion_wins):
    # The colour card is led; ranks play no part.
    state = trick_state([colour_card, "P1"], [potion, "P2"], ranks=(GREED, PRIDE, WRATH))
    play(state, colour_card, potion)
    assert state.trick_log[-1].winner == (HYDE if potion_wins else JEKYLL)


def test_t5b_potion_led_against_colour_card():
    state = trick_state(["4+", "P1"], ["G5", "P2"])
    play(state, "4+", "greed", "G5")
    assert state.trick_log[-1].winner == HYDE
    state = trick_state(["4+", "P1"], ["G4", "P2"])
    play(state, "4+", "greed", "G4")
    assert state.trick_log[-1].winner == JEKYLL


def test_t5c_two_potions_higher_potion_wins():
    state = trick_state(["3+", "P1"], ["W1", "5+"])
    play(state, "3+", "wrath")
    assert legal_actions(state) == [card("W1")]  # T3b: wrath is held, so no potion
    state = trick_state(["3+", "P1"], ["G1", "5+"])
    play(state, "3+", "wrath", "5+")
    assert state.trick_log[-1].winner == HYDE


def test_t7_winner_of_a_trick_leads_the_next():
    state = trick_state(["W3", "G1", "P1"], ["W6", "G2", "P2"])
    play(state, "W3", "W6")
    assert state.phase == Phase.LEAD and state.to_act == HYDE and state.leader == HYDE
    play(state, "G2", "G1")
    assert state.to_act == HYDE and state.tricks == [0, 2]


def test_illegal_action_names_phase_action_and_legal_actions():
    state = trick_state(["W3", "G1"], ["W6", "G2"])
    with pytest.raises(IllegalActionError) as err:
        rules.apply_action(state, card("P5"))
    message = str(err.value)
    assert "phase 'lead'" in message and "pride 5" in message
    assert str(mask_to_ids(hand("W3", "G1"))) in message
    with pytest.raises(IllegalActionError, match="out of range"):
        rules.apply_action(state, 28)
    with pytest.raises(TypeError):
        rules.apply_action(state, 2.0)
    assert state.history == []  # nothing was applied
