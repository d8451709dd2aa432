"""R2.1 deal and R2.2 exchange, the potion rule, and deal validation."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_env.engine import IllegalActionError, Phase, legal_actions, rules
from jekyll_hyde_env.engine.cards import ALL_CARDS, HYDE, JEKYLL, mask_to_ids

from .helpers import card, hand, play

JEKYLL_HAND = ["P1", "P2", "P3", "W1", "W2", "W3", "G1", "G2", "2+", "3+"]
HYDE_HAND = ["P4", "P5", "P6", "W4", "W5", "W6", "G3", "G4", "G5", "4+"]
ONE_POTION_HAND = ["P1", "P2", "P3", "W1", "W2", "W3", "G1", "G2", "G6", "2+"]


def deal(jekyll=JEKYLL_HAND, hyde=HYDE_HAND):
    return {"jekyll": [card(c) for c in jekyll], "hyde": [card(c) for c in hyde]}


def test_r2_1_deal_gives_ten_cards_each_and_sets_five_aside():
    state = rules.new_game(np.random.default_rng(7))
    for jekyll, hyde in state.deals:
        assert jekyll.bit_count() == 10 and hyde.bit_count() == 10 and not jekyll & hyde
    assert state.set_aside.bit_count() == 5
    assert state.hands[0] | state.hands[1] | state.set_aside == ALL_CARDS


def test_r2_1_same_seed_same_deals_other_seed_other_deals():
    a = rules.new_game(np.random.default_rng(3)).deals
    b = rules.new_game(np.random.default_rng(3)).deals
    c = rules.new_game(np.random.default_rng(4)).deals
    assert a == b and a != c


def test_fixed_deals_cover_the_first_rounds_and_the_rest_come_from_the_rng():
    state = rules.new_game(np.random.default_rng(0), deals=[deal()])
    assert state.hands == [hand(*JEKYLL_HAND), hand(*HYDE_HAND)]
    other = rules.new_game(np.random.default_rng(0), deals=[deal()])
    assert state.deals == other.deals
    with pytest.raises(ValueError, match="needs an rng"):
        rules.new_game(None, deals=[deal()])
    assert rules.new_game(None, deals=[deal()] * 3).deals[2] == state.deals[0]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"jekyll": [0] * 10}, "missing keys: \\['hyde'\\]"),
        ({**deal(), "set_aside": []}, "unknown keys: \\['set_aside'\\]"),
        ({**deal(), "hyde": [card(c) for c in HYDE_HAND[:9]]}, "hyde must get 10 cards, got 9"),
        ({**deal(), "hyde": [card(c) for c in HYDE_HAND[:9]] + [25]}, "card id 25 is unknown"),
        ({**deal(), "hyde": [card(c) for c in HYDE_HAND[:9]] + [card("P4")]}, "is repeated"),
        ({**deal(), "hyde": [card(c) for c in HYDE_HAND[:9]] + [card("P1")]}, "in both hands"),
        ({**deal(), "hyde": [card(c) for c in HYDE_HAND[:9]] + ["x"]}, "not an integer"),
        ([1, 2], "must be a mapping"),
    ],
)
def test_malformed_deal_names_the_problem(bad, message):
    with pytest.raises(ValueError, match=message):
        rules.new_game(np.random.default_rng(0), deals=[bad])


def test_too_many_deals_are_refused():
    with pytest.raises(ValueError, match="at most 3"):
        rules.new_game(np.random.default_rng(0), deals=[deal()] * 4)


def test_r2_2_exchange_jekyll_then_hyde_then_cards_change_hands_together():
    state = rules.new_game(np.random.default_rng(0), deals=[deal(jekyll=ONE_POTION_HAND)])
    assert state.phase == Phase.EXCHANGE and state.to_act == JEKYLL
    assert state.picks_left == [1, 1]  # round 1: one card each
    play(state, "G2")
    assert state.to_act == HYDE and state.hands[JEKYLL] == hand(*ONE_POTION_HAND)
    play(state, "G5")
    assert state.hands[JEKYLL] == hand(*ONE_POTION_HAND) ^ hand("G2") | hand("G5")
    assert state.hands[HYDE] == hand(*HYDE_HAND) ^ hand("G5") | hand("G2")
    assert state.exch_given == [hand("G2"), hand("G5")]
    assert state.phase == Phase.LEAD and state.to_act == JEKYLL


def test_r2_2_exchange_only_cards_of_the_hand():
    state = rules.new_game(np.random.default_rng(0), deals=[deal(jekyll=ONE_POTION_HAND)])
    assert legal_actions(state) == mask_to_ids(hand(*ONE_POTION_HAND))
    with pytest.raises(IllegalActionError, match="exchange"):
        play(state, "P4")


def test_r2_2_potion_rule_forces_a_potion_as_the_last_pick():
    # Jekyll was dealt 2+ and 3+: in round 1 (one pick) only a potion may be given.
    state = rules.new_game(np.random.default_rng(0), deals=[deal()])
    assert legal_actions(state) == [card("2+"), card("3+")]
    with pytest.raises(IllegalActionError, match="potion rule"):
        play(state, "P1")
    play(state, "3+")
    # Hyde holds a single potion: no constraint.
    assert legal_actions(state) == mask_to_ids(hand(*HYDE_HAND))


def test_r2_2_potion_rule_leaves_earlier_picks_free_in_later_rounds():
    state = rules.new_game(np.random.default_rng(0), deals=[deal(), deal(), deal()])
    state.round = 3
    rules._start_round(state)
    play(state, "P1")  # first of three picks: anything
    play(state, "W1")
    assert legal_actions(state) == [card("2+"), card("3+")]  # last pick: a potion
    state = rules.new_game(np.random.default_rng(0), deals=[deal(), deal(), deal()])
    state.round = 3
    rules._start_round(state)
    play(state, "2+", "P1")
    assert card("W1") in legal_actions(state)  # a potion was already chosen


def test_r2_2_a_card_cannot_be_picked_twice():
    state = rules.new_game(np.random.default_rng(0), deals=[deal(), deal()])
    state.round = 2
    rules._start_round(state)
    play(state, "2+")
    assert card("2+") not in legal_actions(state)
