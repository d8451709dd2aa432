"""Self-play labelled in C (jekyll_hyde_agents.self_play) against the Python loop of
jekyll_hyde_train.expert_iteration.distill."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_agents import ISMCTSAgent, ISMCTSConfig, make_agent
from jekyll_hyde_agents.rollout import search_spec, to_core
from jekyll_hyde_agents.self_play import MAX_DECISIONS, label_game_in_core, runs_in_core
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.rules import apply_action, is_terminal, legal_actions, new_game
from jekyll_hyde_train.expert_iteration.distill import label_game
from tests.test_az import value_policy

_rollout = pytest.importorskip(
    "jekyll_hyde_agents._rollout", reason="the compiled search core is not built"
)


def random_states(games: int, seed: int):
    """Every state of ``games`` uniformly random games, the finished ones included."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = new_game(rng)
        yield state.clone()
        while not is_terminal(state):
            moves = legal_actions(state)
            apply_action(state, moves[rng.integers(len(moves))])
            yield state.clone()


def test_the_cores_spec_of_a_view_is_the_spec_of_the_python_view():
    compared = 0
    for state in random_states(150, seed=3):
        for player in (0, 1):  # the player to act's view and the one waiting
            expected = search_spec(player_view(state, player))
            assert _rollout.view_spec(to_core(state), player) == expected
            compared += 1
    assert compared > 20_000
    with pytest.raises(ValueError, match="player must be 0 .* or 1 .*, got 2"):
        _rollout.view_spec(to_core(state), 2)


def assert_same_labels(core, python):
    assert list(core) == list(python)  # the same arrays, in the same order
    for key in ("obs", "mask", "target", "role", "outcome"):
        assert core[key].dtype == python[key].dtype and np.array_equal(core[key], python[key]), key
    # the search's value sums the root's children in another order: float32 rounding apart
    np.testing.assert_allclose(core["search_value"], python["search_value"], rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "teacher", ["ismcts:40", "az:40", "az:40,value_weight=0.5", "az:24,gumbel=8,value_weight=0.5"]
)
def test_a_game_labelled_in_c_is_the_python_loops_game(tmp_path, teacher):
    if teacher.startswith("az"):
        teacher += f",policy={value_policy(tmp_path)}"
    agents = make_agent(teacher), make_agent(teacher)
    assert all(runs_in_core(agent) for agent in agents)
    rows = 0
    for deal in range(4):
        for agent in agents:
            agent.reset(deal + 50)
        core = label_game(agents[0], deal)
        python = label_game(agents[1], deal, in_core=False)
        assert_same_labels(core, python)
        rows += len(core["role"])
        # the searches drew as many seeds in both loops: the next game starts alike
        assert agents[0].search_rng.bit_generator.state == agents[1].search_rng.bit_generator.state
    assert rows > 100


@pytest.mark.parametrize("gumbel", [0, 4])
def test_network_moves_and_the_playout_cap_in_c_match_the_python_loop(tmp_path, gumbel):
    teacher = f"az:30,policy={value_policy(tmp_path)},gumbel={gumbel}"
    for deal in range(3):
        for network_moves, share, fast in ((True, 1.0, 0), (False, 0.3, 4), (True, 0.5, 2)):
            core_agent = make_agent(teacher, seed=deal)
            python_agent = make_agent(teacher, seed=deal)
            core = label_game(core_agent, deal, network_moves, share, fast)
            python = label_game(python_agent, deal, network_moves, share, fast, in_core=False)
            assert_same_labels(core, python)
            assert (
                core_agent.search_rng.bit_generator.state
                == python_agent.search_rng.bit_generator.state
            )


def test_teachers_whose_search_is_not_in_c_are_refused_or_played_in_python():
    heuristic_playouts = ISMCTSAgent(ISMCTSConfig(num_simulations=10, rollout="heuristic"))
    assert not runs_in_core(heuristic_playouts)
    assert not runs_in_core(make_agent("heuristic"))  # no search at all
    with pytest.raises(ValueError, match="does not run in the compiled core"):
        label_game_in_core(heuristic_playouts, new_game(np.random.default_rng(0)), False, 1, 0, [])
    labels = label_game(heuristic_playouts, 0)  # the Python loop plays it
    assert len(labels["role"]) > 0
    with pytest.raises(ValueError, match="network moves need a network-guided teacher"):
        label_game(make_agent("ismcts:10"), 0, network_moves=True)


def test_the_core_names_bad_arguments():
    state = to_core(new_game(np.random.default_rng(0)))
    seeds = np.arange(MAX_DECISIONS, dtype=np.uint64).tobytes()
    arguments = [state, seeds, b"", 0, 20, 0, 1.0, 0.0, None, None, 0.0, 0.0, 0, 0, 1.0]

    def call(**changes):
        names = ["state", "seeds", "uniforms", "kind", "n", "fast_n", "c", "budget"]
        given = list(arguments)
        for name, value in changes.items():
            given[names.index(name)] = value
        return _rollout.label_game(*given)

    assert call()[5] in (0, 1)  # a winner
    with pytest.raises(ValueError, match="more than the 3 seeds"):
        call(seeds=seeds[:24])
    with pytest.raises(ValueError, match=r"teacher kind must be 0 \(ismcts\) or 1 \(az\), got 7"):
        call(kind=7)
    with pytest.raises(ValueError, match="n >= 1"):
        call(n=0)
    with pytest.raises(TypeError, match="an az teacher needs two networks from make_net"):
        call(kind=1)
    with pytest.raises(ValueError, match="Gumbel root selection need an az teacher"):
        _rollout.label_game(*arguments, 4)
    net = _rollout.make_net(
        [(np.zeros((28, 327), np.float32), np.zeros(28, np.float32), 28, 327)], 1, None
    )
    with pytest.raises(ValueError, match=r"value_weight and fpu in \[0, 1\]"):
        _rollout.label_game(state, seeds, b"", 1, 20, 0, 1.0, 0.0, net, net, 1.5, 0.5, 0, 0, 1.0)
    with pytest.raises(ValueError, match="value_weight > 0 needs networks with a value head"):
        _rollout.label_game(state, seeds, b"", 1, 20, 0, 1.0, 0.0, net, net, 0.5, 0.5, 0, 0, 1.0)
    labels = _rollout.label_game(
        state, seeds, b"", 1, 20, 0, 1.0, 0.0, net, net, 0.0, 0.5, 0, 0, 1.0
    )
    assert labels[5] in (0, 1)  # playouts alone need no value head
