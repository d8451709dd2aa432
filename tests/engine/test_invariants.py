"""Thousands of seeded random games, checking the engine's invariants at every step."""

from __future__ import annotations

import numpy as np

from jekyll_hyde_env.engine import is_terminal, legal_action_mask, legal_actions, returns, rules
from jekyll_hyde_env.engine.cards import ALL_CARDS, HAND_SIZE, TRACK_END, Phase

GAMES = 2000


def test_invariants_hold_through_random_games():
    rng = np.random.default_rng(2026)
    winners = [0, 0]
    steps_max = 0
    for _ in range(GAMES):
        state = rules.new_game(rng)
        marker = 0
        steps = 0
        while not is_terminal(state):
            hands, played = state.hands, state.played
            # all 25 cards accounted for, in exactly one place
            places = [hands[0], hands[1], played[0], played[1], state.set_aside]
            assert sum(p.bit_count() for p in places) == 25
            assert places[0] | places[1] | places[2] | places[3] | places[4] == ALL_CARDS
            # hand sizes: equal except between a lead and its follow
            size = HAND_SIZE - len(state.trick_log)
            if state.lead_card >= 0:
                assert hands[state.leader].bit_count() == size - 1
                assert hands[1 - state.leader].bit_count() == size
            else:
                assert hands[0].bit_count() == hands[1].bit_count() == size
            assert sum(state.tricks) == len(state.trick_log)
            assert state.marker >= marker and state.marker < TRACK_END
            marker = state.marker
            moves = legal_actions(state)
            assert moves and legal_action_mask(state) != 0
            assert returns(state) == (0, 0)
            rules.apply_action(state, moves[rng.integers(len(moves))])
            steps += 1
        for result in state.round_log:
            assert result.tricks_jekyll + result.tricks_hyde == 10
            assert len(result.tricks) == 10
        assert state.phase == Phase.GAME_OVER and state.marker <= TRACK_END
        assert (state.marker == TRACK_END) == (state.winner == 1)
        assert len(state.round_log) <= 3
        assert returns(state) in ((1, -1), (-1, 1))
        winners[state.winner] += 1
        steps_max = max(steps_max, steps)
    assert winners[0] > 0 and winners[1] > 0
    assert steps_max <= 132  # the documented bound
