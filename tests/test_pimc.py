"""PIMC: the C perfect-information solver against brute force, and the agent."""

from __future__ import annotations

import time

import numpy as np
import pytest

from jekyll_hyde_agents import HeuristicAgent, PIMCAgent, PIMCConfig, make_agent, rollout
from jekyll_hyde_agents.pimc import marker_values
from jekyll_hyde_env.engine import (
    apply_action,
    info_key,
    legal_actions,
    new_game,
    player_view,
    sample_world,
)
from jekyll_hyde_env.engine.cards import Phase
from tests.engine.helpers import card, play, trick_state
from tests.test_agents import mid_game_state, play_checked

pytestmark = pytest.mark.skipif(
    not rollout.core_available(), reason="the C core jekyll_hyde_agents._rollout is not compiled"
)

HYDE_WINS = 1.0


def brute_force_value(state, table, round_number):
    """Minimax over every legal action on the Python engine, to the end of the round.

    Hyde maximises; a finished game is worth its winner, a new round its table entry.
    """
    if state.phase == Phase.GAME_OVER:
        return float(state.winner)
    if state.round != round_number:
        return table[11 * state.round + state.marker]
    values = []
    for action in legal_actions(state):
        child = state.clone()
        apply_action(child, action)
        values.append(brute_force_value(child, table, round_number))
    return max(values) if state.to_act == 1 else min(values)


def endgame_positions(count, cards_left, seed):
    """Random positions with at most ``cards_left`` cards in each hand, swaps included."""
    rng = np.random.default_rng(seed)
    positions = []
    while len(positions) < count:
        state = new_game(rng)
        while state.phase != Phase.GAME_OVER:
            if state.phase != Phase.EXCHANGE and state.hands[0].bit_count() <= cards_left:
                positions.append(state.clone())
                break
            moves = legal_actions(state)
            apply_action(state, moves[rng.integers(len(moves))])
    return positions


def test_solver_matches_brute_force_minimax_on_endgames():
    # T1-T7 and R2.4 as the engine plays them; values from a table with no pattern,
    # so that any difference in the search shows.
    rng = np.random.default_rng(3)
    table = rng.random(44).tolist()
    positions = endgame_positions(120, 3, seed=8)
    phases = set()
    for state in positions:
        values, nodes = rollout._core.solve_round(rollout.to_core(state), table, 10**7)
        assert values is not None and nodes > 0
        legal = legal_actions(state)
        assert [a for a in range(28) if values[a] is not None] == legal
        for action in legal:
            child = state.clone()
            apply_action(child, action)
            expected = brute_force_value(child, table, state.round)
            assert values[action] == pytest.approx(expected, abs=1e-6), (state.history, action)
        phases.add(Phase(state.phase).name)
    assert {"LEAD", "FOLLOW"} <= phases


def test_solver_picks_greed_swap_cards_as_sets():
    # T6b: Greed swaps are searched as card sets in increasing order; the value must
    # still equal brute force over every order of picks.
    rng = np.random.default_rng(4)
    table = rng.random(44).tolist()
    found = 0
    game_rng = np.random.default_rng(21)
    while found < 12:
        state = new_game(game_rng)
        while state.phase != Phase.GAME_OVER:
            if state.phase == Phase.SWAP and state.hands[0].bit_count() <= 3:
                values, _ = rollout._core.solve_round(rollout.to_core(state), table, 10**7)
                for action in legal_actions(state):
                    child = state.clone()
                    apply_action(child, action)
                    expected = brute_force_value(child, table, state.round)
                    assert values[action] == pytest.approx(expected, abs=1e-6)
                found += 1
                break
            moves = legal_actions(state)
            apply_action(state, moves[game_rng.integers(len(moves))])


def test_solver_gives_up_past_its_node_budget_and_checks_its_input():
    state = new_game(np.random.default_rng(0))
    table = list(marker_values())
    values, nodes = rollout._core.solve_round(rollout.to_core(state), table, 1000)
    assert values is None and nodes > 1000
    with pytest.raises(ValueError, match="44 floats"):
        rollout._core.solve_round(rollout.to_core(state), table[:10], 1000)


def test_marker_values_rise_with_the_marker_and_end_at_hyde_win():
    table = marker_values()
    assert len(table) == 44
    for round_number in (1, 2, 3):
        row = table[11 * round_number : 11 * round_number + 11]
        assert row[10] == HYDE_WINS
        assert all(0.0 <= v <= 1.0 for v in row)
        assert row[0] < row[5] < row[9]
    # Later rounds leave Hyde less time: the same space is worth less (R2.4).
    assert table[11 * 3 + 4] < table[11 * 2 + 4] < table[11 * 1 + 4]


def test_pimc_finds_the_only_move_that_saves_jekyll():
    # Round 3, marker 9, tricks 4-4: Jekyll must take exactly one of the last two
    # tricks (R2.4). Hyde leads Wrath 3; only Wrath 7 does it (T4, T5a).
    state = trick_state(
        ["W7", "W1"], ["W3", "P2"], tricks=(4, 4), marker=9, round_number=3, leader=1
    )
    play(state, "W3")
    agent = PIMCAgent(PIMCConfig(num_worlds=10), seed=0)
    assert agent.act(player_view(state, 0), legal_actions(state)) == card("W7")
    assert agent.last_worlds == 10 and not agent.last_fallback


def test_pimc_decision_ignores_what_it_cannot_see():
    rng = np.random.default_rng(0)
    for seed in range(4):
        state = mid_game_state(seed, tricks=6)
        player = state.to_act
        view = player_view(state, player)
        other = sample_world(view, rng)
        assert other.hands[1 - player] != state.hands[1 - player] or other.deals != state.deals
        other_view = player_view(other, player)
        assert info_key(other_view) == info_key(view)
        config = PIMCConfig(num_worlds=8)
        first = PIMCAgent(config, seed=9).act(view, legal_actions(state))
        second = PIMCAgent(config, seed=9).act(other_view, legal_actions(other))
        assert first == second


def test_pimc_falls_back_to_the_heuristic_when_no_world_fits_the_budget():
    state = new_game(np.random.default_rng(5))  # round 1 exchange: far too big to solve
    view, legal = player_view(state, 0), legal_actions(state)
    agent = PIMCAgent(PIMCConfig(num_worlds=20, max_nodes=5000), seed=0)
    assert agent.act(view, legal) == HeuristicAgent().act(view, legal)
    assert agent.last_fallback and agent.last_worlds == 0 and agent.last_given_up == 1


def test_pimc_plays_only_legal_actions_in_both_roles():
    agent = PIMCAgent(PIMCConfig(num_worlds=4, max_nodes=100_000), seed=1)
    other = make_agent("random", seed=2)
    for seed in range(2):
        play_checked(agent, other, seed)
        play_checked(other, agent, seed)


def test_pimc_time_budget_bounds_a_decision():
    state = mid_game_state(1, tricks=6)
    marker_values()  # computed once per process; not part of a decision
    agent = PIMCAgent(PIMCConfig(num_worlds=10**6, time_budget=0.05), seed=0)
    start = time.perf_counter()
    agent.act(player_view(state, state.to_act), legal_actions(state))
    assert time.perf_counter() - start < 1.0
    assert 0 < agent.last_worlds < 10**6


def test_factory_names_with_counts_and_time_budgets():
    pimc = make_agent("pimc:7")
    assert isinstance(pimc, PIMCAgent) and pimc.config.num_worlds == 7
    assert pimc.name == "pimc:7"
    timed = make_agent("pimc:0.05s")
    assert timed.config.time_budget == 0.05 and timed.name == "pimc:0.05s"
    ismcts = make_agent("ismcts:0.02s")
    assert ismcts.config.time_budget == 0.02 and ismcts.name == "ismcts:0.02s"
    for bad in ("pimc:0s", "pimc:fast", "ismcts:-1s", "pimc:0", "ismcts:infs"):
        with pytest.raises(ValueError, match="positive"):
            make_agent(bad)
    for bad in ({"num_worlds": 0}, {"max_nodes": 0}, {"time_budget": -1.0}, {"aggregate": "x"}):
        with pytest.raises(ValueError):
            PIMCConfig(**bad)
