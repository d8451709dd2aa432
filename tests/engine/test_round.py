"""R1-R4: rounds, the progression of Evil, the first leader and rewards."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_env.engine import Phase, is_terminal, legal_actions, returns, rules
from jekyll_hyde_env.engine.cards import HYDE, JEKYLL, TRACK_END

from .helpers import play, trick_state


def test_r2_4_marker_moves_by_the_trick_difference_whoever_won_more():
    state = trick_state(["W1"], ["W2"], tricks=(2, 7), marker=1)
    play(state, "W1", "W2")  # Hyde ends with 8 tricks against 2
    assert state.marker == 1 + 6 and state.round == 2
    state = trick_state(["W7"], ["W2"], tricks=(7, 2), marker=1)
    play(state, "W7", "W2")  # Jekyll winning more also moves the marker towards Hyde
    assert state.marker == 1 + 6


def test_r2_4_equal_tricks_leave_the_marker():
    state = trick_state(["W7"], ["W2"], tricks=(4, 5), marker=3)
    play(state, "W7", "W2")
    assert state.marker == 3 and state.round == 2
    assert state.round_log[-1][:3] == (5, 5, 3)


def test_r2_4_hyde_wins_at_once_on_reaching_space_ten_and_marker_is_capped():
    state = trick_state(["W1"], ["W2"], tricks=(0, 9), marker=4)
    play(state, "W1", "W2")
    assert is_terminal(state) and state.winner == HYDE
    assert state.marker == TRACK_END and state.round == 1
    assert returns(state) == (-1, 1)
    assert legal_actions(state) == [] and state.to_act == -1


def test_r1_jekyll_wins_after_round_three():
    state = trick_state(["W7"], ["W2"], tricks=(4, 5), marker=8, round_number=3)
    play(state, "W7", "W2")
    assert is_terminal(state) and state.winner == JEKYLL and state.marker == 8
    assert returns(state) == (1, -1)
    with pytest.raises(rules.IllegalActionError, match="game is over"):
        rules.apply_action(state, 0)


def test_r2_next_round_clears_ranks_and_deals_again():
    state = trick_state(["W7"], ["W2"], ranks=(0, 1, 2), tricks=(5, 4))
    play(state, "W7", "W2")
    assert state.round == 2 and state.phase == Phase.EXCHANGE and state.ranks == []
    jekyll, hyde = state.deals[1]
    assert state.hands == [jekyll, hyde] and state.tricks == [0, 0]
    assert state.picks_left == [2, 2]  # round 2 exchanges 2 cards each


@pytest.mark.parametrize(("marker", "leader"), [(0, JEKYLL), (4, JEKYLL), (5, HYDE), (9, HYDE)])
def test_r3_first_leader_follows_the_marker_side(marker, leader):
    state = trick_state(["W7"], ["W2"], tricks=(4, 5), marker=marker)
    play(state, "W7", "W2")  # 5-5: the marker stays
    for _ in range(4):  # both exchange 2 cards in round 2
        rules.apply_action(state, legal_actions(state)[0])
    assert state.marker == marker
    assert state.phase == Phase.LEAD and state.to_act == leader


def test_r3_round_one_is_led_by_jekyll():
    state = rules.new_game(np.random.default_rng(0))
    for _ in range(2):
        rules.apply_action(state, legal_actions(state)[0])
    assert state.phase == Phase.LEAD and state.to_act == JEKYLL


def test_a_game_can_open_at_a_later_round_and_marker():
    # R2.1-R2.2 for round 3 (three cards each to exchange), R3 for the marker's side.
    deals = [rules.deal_from_rng(np.random.default_rng(s)) for s in range(3)]
    state = rules.start_from_masks(deals, round_number=3, marker=6)
    assert (state.round, state.marker, state.phase) == (3, 6, Phase.EXCHANGE)
    assert state.hands == list(deals[2]) and state.picks_left == [3, 3]
    for _ in range(6):
        rules.apply_action(state, legal_actions(state)[0])
    assert state.phase == Phase.LEAD and state.to_act == HYDE
    with pytest.raises(ValueError, match=r"round_number must be in 1\.\.3"):
        rules.start_from_masks(deals, round_number=4)
    with pytest.raises(ValueError, match=r"marker must be in 0\.\.9"):
        rules.start_from_masks(deals, marker=TRACK_END)


def test_r4_rewards_are_zero_until_the_end():
    rng = np.random.default_rng(1)
    state = rules.new_game(rng)
    while not is_terminal(state):
        assert returns(state) == (0, 0)
        moves = legal_actions(state)
        rules.apply_action(state, moves[rng.integers(len(moves))])
    assert sorted(returns(state)) == [-1, 1]
