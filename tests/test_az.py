"""Network-guided search (az:N) and the value head of the policy format."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jekyll_hyde_agents import AZAgent, AZConfig, PolicyAgent, PolicyFileError, make_agent, rollout
from jekyll_hyde_agents.policy_file import read_policy, save_policy
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game
from jekyll_hyde_env.engine.information import player_view, sample_world
from jekyll_hyde_env.observation import encode

from .test_agents import play_checked
from .test_policy_file import tiny_policy

pytestmark = pytest.mark.skipif(
    not rollout.core_available(), reason="the C core jekyll_hyde_agents._rollout is not compiled"
)


def value_policy(folder, hidden=(32, 24), activation="relu", seed=0):
    """A random two-role policy with a value head."""
    rng = np.random.default_rng(seed)
    groups, values = {}, {}
    for group in ("jekyll", "hyde"):
        layers, size = [], 327
        for width in (*hidden, 28):
            weight = rng.normal(0, 1 / np.sqrt(size), (width, size))
            layers.append((weight, rng.normal(0, 0.1, width)))
            size = width
        groups[group] = layers
        last = hidden[-1]
        values[group] = (rng.normal(0, 1 / np.sqrt(last), last), rng.normal(0, 0.1, 1))
    save_policy(folder, groups, {"jekyll": "jekyll", "hyde": "hyde"}, activation, values=values)
    return folder


def game_views(games: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    views = []
    for _ in range(games):
        state = new_game(rng)
        while not is_terminal(state):
            views.append(player_view(state, state.to_act))
            moves = legal_actions(state)
            apply_action(state, moves[rng.integers(len(moves))])
    return views


@pytest.mark.parametrize(
    "activation, hidden",
    # 144 and 80 wide: whole blocks of 64 outputs and a rest (agents/_net.h); 24: a padded row
    [("relu", (32, 24)), ("tanh", (32, 24)), ("relu", (144, 80, 16))],
)
def test_the_c_forward_pass_matches_the_numpy_policy(tmp_path, activation, hidden):
    from jekyll_hyde_agents import _rollout

    value_policy(tmp_path, hidden=hidden, activation=activation)
    policy = PolicyAgent(tmp_path)
    agent = AZAgent(policy)
    views = game_views(30)
    assert len(views) > 2000
    for view in views:
        role = ("jekyll", "hyde")[view.player]
        observation = encode(view)
        logits, value = _rollout.net_forward(agent._nets[view.player], observation.tobytes())
        np.testing.assert_allclose(logits, policy.logits(observation, role), rtol=1e-4, atol=1e-4)
        assert value == pytest.approx(policy.value(observation, role), abs=1e-5)


def test_a_network_without_hidden_layers_gives_its_logits_and_no_value():
    from jekyll_hyde_agents import _rollout

    rng = np.random.default_rng(3)
    weight = rng.normal(0, 0.1, (28, 327)).astype(np.float32)
    bias = rng.normal(0, 0.1, 28).astype(np.float32)
    net = _rollout.make_net([(weight, bias, 28, 327)], True, None)
    for view in game_views(2):
        observation = encode(view)
        logits, value = _rollout.net_forward(net, observation.tobytes())
        expected = weight @ observation.astype(np.float32) + bias
        np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
        assert value == 0.0
    with pytest.raises(ValueError, match="at least one hidden layer"):
        _rollout.make_net([(weight, bias, 28, 327)], True, (np.zeros(28, np.float32), 0.0))


def test_value_heads_round_trip_and_version_one_files_still_load(tmp_path):
    value_policy(tmp_path / "v2")
    saved = read_policy(tmp_path / "v2")
    assert saved.metadata["format_version"] == 2 and saved.metadata["value_head"] is True
    assert saved.values["jekyll"][0].shape == (24,)
    tiny_policy(tmp_path / "v1")
    meta = json.loads((tmp_path / "v1" / "policy.json").read_text())
    meta["format_version"] = 1
    del meta["value_head"]
    (tmp_path / "v1" / "policy.json").write_text(json.dumps(meta))
    old = PolicyAgent(tmp_path / "v1")
    assert not old.has_value_head


def test_a_promised_value_head_that_is_missing_is_refused(tmp_path):
    tiny_policy(tmp_path)
    meta = json.loads((tmp_path / "policy.json").read_text())
    meta["value_head"] = True
    (tmp_path / "policy.json").write_text(json.dumps(meta))
    with pytest.raises(PolicyFileError, match="promises a value head"):
        PolicyAgent(tmp_path)


def test_search_without_a_value_head_is_refused_unless_it_plays_out(tmp_path):
    tiny_policy(tmp_path)
    with pytest.raises(PolicyFileError, match="no value head"):
        AZAgent(tmp_path)
    agent = AZAgent(tmp_path, AZConfig(num_simulations=50, value_weight=0.0), seed=1)
    view = game_views(1)[3]
    assert agent.act(view, legal_actions_of(view)) in legal_actions_of(view)


def legal_actions_of(view):
    world = sample_world(view, np.random.default_rng(0))
    return legal_actions(world)


def test_az_plays_only_legal_moves_in_both_roles(tmp_path):
    value_policy(tmp_path)
    agent = make_agent(f"az:40,policy={tmp_path}", seed=0)
    other = make_agent("random", seed=1)
    for seed in range(3):
        assert play_checked(agent, other, seed) in (0, 1)
        assert play_checked(other, agent, seed) in (0, 1)


def test_the_decision_depends_only_on_what_the_player_sees(tmp_path):
    value_policy(tmp_path)
    rng = np.random.default_rng(4)
    for view in game_views(2, seed=4)[::17]:
        other = player_view(sample_world(view, rng), view.player)
        first = AZAgent(tmp_path, AZConfig(num_simulations=120), seed=9).search(view)
        second = AZAgent(tmp_path, AZConfig(num_simulations=120), seed=9).search(other)
        assert np.array_equal(first.visits, second.visits)
        assert first.simulations == second.simulations == 120


def test_the_root_visits_add_up_and_follow_the_priors_with_few_simulations(tmp_path):
    value_policy(tmp_path)
    agent = AZAgent(tmp_path, AZConfig(num_simulations=300), seed=2)
    view = next(v for v in game_views(1, seed=2) if v.phase == 1 and bin(v.hand).count("1") > 5)
    result = agent.search(view)
    assert result.visits.sum() == 300
    assert result.policy.sum() == pytest.approx(1.0)
    legal = np.flatnonzero(result.visits)
    assert set(legal) <= set(legal_actions_of(view))
    timed = AZAgent(tmp_path, AZConfig(num_simulations=10**7, time_budget=0.03), seed=0)
    timed.search(view)
    assert 0 < timed.last_simulations < 10**7


def test_az_with_playouts_beats_random(tmp_path):
    from jekyll_hyde_arena import evaluate

    value_policy(tmp_path)
    report = evaluate(f"az:100,policy={tmp_path},value_weight=0", "random", 20, seed=3, workers=1)
    assert report.score > 0.7


def test_who_plays_the_playouts_changes_the_leaf_values(tmp_path):
    """With value_weight=0 a leaf's value is its one playout's result, so the
    root's values follow who plays the playouts; az with heuristic playouts plays
    legal moves in both roles."""
    value_policy(tmp_path)
    view = next(v for v in game_views(1, seed=6) if v.phase == 1 and bin(v.hand).count("1") > 4)
    config = AZConfig(num_simulations=200, value_weight=0.0, playouts="heuristic")
    heuristic = AZAgent(tmp_path, config, seed=5).search(view)
    random_config = AZConfig(num_simulations=200, value_weight=0.0, playouts="random")
    random = AZAgent(tmp_path, random_config, seed=5).search(view)
    assert heuristic.visits.sum() == random.visits.sum() == 200
    assert not np.allclose(heuristic.values, random.values)
    spec = f"az:30,policy={tmp_path},value_weight=0.5,playouts=heuristic"
    assert make_agent(spec).config.playouts == "heuristic"
    agent = make_agent(f"az:40,policy={tmp_path},value_weight=0.5,playouts=heuristic", seed=0)
    other = make_agent("heuristic", seed=1)
    for seed in range(2):
        assert play_checked(agent, other, seed) in (0, 1)
        assert play_checked(other, agent, seed) in (0, 1)


GUMBEL_C_VISIT, GUMBEL_C_SCALE = 50.0, 0.1  # agents/_az.h's constants of sigma


def test_gumbel_root_selection_shares_the_simulations_among_k_sampled_actions(tmp_path):
    """Sequential halving among at most K sampled actions: every simulation goes
    to one of them and the move is the most visited (the last one standing)."""
    value_policy(tmp_path)
    views = [v for v in game_views(3, seed=8) if bin(v.hand).count("1") > 5][:12]
    assert len(views) == 12
    for index, view in enumerate(views):
        legal = legal_actions_of(view)
        config = AZConfig(num_simulations=64, value_weight=0.5, gumbel=4)
        result = AZAgent(tmp_path, config, seed=index).search(view)
        visited = np.flatnonzero(result.visits)
        assert result.visits.sum() == result.simulations == 64
        assert 1 <= len(visited) <= 4 and set(visited) <= set(legal)
        assert result.choice in visited
        assert result.visits[result.choice] == result.visits.max()
        assert result.policy.sum() == pytest.approx(1.0, abs=1e-5)
        assert set(np.flatnonzero(result.policy)) == set(legal)
        assert AZAgent(tmp_path, config, seed=index).act(view, legal) == result.choice


def test_a_gumbel_search_cut_by_the_clock_plays_its_most_visited_candidate(tmp_path):
    """A server caps every search's time: a cut Gumbel search still plays an action
    it simulated, the most visited, never one it did not try."""
    value_policy(tmp_path)
    view = next(v for v in game_views(1, seed=2) if v.phase == 1 and bin(v.hand).count("1") > 5)
    config = AZConfig(num_simulations=10**6, time_budget=0.02, value_weight=0.5, gumbel=8)
    result = AZAgent(tmp_path, config, seed=3).search(view)
    assert 0 < result.simulations < 10**6
    assert result.visits[result.choice] == result.visits.max() > 0


def test_gumbels_policy_target_is_the_softmax_of_log_prior_plus_sigma_of_rescaled_q(tmp_path):
    """With K at least the legal actions every one is visited, so the target is
    softmax(log P + sigma(Q)) with Q each action's mean value rescaled to [0, 1]
    over the legal actions, and sigma(Q) = (50 + most visits) * 0.1 * Q."""
    value_policy(tmp_path)
    views = [v for v in game_views(3, seed=9) if bin(v.hand).count("1") > 4][:10]
    for index, view in enumerate(views):
        legal = legal_actions_of(view)
        config = AZConfig(num_simulations=100, value_weight=0.5, gumbel=len(legal))
        result = AZAgent(tmp_path, config, seed=index).search(view)
        assert set(np.flatnonzero(result.visits)) == set(legal)  # all of them tried
        q = result.values[legal] / result.visits[legal]
        rescaled = (q - q.min()) / max(q.max() - q.min(), 1e-8)
        sigma = (GUMBEL_C_VISIT + result.visits.max()) * GUMBEL_C_SCALE * rescaled
        priors = result.priors[legal] / result.priors[legal].sum()
        expected = np.exp(np.log(priors) + sigma - (np.log(priors) + sigma).max())
        np.testing.assert_allclose(result.policy[legal], expected / expected.sum(), rtol=1e-4)


def test_gumbel_root_selection_improves_on_the_priors_toward_the_better_action(tmp_path):
    """With many simulations sigma(Q) dominates: the policy target puts most of
    its mass on the action whose searched value is highest, whatever the priors."""
    value_policy(tmp_path)
    view = next(v for v in game_views(1, seed=2) if v.phase == 1 and bin(v.hand).count("1") > 5)
    config = AZConfig(num_simulations=800, value_weight=0.5, gumbel=len(legal_actions_of(view)))
    result = AZAgent(tmp_path, config, seed=1).search(view)
    q = np.where(result.visits > 0, result.values / np.maximum(result.visits, 1), -1)
    assert int(np.argmax(result.policy)) == int(np.argmax(q))
    priors = result.priors[legal_actions_of(view)]
    assert result.policy.max() > priors.max() / priors.sum()  # sharper than the network's


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("az:0,policy=x", "positive integer"),
        ("az:100,policy=x,gumbel=many", "gumbel must be a whole number .* from 0 to 28"),
        ("az:100,policy=x,gumbel=29", "gumbel must be 0 .* from 1 to 28, got 29"),
        ("az:0.1s,policy=x,gumbel=8", "gumbel needs a number of simulations"),
        ("az:100,policy=x,playouts=greedy", "playouts must be one of"),
        ("az:100,policy=x,playouts=heuristic", "needs value_weight < 1"),
        ("az:100,policy=x,depth=3", "options are policy=PATH"),
        ("az:100,policy=x,c=high", "must be numbers"),
    ],
)
def test_bad_az_names_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)
