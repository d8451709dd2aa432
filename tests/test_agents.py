"""Agents: legal play in both roles, the factory, and ISMCTS's use of information."""

from __future__ import annotations

import numpy as np
import pytest

import jekyll_hyde_agents
from jekyll_hyde_agents import HeuristicAgent, ISMCTSAgent, ISMCTSConfig, RandomAgent, make_agent
from jekyll_hyde_agents import rollout as rollout_module
from jekyll_hyde_arena import play_pair
from jekyll_hyde_env.engine import (
    apply_action,
    info_key,
    is_terminal,
    legal_actions,
    new_game,
    player_view,
    sample_world,
)
from jekyll_hyde_env.engine.variant import FULL


def play_checked(jekyll, hyde, seed, variant=FULL):
    """A game of ``variant`` in which every action must be legal; returns the winner."""
    state = new_game(np.random.default_rng(seed), variant=variant)
    seats = (jekyll, hyde)
    while not is_terminal(state):
        legal = legal_actions(state)
        action = seats[state.to_act].act(player_view(state, state.to_act), legal)
        assert action in legal
        apply_action(state, action)
    return state.winner


@pytest.mark.parametrize("spec", ["random", "heuristic", "ismcts:20"])
def test_agents_play_only_legal_actions_in_both_roles(spec):
    agent = make_agent(spec, seed=1)
    other = RandomAgent(seed=2)
    games = 3 if spec.startswith("ismcts") else 30
    for seed in range(games):
        play_checked(agent, other, seed)
        play_checked(other, agent, seed)


def test_factory_names_and_errors():
    assert {"random", "heuristic", "ismcts"} <= set(jekyll_hyde_agents.agent_names())
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    ismcts = make_agent("ismcts:123")
    assert isinstance(ismcts, ISMCTSAgent) and ismcts.config.num_simulations == 123
    with pytest.raises(ValueError, match=r"known names: \[.*'heuristic'.*\]"):
        make_agent("alphazero")
    with pytest.raises(ValueError, match="positive integer"):
        make_agent("ismcts:lots")
    with pytest.raises(ValueError, match="takes no argument"):
        make_agent("heuristic:3")


def test_random_agent_is_seeded():
    view = player_view(new_game(np.random.default_rng(0)), 0)
    legal = legal_actions(new_game(np.random.default_rng(0)))
    a, b = RandomAgent(seed=5), RandomAgent(seed=5)
    assert [a.act(view, legal) for _ in range(20)] == [b.act(view, legal) for _ in range(20)]


def test_heuristic_beats_random_clearly():
    heuristic, random_agent = HeuristicAgent(), RandomAgent()
    scores = [play_pair(heuristic, random_agent, 0, i).a_wins / 2 for i in range(150)]
    mean, half = np.mean(scores), 1.96 * np.std(scores) / np.sqrt(len(scores))
    assert mean - half > 0.5


def mid_game_state(seed=0, tricks=3):
    rng = np.random.default_rng(seed)
    state = new_game(rng)
    while len(state.trick_log) < tricks or state.phase != 1:
        moves = legal_actions(state)
        apply_action(state, moves[rng.integers(len(moves))])
    return state


def test_ismcts_decision_ignores_what_it_cannot_see():
    rng = np.random.default_rng(0)
    for seed in range(4):
        state = mid_game_state(seed)
        player = state.to_act
        view = player_view(state, player)
        other = sample_world(view, rng)  # the opponent's cards and later deals re-dealt
        assert other.hands[1 - player] != state.hands[1 - player] or other.deals != state.deals
        other_view = player_view(other, player)
        assert info_key(other_view) == info_key(view)
        config = ISMCTSConfig(num_simulations=300, verify_worlds=True)
        first = ISMCTSAgent(config, seed=9).act(view, legal_actions(state))
        second = ISMCTSAgent(config, seed=9).act(other_view, legal_actions(other))
        assert first == second


def test_ismcts_finds_the_only_move_that_saves_jekyll():
    # Round 3, marker 9, tricks 4-4, two tricks left: Jekyll must end 5-5 (R2.4).
    # Hyde leads Wrath 3. With Wrath 7 Jekyll wins this trick, then loses Wrath 1
    # to Pride 2 (Pride ranks above Wrath, T4/T5a): 5-5, Jekyll wins. With Wrath 1
    # Jekyll loses this trick and then Wrath 7 to Pride 2: 4-6, Hyde wins.
    from tests.engine.helpers import card, play, trick_state

    state = trick_state(
        ["W7", "W1"], ["W3", "P2"], tricks=(4, 4), marker=9, round_number=3, leader=1
    )
    play(state, "W3")
    assert legal_actions(state) == [card("W1"), card("W7")]
    agent = ISMCTSAgent(ISMCTSConfig(num_simulations=200), seed=0)
    assert agent.act(player_view(state, 0), legal_actions(state)) == card("W7")


def test_ismcts_time_budget_and_config_checks():
    state = mid_game_state(1)
    agent = ISMCTSAgent(ISMCTSConfig(num_simulations=10**7, time_budget=0.05), seed=0)
    agent.act(player_view(state, state.to_act), legal_actions(state))
    assert 0 < agent.last_simulations < 10**7
    for bad in (
        {"rollout": "greedy"},
        {"num_simulations": 0},
        {"uct_c": -1.0},
        {"time_budget": 0.0},
        {"final_policy": "best"},
    ):
        with pytest.raises(ValueError):
            ISMCTSConfig(**bad)


def test_ismcts_with_heuristic_rollouts_finds_the_saving_move():
    from tests.engine.helpers import card, play, trick_state

    state = trick_state(
        ["W7", "W1"], ["W3", "P2"], tricks=(4, 4), marker=9, round_number=3, leader=1
    )
    play(state, "W3")
    agent = ISMCTSAgent(ISMCTSConfig(num_simulations=60, rollout="heuristic"), seed=0)
    assert agent.act(player_view(state, 0), legal_actions(state)) == card("W7")
    mid = mid_game_state(3)
    assert agent.act(player_view(mid, mid.to_act), legal_actions(mid)) in legal_actions(mid)


def test_ismcts_runs_on_the_python_engine_without_the_c_core(monkeypatch):
    monkeypatch.setattr(rollout_module, "_core", None)
    monkeypatch.setattr(
        "jekyll_hyde_agents.ismcts.core_for", lambda state: (rollout_module.PythonCore, state)
    )
    state = mid_game_state(2)
    agent = ISMCTSAgent(ISMCTSConfig(num_simulations=30), seed=0)
    assert agent.act(player_view(state, state.to_act), legal_actions(state)) in legal_actions(state)
    assert agent.last_simulations == 30
