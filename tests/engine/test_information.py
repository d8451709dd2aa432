"""What each player knows: views hide exactly what RULES.md hides, worlds respect views."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_env.engine import (
    Phase,
    info_key,
    is_terminal,
    legal_actions,
    player_view,
    rules,
    sample_world,
)
from jekyll_hyde_env.engine.cards import ALL_CARDS, COLOUR_MASKS, HYDE, JEKYLL, POTIONS, WRATH

from .helpers import card, hand, play, trick_state


def random_positions(seed: int, games: int):
    """Every state along ``games`` random games."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = rules.new_game(rng)
        while not is_terminal(state):
            yield state
            moves = legal_actions(state)
            rules.apply_action(state, moves[rng.integers(len(moves))])
        yield state


def test_view_hides_the_opponent_hand_and_set_aside_cards():
    state = trick_state(["W7", "P1"], ["W2", "G4"])
    view = player_view(state, JEKYLL)
    assert view.hand == hand("W7", "P1") and view.opp_hand_size == 2
    other = trick_state(["W7", "P1"], ["G6", "P5"])  # Hyde holds other cards
    assert info_key(player_view(other, JEKYLL)) == info_key(view)
    assert info_key(player_view(other, HYDE)) != info_key(player_view(state, HYDE))


def test_pending_exchange_choice_is_hidden_from_the_opponent():
    state = rules.new_game(np.random.default_rng(2))
    before = info_key(player_view(state, HYDE))
    first, second = legal_actions(state)[:2]
    a, b = state.clone(), state.clone()
    rules.apply_action(a, first)
    rules.apply_action(b, second)
    assert info_key(player_view(a, HYDE)) == info_key(player_view(b, HYDE))
    assert info_key(player_view(a, HYDE)) != before  # the turn moved on, visibly
    assert info_key(player_view(a, JEKYLL)) != info_key(player_view(b, JEKYLL))


def test_given_cards_stay_known_until_played():
    state = trick_state(["4+", "W1", "W2", "P1"], ["G3", "G5", "P6", "P7"])
    play(state, "4+", "greed", "G3", "W1", "W2", "P6", "P7")
    view = player_view(state, JEKYLL)
    assert view.opp_known == hand("W1", "W2")
    assert view.swap_received == hand("P6", "P7")
    play(state, "P1")  # Jekyll leads Pride 1; Hyde must not follow with W1
    play(state, "W1")  # Hyde holds no Pride: any card (T3a)
    view = player_view(state, JEKYLL)
    assert view.opp_known == hand("W2") and view.opp_void == 1 << 0


def test_failing_to_follow_marks_the_colour_as_lacking():
    state = trick_state(["W4", "P1", "G1"], ["P2", "G5", "3+"])
    play(state, "W4", "P2")
    assert player_view(state, JEKYLL).opp_void == 1 << WRATH
    assert player_view(state, HYDE).void == 1 << WRATH
    state = trick_state(["W4", "P1", "G1"], ["W2", "G5", "3+"])
    play(state, "W4", "3+")  # a potion may answer a colour lead: no inference (T3a)
    assert player_view(state, JEKYLL).opp_void == 0


def test_sampled_worlds_reproduce_the_view_for_thousands_of_positions():
    rng = np.random.default_rng(11)
    checked = 0
    for state in random_positions(seed=5, games=60):
        for player in (JEKYLL, HYDE):
            view = player_view(state, player)
            world = sample_world(view, rng)
            assert player_view(world, player) == view
            assert (
                world.hands[0]
                | world.hands[1]
                | world.set_aside
                | world.played[0]
                | (world.played[1])
                == ALL_CARDS
            )
            assert world.set_aside.bit_count() == 5
            if state.to_act == player:
                assert legal_actions(world) == legal_actions(state)
            checked += 1
    assert checked > 5000


def test_sampled_worlds_play_on_to_the_end():
    rng = np.random.default_rng(3)
    for state in random_positions(seed=6, games=10):
        if is_terminal(state) or state.to_act < 0:
            continue
        world = sample_world(player_view(state, state.to_act), rng)
        while not is_terminal(world):
            moves = legal_actions(world)
            assert moves
            rules.apply_action(world, moves[rng.integers(len(moves))])


def test_sample_world_respects_voids_given_cards_and_the_potion_rule():
    rng = np.random.default_rng(0)
    state = trick_state(["W4", "W5", "P1", "G1"], ["P2", "G5", "G6", "P3"])
    play(state, "W4", "P2")  # Hyde shows it holds no Wrath
    view = player_view(state, JEKYLL)
    for _ in range(200):
        world = sample_world(view, rng)
        assert not world.hands[HYDE] & COLOUR_MASKS[WRATH]

    # After an exchange without a potion, the opponent was dealt at most one.
    state = rules.new_game(np.random.default_rng(4))
    while state.phase == Phase.EXCHANGE:
        moves = [m for m in legal_actions(state) if m < card("2+")] or legal_actions(state)
        rules.apply_action(state, moves[0])
    view = player_view(state, JEKYLL)
    if view.opp_gave_potion is False:
        for _ in range(200):
            world = sample_world(view, rng)
            jekyll_dealt, hyde_dealt = world.deals[0]
            assert (hyde_dealt & POTIONS).bit_count() <= 1
            assert jekyll_dealt == state.deals[0][JEKYLL]


def test_sample_world_draws_different_hidden_cards():
    state = rules.new_game(np.random.default_rng(9))
    view = player_view(state, JEKYLL)
    rng = np.random.default_rng(0)
    hands = {sample_world(view, rng).hands[HYDE] for _ in range(20)}
    assert len(hands) > 10


@pytest.mark.parametrize("seed", [0, 1])
def test_sample_world_is_reproducible_from_the_rng(seed):
    state = rules.new_game(np.random.default_rng(seed))
    view = player_view(state, HYDE)
    a = sample_world(view, np.random.default_rng(42))
    b = sample_world(view, np.random.default_rng(42))
    assert a == b
